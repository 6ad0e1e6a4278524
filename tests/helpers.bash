# Shared set-up for the tooling tests: a scratch project state (BUILD,
# ARTIFACTS, PATCHES) in a temporary directory and a tiny fake kernel
# source tarball, so the real scripts run in seconds.
TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export TOP
# The per-user caches (compiler, source, guest programs, kselftests) of
# the scripts under test are the test's own, never the user's: a fake
# kernel tarball has the real one's name and version.
# (The caller's per-user cache, found as scripts/lib.sh finds it, keeps
# only what the tests themselves cache: tests/tooling/shellcheck.bats'
# verdicts, keyed by content.)
if [ -z "${USER_PIPELINE_CACHE:-}" ]; then
	if [ -n "${PIPELINE_CACHE:-}" ]; then
		USER_PIPELINE_CACHE=$PIPELINE_CACHE
	elif [ -n "${XDG_CACHE_HOME:-}${HOME:-}" ]; then
		USER_PIPELINE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/kernel-pipeline
	else
		USER_PIPELINE_CACHE=$TOP/build/cache
	fi
	export USER_PIPELINE_CACHE
fi
export PIPELINE_CACHE=${BATS_TEST_TMPDIR:-${BATS_RUN_TMPDIR:-/tmp}}/pipeline-cache
unset CCACHE_DIR

# The tests' own Python (python3 -c, python3 - <<PY) is Debian's, as the
# entry points' is (scripts/deps/check.txt: python3, python3-yaml): a
# pyenv or venv shim first on PATH costs 0.4 s of CPU a call against
# 0.04 s, and has not what apt installed.
python3() { /usr/bin/python3 "$@"; }

# scripts/pipeline config, shorter.
V() { "$TOP/scripts/pipeline" config "$@"; }

# A scratch configs/ with the given variant files (NAME:LINE|LINE...).
cfg() {
	export CONFIGS=$BATS_TEST_TMPDIR/configs
	mkdir -p "$CONFIGS"
	echo 'CONFIG_BASE=y' >"$CONFIGS/base.config"
	local spec
	for spec in "$@"; do
		tr '|' '\n' <<<"${spec#*:}" >"$CONFIGS/${spec%%:*}.variant"
	done
}

scratch() {
	export BUILD=$BATS_TEST_TMPDIR/build ARTIFACTS=$BATS_TEST_TMPDIR/artifacts
	export PATCHES=$BATS_TEST_TMPDIR/patches RESULTS=$BATS_TEST_TMPDIR/results
	mkdir -p "$BUILD" "$ARTIFACTS" "$PATCHES"
}

# A fake linux-source tarball: one C file, Debian's .gitignore block that
# ignores every top-level path, and the parts of a kernel tree the build
# scripts use, faked so that a "kernel build" takes milliseconds: a
# Makefile with tinyconfig, olddefconfig (it drops CONFIG_NEEDS_MISSING, as
# Kconfig drops an option whose dependencies are missing), all (fails on
# CONFIG_BREAK_BUILD=y, or FAKE_NO_BUILD in kernel/foo.c; the bzImage is
# the .config and kernel/foo.c, so that the fake QEMU can see a
# FAKE_BREAK there) and headers_install; merge_config.sh;
# streamline_config.pl (localmodconfig); the
# selftests' kselftest_harness.h; one UAPI header; a decode_stacktrace.sh
# that turns a frame "name+0x1/0x2" into "name (kernel/foo.c:4)".
fake_source() { # [DIR], default the test's own temporary directory
	local base=${1:-$BATS_TEST_TMPDIR}
	local d=$base/src/linux-source-6.12
	mkdir -p "$d/kernel" "$d/scripts/kconfig" "$d/tools/testing/selftests" "$d/include/uapi/linux"
	printf 'int one(void)\n{\n\treturn 1;\n}\n\nint two(void)\n{\n\treturn 2;\n}\n' >"$d/kernel/foo.c"
	printf '*.o\n#\n# Debian packaging: ignore everything at the top level, since it isn'"'"'t\n# included in our repository\n#\n/*\n!/debian/\n' >"$d/.gitignore"
	cat >"$d/Makefile" <<'MK'
O ?= .
INSTALL_HDR_PATH ?= $(O)/usr
.PHONY: all tinyconfig olddefconfig headers_install
tinyconfig:
	@mkdir -p $(O) && echo 'CONFIG_TINY=y' >$(O)/.config
olddefconfig:
	@sed -i '/^CONFIG_NEEDS_MISSING=/d' $(O)/.config
# As Kbuild: sources are named relative to the objects ("..") when these
# are one directory below the tree, else by the tree's absolute path; and
# the name ends up in the kernel, as in KASAN's global descriptors.
srctree := $(if $(filter $(CURDIR)/,$(dir $(realpath $(O)))),..,$(CURDIR))
all:
	@if grep -q '^CONFIG_BREAK_BUILD=y' $(O)/.config; then echo 'kernel/foo.c:1:1: error: broken on purpose' >&2; exit 1; fi
	@if grep -q 'FAKE_NO_BUILD' kernel/foo.c; then echo 'kernel/foo.c:1:1: error: FAKE_NO_BUILD' >&2; exit 1; fi
	@if grep -q '^CONFIG_SLOW_BUILD=y' $(O)/.config; then sleep 4; fi
	@mkdir -p $(O)/arch/x86/boot $(O)/include/config
	@{ cat $(O)/.config kernel/foo.c; echo 'source: $(srctree)/kernel/foo.c'; } >$(O)/arch/x86/boot/bzImage
	@mkdir -p $(O)/kernel $(O)/lib
	@echo '$$(wildcard include/config/FEATURE)' >$(O)/kernel/.foo.o.cmd
	@echo 'cmd_lib/bar.o := gcc' >$(O)/lib/.bar.o.cmd
	@cat kernel/release >$(O)/include/config/kernel.release 2>/dev/null || echo 6.12.0-fake >$(O)/include/config/kernel.release
	@echo 'ffffffff81000000 T _text' >$(O)/System.map
	@cp $(O)/arch/x86/boot/bzImage $(O)/vmlinux
headers_install:
	@mkdir -p $(INSTALL_HDR_PATH)/include/linux
	@cp include/uapi/linux/*.h $(INSTALL_HDR_PATH)/include/linux/
bindeb-pkg:
	@sh scripts/package/fake-bindeb $(O)
MK
	# As the kernel's bindeb-pkg (scripts/package/mkdebian, builddeb,
	# debhelper): packages linux-image-REL (the built bzImage as
	# boot/vmlinuz-REL), linux-libc-dev (the UAPI headers) and, only with
	# CONFIG_MODULES=y, linux-headers-REL, into the object directory's
	# parent; version KDEB_PKGVERSION (else REL-1); the changelog's date
	# from the clock (`date -R`, as mkdebian); file times newer than
	# SOURCE_DATE_EPOCH clamped to it when set (as dpkg-deb), older ones
	# kept (the UAPI headers keep the tree's times, as the headers package
	# keeps the tree's Makefiles').
	# FAKE_BINDEB_REBUILD=1 changes the kernel on the way, as a bindeb-pkg
	# with other make variables than the build's would.
	mkdir -p "$d/scripts/package"
	cat >"$d/scripts/package/fake-bindeb" <<'SH'
set -eu
obj=$1
rel=$(cat "$obj/include/config/kernel.release")
ver=${KDEB_PKGVERSION:-$rel-1}
stamp=$(date -R)
[ "${FAKE_BINDEB_REBUILD:-0}" != 1 ] || echo rebuilt >>"$obj/arch/x86/boot/bzImage"
mk() { # PACKAGE: the tree is in $obj/debian/PACKAGE
	d=$obj/debian/$1
	mkdir -p "$d/DEBIAN" "$d/usr/share/doc/$1"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: %s\nDescription: fake\n' \
		"$1" "$ver" "${KBUILD_BUILD_USER:-$(id -nu)}" >"$d/DEBIAN/control"
	printf 'linux-upstream (%s) %s; urgency=low\n\n -- x  %s\n' "$ver" "${KDEB_CHANGELOG_DIST:-unstable}" \
		"$stamp" >"$d/usr/share/doc/$1/changelog.Debian"
	if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
		find "$d" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
	fi
	dpkg-deb --root-owner-group -Zxz --build "$d" "$obj/../${1}_${ver}_amd64.deb" >/dev/null
}
rm -rf "$obj/debian"
mkdir -p "$obj/debian/linux-image-$rel/boot" "$obj/debian/linux-libc-dev/usr/include/linux"
cp "$obj/arch/x86/boot/bzImage" "$obj/debian/linux-image-$rel/boot/vmlinuz-$rel"
mk "linux-image-$rel"
cp -p include/uapi/linux/*.h "$obj/debian/linux-libc-dev/usr/include/linux/"
mk linux-libc-dev
if grep -q '^CONFIG_MODULES=y' "$obj/.config"; then
	mkdir -p "$obj/debian/linux-headers-$rel/usr/src/linux-headers-$rel"
	cp "$obj/.config" "$obj/debian/linux-headers-$rel/usr/src/linux-headers-$rel/"
	mk "linux-headers-$rel"
fi
SH
	cat >"$d/scripts/kconfig/merge_config.sh" <<'SH'
#!/bin/sh
# merge_config.sh -m -O DIR BASE FRAGMENT...: the fragments' lines after BASE
out=.
while [ $# -gt 0 ]; do
	case "$1" in -m) shift ;; -O) out=$2; shift 2 ;; *) break ;; esac
done
base=$1
shift
{ cat "$base"; grep -hE '^(CONFIG_|# CONFIG_)' "$@"; } >"$out/.config.new"
mv "$out/.config.new" "$out/.config"
SH
	chmod +x "$d/scripts/kconfig/merge_config.sh"
	# streamline_config.pl --localmodconfig SRC KCONFIG (what `make
	# localmodconfig` runs, in the object directory): the .config there
	# with each CONFIG_<NAME>=m whose lower-case name is not a module of
	# $LSMOD turned off. A module "flip" in the list makes CONFIG_DEBIAN a
	# module, which localmodconfig must never do.
	cat >"$d/scripts/kconfig/streamline_config.pl" <<'PL'
use strict;
my %mods;
open(my $l, '<', $ENV{LSMOD}) or die "no LSMOD: $!";
while (<$l>) { $mods{$1} = 1 if /^(\S+)\s/; }
open(my $c, '<', '.config') or die ".config: $!";
while (<$c>) {
	if (/^CONFIG_(\w+)=m$/ && !$mods{lc $1}) { print "# CONFIG_$1 is not set\n"; next; }
	s/^CONFIG_DEBIAN=y$/CONFIG_DEBIAN=m/ if $mods{flip};
	print;
}
PL
	cat >"$d/scripts/decode_stacktrace.sh" <<'SH'
#!/usr/bin/env bash
# decode_stacktrace.sh VMLINUX [BASE_PATH]
[ -f "${1:-}" ] || { echo "ERROR! vmlinux image must be specified" >&2; exit 1; }
while IFS= read -r line; do
	if [[ $line =~ ([A-Za-z_][A-Za-z0-9_]*)\+0x[0-9a-f]+/0x[0-9a-f]+ ]]; then
		line=${line/${BASH_REMATCH[0]}/${BASH_REMATCH[1]} (kernel/foo.c:4)}
	fi
	printf '%s\n' "$line"
done
SH
	chmod +x "$d/scripts/decode_stacktrace.sh"
	printf '/* fake kselftest_harness.h */\n#define KSFT_FAKE 1\n' >"$d/tools/testing/selftests/kselftest_harness.h"
	printf '#define FAKE_UAPI 1\n' >"$d/include/uapi/linux/fake.h"
	tar -C "$base/src" -cJf "$base/linux-source-6.12.tar.xz" linux-source-6.12
	touch -d '2025-11-28 09:54:00 UTC' "$base/linux-source-6.12.tar.xz"
	export KSRC_TARBALL=$base/linux-source-6.12.tar.xz
	KSRC_VERSION=$(awk -F= '!/^#/ && NF { print $2; exit }' "$TOP/scripts/deps/kernel-source.txt")
	# (no changelog: a path under the test's own directory, which nothing
	# else on the machine can create)
	export KSRC_VERSION KSRC_CHANGELOG=$base/no-such-changelog
}

# A whole fake project in DIR for the pipeline tests: variants
# (configs/), guest tests (guest-tests/: the real runner, a `smoke` suite
# with one passing program, an all_variants suite `selftest`), the fake
# kernel source, the fake busybox and a fake QEMU on PATH
# (tests/fixtures/fakes/qemu-system-x86_64: fake=<scenario> on the command line).
# `default` is a kernel variant; `add_variant` makes more. No KVM device
# (KVM_DEV names none): ACCEL=auto is TCG.
fake_project() { # DIR
	local d=$1 s
	export BUILD=$d/build ARTIFACTS=$d/artifacts RESULTS=$d/results PATCHES=$d/patches
	export CONFIGS=$d/configs GUEST_TESTS=$d/guest-tests
	export BUSYBOX=$TOP/tests/fixtures/fakes/busybox NO_CCACHE=1 PATH=$TOP/tests/fixtures/fakes:$PATH
	# whatever this host's /dev/kvm does, the fake project boots with TCG
	# unless a test gives it a (fake) KVM device
	export KVM_DEV=$d/no-kvm
	mkdir -p "$BUILD" "$ARTIFACTS" "$PATCHES" "$CONFIGS" "$GUEST_TESTS/lib"
	fake_source "$d"
	echo 'CONFIG_BASE=y' >"$CONFIGS/base.config"
	add_variant default '#@ cmdline = fake=clean' '#@ suites = smoke' '#@ boot_timeout = 5' \
		'#@ silence = 5' 'CONFIG_FEATURE=y'
	cp -r "$TOP/guest-tests/runner" "$GUEST_TESTS/"
	for s in smoke selftest; do
		mkdir -p "$GUEST_TESTS/$s"
		# FAKE_FAIL: the fake QEMU's "fail" scenario
		printf '#include <stdio.h>\n#include <stdlib.h>\n\nint main(void)\n{\n\tif (getenv("FAKE_FAIL") && *getenv("FAKE_FAIL")) {\n\t\tputs("TAP version 13\\n1..1\\nnot ok 1 %s");\n\t\treturn 1;\n\t}\n\tputs("TAP version 13\\n1..1\\nok 1 %s");\n\treturn 0;\n}\n' "$s" "$s" >"$GUEST_TESTS/$s/ok.c"
		echo 'timeout = 5' >"$GUEST_TESTS/$s/suite.conf"
	done
	echo 'all_variants = yes' >>"$GUEST_TESTS/selftest/suite.conf"
}

add_variant() { # NAME LINE...
	local name=$1
	shift
	printf '%s\n' "$@" >"$CONFIGS/$name.variant"
}

# A patch against the fake source, made with git like a real one.
make_patch() { # name old new
	local w=$BATS_TEST_TMPDIR/mk.$1
	rm -rf "$w"
	mkdir -p "$w/kernel"
	git -C "$w" init -q
	printf 'int one(void)\n{\n\treturn 1;\n}\n\nint two(void)\n{\n\treturn 2;\n}\n' >"$w/kernel/foo.c"
	git -C "$w" add -A
	git -C "$w" -c user.name=t -c user.email=t@t commit -qm base
	sed -i "s/return $2;/return $3;/" "$w/kernel/foo.c"
	git -C "$w" -c user.name=Tester -c user.email=tester@example.org commit -qam "foo: $1" -m "Because the test needs a reason."
	git -C "$w" format-patch -q --no-signature -1 --stdout >"$PATCHES/$1.patch"
}

# scripts/in-runtime alone in $BATS_TEST_TMPDIR/proj, with a fake image
# script and podman probe, and a fake podman ($BATS_TEST_TMPDIR/podman)
# that writes each command line to $BATS_TEST_TMPDIR/podman.calls
fake_in_runtime() {
	local p=$BATS_TEST_TMPDIR/proj
	mkdir -p "$p/scripts"
	cp "$TOP/scripts/in-runtime" "$TOP/scripts/lib.sh" "$p/scripts/"
	printf '#!/bin/sh\necho localhost/kernel-pipeline:test\n' >"$p/scripts/image"
	printf '#!/bin/sh\n' >"$p/scripts/podman-probe"
	printf '#!/bin/sh\n[ "$1" = image ] && { echo sha256:1; exit 0; }\necho "$*" >>"%s"\n' \
		"$BATS_TEST_TMPDIR/podman.calls" >"$BATS_TEST_TMPDIR/podman"
	chmod +x "$p"/scripts/* "$BATS_TEST_TMPDIR/podman"
}
