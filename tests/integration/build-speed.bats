#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# Tooling tests of how kernels are built fast without changing a bit: the
# objects inside the tree (no checkout path in the kernel), the second
# checkout of repro-check, the skipped config step, donors, and the
# compiler environment (ccache, remote storage, distcc). The fake kernel
# (tests/helpers.bash) names its source as Kbuild does and writes .o.cmd
# files with CONFIG_ dependencies as fixdep does.

load ../helpers

setup() {
	fake_project "$BATS_TEST_TMPDIR/p"
	"$TOP/scripts/prepare-source" >/dev/null 2>&1
}

tree() { readlink -f "$BUILD/linux"; }

@test "two checkouts at different paths build the same kernel bytes" {
	VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1
	a=$(sha256sum <"$ARTIFACTS/default/bzImage")
	# The same project again, elsewhere, at a path of another length.
	fake_project "$BATS_TEST_TMPDIR/another/place/for/the/checkout"
	VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1
	grep -a '^source: ' "$ARTIFACTS/default/bzImage"
	[ "$(sha256sum <"$ARTIFACTS/default/bzImage")" = "$a" ]
	# the objects are in the tree, build/<variant> points at them
	[ -L "$BUILD/default" ]
	[ "$(readlink -f "$BUILD/default")" = "$(tree)/.obj-default" ]
	[ -z "$(git -C "$(tree)" status --porcelain)" ]
}

@test "repro-check: rebuilds from a second checkout path, a year later, and finds the kernel identical" {
	VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1
	VARIANTS=default run "$TOP/scripts/repro-check"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"repro: second checkout"*"second-checkout/of/the/kernel-tree"* ]]
	[[ "$output" == *"repro default/bzImage"*identical* ]]
	[[ "$output" == *"repro default/headers.tar.xz"*identical* ]]
	# the second checkout is gone afterwards, the tree keeps one worktree
	[ "$(git -C "$(tree)" worktree list | wc -l)" -eq 1 ]
	# a kernel that depends on the checkout path is caught
	echo 'abs: /a/path/only/this/checkout/has' >>"$ARTIFACTS/default/bzImage"
	VARIANTS=default run "$TOP/scripts/repro-check"
	[ "$status" -eq 2 ]
	[[ "$output" == *"repro default/bzImage"*DIFFERENT* ]]
}

@test "repro-check: a kernel's Debian packages are rebuilt in the second checkout and compared too" {
	VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1
	"$TOP/scripts/build-packages" default 2>/dev/null
	manifest=$(sha256sum <"$ARTIFACTS/manifest.json")
	VARIANTS=default run "$TOP/scripts/repro-check"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"repro default/linux-image-6.12.0-fake_"*"_amd64.deb"*identical* ]]
	[[ "$output" == *"repro default/linux-libc-dev_"*"_amd64.deb"*identical* ]]
	# the first build's record is untouched, the second tree has no package left
	[ "$(sha256sum <"$ARTIFACTS/manifest.json")" = "$manifest" ]
	[ -z "$(find "$BUILD/repro" -name '*.deb' -not -path '*/out/*')" ]
	# packages that are not what the objects make are caught
	f=$(find "$ARTIFACTS/default" -name 'linux-libc-dev_*.deb')
	echo tampered >>"$f"
	VARIANTS=default run "$TOP/scripts/repro-check"
	[ "$status" -eq 2 ]
	[[ "$output" == *"repro default/linux-libc-dev_"*DIFFERENT* ]]
}

@test "build-kernel: the config step is skipped when its inputs did not change, run when they did" {
	"$TOP/scripts/build-kernel" default 2>/dev/null
	# a new commit in the tree (an edited patch) rebuilds the kernel ...
	echo '/* edited */' >>"$(tree)/kernel/foo.c"
	git -C "$(tree)" -c user.name=t -c user.email=t@t commit -qam edit
	run "$TOP/scripts/build-kernel" default
	echo "$output"
	[ "$status" -eq 0 ]
	# ... without the config step
	[[ "$output" == *"default: config"*"unchanged, skipped"* ]]
	[[ "$output" == *"default: kernel"*ok* ]]
	grep -q 'edited' "$ARTIFACTS/default/bzImage"
	# an option of a fragment changed: the config step runs
	echo 'CONFIG_MORE=y' >>"$CONFIGS/default.variant"
	run "$TOP/scripts/build-kernel" default
	[[ "$output" != *"unchanged, skipped"* ]]
	grep -qx 'CONFIG_MORE=y' "$ARTIFACTS/default/config"
	# a Kconfig file of the tree changed: it runs again
	echo 'config MORE' >"$(tree)/Kconfig"
	git -C "$(tree)" add Kconfig
	git -C "$(tree)" -c user.name=t -c user.email=t@t commit -qm kconfig
	run "$TOP/scripts/build-kernel" default
	[[ "$output" != *"unchanged, skipped"* ]]
	# a comment in base.config rebuilds the kernel (it is an input of
	# the build), but it is not an input of the config step
	echo '# a comment' >>"$CONFIGS/base.config"
	run "$TOP/scripts/build-kernel" default
	echo "$output"
	[[ "$output" == *"default: kernel"*ok* ]]
	[[ "$output" == *"unchanged, skipped"* ]]
}

@test "build-kernel: a variant not built yet starts from a donor and names it; the bytes are a clean build's" {
	add_variant other 'CONFIG_FEATURE=n' '#@ cmdline = fake=clean'
	"$TOP/scripts/build-kernel" default 2>/dev/null
	run "$TOP/scripts/build-kernel" other
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"kernel other"*"donor default: 1 of 2 objects reusable, 1 symbols differ"* ]]
	grep -q 'donor default' "$ARTIFACTS/other/build.log"
	grep -qx 'CONFIG_FEATURE=n' "$ARTIFACTS/other/config"
	a=$(sha256sum <"$ARTIFACTS/other/bzImage")
	# the donor's build record was not copied: this is other's own
	grep -q '"variant": "other"' "$(tree)/.obj-other/.pipeline-built"
	# without a donor: the same bytes, and no donor named
	rm -rf "$(tree)/.obj-other"
	NO_DONOR=1 run "$TOP/scripts/build-kernel" other
	[[ "$output" != *donor* ]]
	[ "$(sha256sum <"$ARTIFACTS/other/bzImage")" = "$a" ]
	# an object directory with a build of its own is never replaced
	echo 'CONFIG_X=y' >>"$CONFIGS/other.variant"
	run "$TOP/scripts/build-kernel" other
	[[ "$output" != *donor* ]]
}

# A fake object directory: .config lines and .o.cmd files, each with the
# symbols it depends on ("-" for none).
fake_obj() { # TREE VARIANT COMMIT CONFIG_LINES DEPS...
	local d=$1/.obj-$2 i=0
	mkdir -p "$d"
	printf '%b' "$4" >"$d/.config"
	printf '{"variant": "%s", "commit": "%s", "toolchain": "gcc 12"}\n' "$2" "$3" >"$d/.pipeline-built"
	shift 4
	for deps in "$@"; do
		i=$((i + 1))
		mkdir -p "$d/dir$i"
		: >"$d/dir$i/.f$i.o.cmd"
		[ "$deps" = - ] && continue
		for s in $deps; do echo "  \$(wildcard include/config/$s) \\" >>"$d/dir$i/.f$i.o.cmd"; done
	done
}

@test "build donor: most reusable objects wins; other commit, toolchain, flags or too little reuse rule one out" {
	t=$BATS_TEST_TMPDIR/t
	mkdir -p "$t/scripts" "$t/arch/x86"
	printf 'ifdef CONFIG_KASAN\nKBUILD_CFLAGS += -fsanitize=kernel-address\nendif\n# CONFIG_MENTIONED in a comment only\n' >"$t/scripts/Makefile.kasan"
	printf 'CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\nCONFIG_MENTIONED=y\n' >"$t/.config.want"
	mkdir -p "$t/.obj-new" && cp "$t/.config.want" "$t/.obj-new/.config"
	# near: differs in B only (2 of 4 objects depend on it)
	fake_obj "$t" near c1 'CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_MENTIONED=y\n' B 'A B' A -
	# far: differs in A and B (3 of 4 depend on them)
	fake_obj "$t" far c1 'CONFIG_MENTIONED=y\n' B A 'A B' -
	# flags: one symbol the flag Makefiles test
	fake_obj "$t" flags c1 'CONFIG_A=y\nCONFIG_B=y\nCONFIG_KASAN=y\nCONFIG_MENTIONED=y\n' - - - -
	# old: built from another commit; broken: no record
	fake_obj "$t" old c0 'CONFIG_A=y\nCONFIG_B=y\nCONFIG_MENTIONED=y\n' - - - -
	mkdir -p "$t/.obj-broken"
	cp "$t/.config.want" "$t/.obj-broken/.config"
	run --separate-stderr "$TOP/scripts/pipeline" build donor "$t" new --commit c1 --toolchain 'gcc 12'
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "near 2 4 1" ]
	[[ "$stderr" == *"donor flags: not taken (other compiler flags: CONFIG_KASAN)"* ]]
	[[ "$stderr" == *"donor old: not taken (built from another commit)"* ]]
	[[ "$stderr" == *"donor broken: not taken (no finished build)"* ]]
	[[ "$stderr" == *"donor far: candidate (1 of 4 objects reusable"* ]]
	# another toolchain: none is taken
	run --separate-stderr "$TOP/scripts/pipeline" build donor "$t" new --commit c1 --toolchain 'gcc 13'
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[[ "$stderr" == *"donor near: not taken (built with another toolchain)"* ]]
	# too little to reuse (every object depends on a differing symbol)
	rm -rf "$t"/.obj-near "$t"/.obj-far "$t"/.obj-flags "$t"/.obj-old
	fake_obj "$t" all c1 'CONFIG_A=y\nCONFIG_MENTIONED=y\n' B B B B B B B B B B B
	run --separate-stderr "$TOP/scripts/pipeline" build donor "$t" new --commit c1 --toolchain 'gcc 12'
	[ "$output" = "" ]
	[[ "$stderr" == *"donor all: not taken (0 of 11 objects reusable, under 10%)"* ]]
	# no .config of its own yet: an error, not a guess
	rm "$t/.obj-new/.config"
	run "$TOP/scripts/pipeline" build donor "$t" new --commit c1 --toolchain 'gcc 12'
	[ "$status" -eq 2 ]
}

# Fake masquerade directories and a fake distcc that knows its slots.
fake_compilers() {
	mkdir -p "$BATS_TEST_TMPDIR/ccache-masq" "$BATS_TEST_TMPDIR/distcc-masq" "$BATS_TEST_TMPDIR/bin"
	export CCACHE_MASQUERADE=$BATS_TEST_TMPDIR/ccache-masq DISTCC_MASQUERADE=$BATS_TEST_TMPDIR/distcc-masq
	printf '#!/bin/sh\n[ "$1" = -j ] && { echo 6; exit 0; }\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/distcc"
	chmod +x "$BATS_TEST_TMPDIR/bin/distcc"
	export PATH=$BATS_TEST_TMPDIR/bin:$PATH
}

@test "compiler-env: ccache, its remote storage, distcc behind ccache or alone" {
	fake_compilers
	unset NO_CCACHE
	run env CCACHE_REMOTE=redis://127.0.0.1:6390 "$TOP/scripts/compiler-env"
	echo "$output"
	[ "$status" -eq 0 ]
	eval "$output"
	[ "$CCACHE_REMOTE_STORAGE" = redis://127.0.0.1:6390 ]
	[ "$CCACHE_RESHARE" = 1 ]
	[ "$CCACHE_STATE" = remote ]
	[[ "$output" != *CCACHE_DEPEND* ]]
	[ "$DISTCC_STATE" = off ]
	# ccache-incbin's gcc in front of ccache's masquerade directory
	[[ "$PATH" == "$TOP/scripts/ccache-incbin:$CCACHE_MASQUERADE":* ]]
	[ "$CCACHE_INCBIN_GCC" = "$(PATH=${PATH#*/ccache-masq:} command -v gcc)" ]
	# run again from there, it still names the compiler, not itself
	run "$TOP/scripts/compiler-env"
	[[ "$output" == *"CCACHE_INCBIN_GCC=$CCACHE_INCBIN_GCC"* ]]
	[ -z "$CCACHE_INCBIN_CCACHE" ]
	[ "$BUILD_JOBS" = "$(nproc)" ]
	# distcc behind ccache: only misses are sent, jobs = the hosts' slots;
	# a local cache only: depend mode (no preprocessor pass on a miss)
	run env DISTCC_HOSTS='127.0.0.1:3632/3 127.0.0.1:3633/3' "$TOP/scripts/compiler-env"
	eval "$output"
	[ "$CCACHE_STATE" = local ]
	[ "$CCACHE_DEPEND" = 1 ]
	[ "$CCACHE_PREFIX" = distcc ]
	[ "$DISTCC_STATE" = on ]
	[ "$BUILD_JOBS" = 6 ]
	# distcc alone: its masquerade directory in front of gcc
	run env NO_CCACHE=1 DISTCC_HOSTS='127.0.0.1:3632/3' "$TOP/scripts/compiler-env"
	eval "$output"
	[[ "$PATH" == "$DISTCC_MASQUERADE":* ]]
	[ "$CCACHE_STATE" = off ]
	[[ "$output" != *CCACHE_DEPEND* ]]
	# bad input: exit 2 naming it
	run env CCACHE_REMOTE=somewhere "$TOP/scripts/compiler-env"
	[ "$status" -eq 2 ]
	[[ "$output" == *"CCACHE_REMOTE must be a ccache remote storage URL"*somewhere* ]]
	run env NO_CCACHE=1 CCACHE_REMOTE=redis://x "$TOP/scripts/compiler-env"
	[ "$status" -eq 2 ]
}

@test "in-runtime: CCACHE_REMOTE and DISTCC_HOSTS reach the container, which gets a network only then" {
	fake_in_runtime
	p=$BATS_TEST_TMPDIR/proj
	# (unset, not empty: `make test` exports both, empty)
	run env -u TOP -u BUILD -u ARTIFACTS -u RESULTS -u CCACHE_REMOTE -u DISTCC_HOSTS \
		PODMAN="$BATS_TEST_TMPDIR/podman" RUNTIME=podman "$p/scripts/in-runtime" true
	[ "$status" -eq 0 ]
	run cat "$BATS_TEST_TMPDIR/podman.calls"
	[[ "$output" == *"--network none"* ]]
	[[ "$output" != *CCACHE_REMOTE* ]]
	: >"$BATS_TEST_TMPDIR/podman.calls"
	run env -u TOP -u BUILD -u ARTIFACTS -u RESULTS PODMAN="$BATS_TEST_TMPDIR/podman" RUNTIME=podman \
		CCACHE_REMOTE=redis://10.0.0.1:6379 DISTCC_HOSTS=10.0.0.2:3632/4 "$p/scripts/in-runtime" true
	[ "$status" -eq 0 ]
	run cat "$BATS_TEST_TMPDIR/podman.calls"
	echo "$output"
	[[ "$output" == *"--network host"* ]]
	[[ "$output" == *"-e CCACHE_REMOTE=redis://10.0.0.1:6379"* ]]
	[[ "$output" == *"-e DISTCC_HOSTS=10.0.0.2:3632/4"* ]]
}

@test "build-and-boot: a variant boots while the next kernel builds; one table for every variant" {
	add_variant iso '#@ extends = default' '#@ kernel = default' '#@ cmdline = fake=clean'
	add_variant slow 'CONFIG_SLOW_BUILD=y' '#@ cmdline = fake=clean' '#@ suites = smoke' \
		'#@ boot_timeout = 5' '#@ silence = 5'
	VARIANTS="default iso slow" run "$TOP/scripts/build-and-boot"
	echo "$output"
	[ "$status" -eq 0 ]
	for v in default iso slow; do
		[ "$(jq -r .exit_class "$RESULTS/$v/results.json")" = 0 ]
	done
	[ "$(jq -r '.variants | length' "$RESULTS/summary.json")" = 3 ]
	[ -f "$ARTIFACTS/manifest.json" ]
	(cd "$ARTIFACTS" && sha256sum --quiet -c SHA256SUMS)
	# default and iso were booted before slow's kernel was built
	[ "$RESULTS/default/results.json" -ot "$ARTIFACTS/slow/bzImage" ]
	[ "$RESULTS/iso/results.json" -ot "$ARTIFACTS/slow/bzImage" ]
	# the run ends with its page, every variant in it, and is recorded in
	# this user's history (the test's own cache)
	[[ "$output" == *"results page: "*"results/index.html"* ]]
	for v in default iso slow; do
		grep -q "<tr id=\"variant-$v\">" "$RESULTS/index.html"
	done
	[ "$(jq '.runs | length' "$PIPELINE_CACHE/report-history/runs.json")" = 1 ]
}

@test "build-and-boot: the guest programs compile beside the kernel (only its headers needed); the initramfs after it compiles nothing" {
	sed -i '1i #include <linux/fake.h>' "$GUEST_TESTS/smoke/ok.c"
	gcc_logger
	# the kernel build waits until the guest programs were compiled: they
	# cannot have come after it
	sed -i 's|^all:$|all:\n\t@while ! grep -q -- " -o .*smoke/ok " $(GCC_CALLS) 2>/dev/null; do sleep 0.1; done|' \
		"$(tree)/Makefile"
	git -C "$(tree)" -c user.name=t -c user.email=t@t commit -qam wait
	"$TOP/scripts/patches-export" 2>/dev/null
	GCC_CALLS=$BATS_TEST_TMPDIR/gcc-calls PATH=$BATS_TEST_TMPDIR/bin:$PATH VARIANTS=default \
		run timeout 180 "$TOP/scripts/build-and-boot"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"default: headers-early"*ok*"kernel default"*ok*"initramfs default"*ok* ]]
	[[ "$output" == *"guest programs default (while the kernel builds)"*ok*"initramfs default"*ok* ]]
	[ "$(jq -r .exit_class "$RESULTS/default/results.json")" = 0 ]
	# compiled once, beside the kernel: the initramfs took it from the cache
	[ "$(grep -c -- ' -o .*smoke/ok ' "$BATS_TEST_TMPDIR/gcc-calls")" = 1 ]
	# the headers it was compiled against are the kernel's own
	cmp "$BUILD/early-headers/default.tar.xz" "$ARTIFACTS/default/headers.tar.xz"
	# a second run knows when each verdict is due
	VARIANTS=default run "$TOP/scripts/build-and-boot"
	[[ "$output" == *"verdicts due (from the previous run): default "[0-9][0-9]:[0-9][0-9]* ]]
}

@test "build-and-boot: a kernel that fails is a class 2 row naming its log; the rest is built and booted" {
	add_variant broken 'CONFIG_BREAK_BUILD=y' '#@ cmdline = fake=clean'
	VARIANTS="broken default" run "$TOP/scripts/build-and-boot"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"kernel broken (artifacts/broken/build.log)"* || "$output" == *"kernel broken ($ARTIFACTS/broken/build.log)"* ]]
	[ "$(jq -r .exit_class "$RESULTS/broken/results.json")" = 2 ]
	jq -r .reasons[0] "$RESULTS/broken/results.json" | grep -q 'build.log'
	[ "$(jq -r .exit_class "$RESULTS/default/results.json")" = 0 ]
}

@test "build-and-boot: an ETA from the previous run's durations; the kernel with the longest boots first" {
	add_variant second 'CONFIG_SECOND=y' '#@ cmdline = fake=clean' '#@ suites = smoke' \
		'#@ boot_timeout = 5' '#@ silence = 5'
	VARIANTS="default second" run "$TOP/scripts/build-and-boot"
	[ "$status" -eq 0 ]
	[[ "$output" != *"min left"* ]]
	[[ "$output" == *"[1/2] kernel default"*"[2/2] kernel second"* ]]
	# last time, second booted for 200 s and default for 10 s
	for v in default:10 second:200; do
		jq ".duration_s = ${v#*:}" "$RESULTS/${v%:*}/results.json" >"$BATS_TEST_TMPDIR/r"
		mv "$BATS_TEST_TMPDIR/r" "$RESULTS/${v%:*}/results.json"
	done
	echo 'CONFIG_MORE=y' >>"$CONFIGS/base.config"
	VARIANTS="default second" run "$TOP/scripts/build-and-boot"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"[1/2] kernel second (previous build "*"s); about "*" min left, done around "* ]]
	[[ "$output" == *"[2/2] kernel default"* ]]
	[[ "$output" == *"builds done; waiting for the boots; about 1 min left"* ]]
}

# A gcc first in PATH that logs to gcc-calls each call that reads or
# writes a program (not --version, not -print-file-name=).
gcc_logger() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\ncase " $* " in *" --version "* | *" -print-file-name="*) ;; *) echo "$*" >>%s ;; esac\nexec /usr/bin/gcc "$@"\n' \
		"$BATS_TEST_TMPDIR/gcc-calls" >"$BATS_TEST_TMPDIR/bin/gcc"
	chmod +x "$BATS_TEST_TMPDIR/bin/gcc"
}

# Commit what changed in the tree's tracked files and export the series.
tree_commit() { # MESSAGE
	git -C "$(tree)" -c user.name=t -c user.email=t@t commit -qam "$1"
	"$TOP/scripts/patches-export" 2>/dev/null
}

@test "build-initramfs: a new kernel with the same UAPI headers compiles no guest program again, with no kept root too" {
	sed -i '1i #include <linux/fake.h>' "$GUEST_TESTS/smoke/ok.c"
	VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1
	prog=$(sha256sum <"$ARTIFACTS/default/guest-tests/smoke/ok")
	gcc_logger
	# a patch's C code changed: a new kernel, the same headers; without
	# the root kept from the last build, guest-cc's cache serves
	echo '/* edited */' >>"$(tree)/kernel/foo.c"
	tree_commit edit
	rm -rf "$BUILD/initramfs/default.root"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH VARIANTS=default run "$TOP/scripts/container-build"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"kernel default"*ok*"initramfs default"*ok* ]]
	[[ "$output" != *"programs were kept"* ]]
	# gcc -M runs of guest-cc, no compile
	grep -q -- ' -M' "$BATS_TEST_TMPDIR/gcc-calls"
	run ! grep -q -- ' -o ' "$BATS_TEST_TMPDIR/gcc-calls"
	[ "$(sha256sum <"$ARTIFACTS/default/guest-tests/smoke/ok")" = "$prog" ]
	# a UAPI header changed: every program is compiled again
	echo '#define FAKE_UAPI_MORE 2' >>"$(tree)/include/uapi/linux/fake.h"
	tree_commit header
	PATH=$BATS_TEST_TMPDIR/bin:$PATH VARIANTS=default run "$TOP/scripts/container-build"
	[ "$status" -eq 0 ]
	grep -- ' -o ' "$BATS_TEST_TMPDIR/gcc-calls" | grep -q 'smoke/ok.c'
}

@test "build-initramfs: a kernel-only change keeps the programs (no gcc at all) and writes what names the kernel; the same bytes as a build from nothing" {
	VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1
	gcc_logger
	from_nothing() { # the initramfs of default built with nothing kept or cached
		rm -rf "$BUILD/initramfs" "$BUILD/ksft" "$ARTIFACTS/default/.initramfs-inputs" \
			"$ARTIFACTS/default/initramfs.cpio.gz"
		VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1 || return 1
		sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz"
	}
	# C code only: the archive is the last one, not even repacked
	echo '/* edited */' >>"$(tree)/kernel/foo.c"
	tree_commit edit
	PATH=$BATS_TEST_TMPDIR/bin:$PATH VARIANTS=default run "$TOP/scripts/container-build"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"initramfs default"*"a new kernel; its programs were kept"*"; the archive too)"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/gcc-calls" ]
	fast=$(sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz")
	jq -e --arg s "${fast%% *}" '.initramfs.sha256 == $s' "$ARTIFACTS/default/variant.json"
	[ "$(from_nothing)" = "$fast" ]
	# a new release: the guest's expected facts change with it
	echo 6.12.0-edited >"$(tree)/kernel/release"
	git -C "$(tree)" add kernel/release
	tree_commit release
	PATH=$BATS_TEST_TMPDIR/bin:$PATH VARIANTS=default run "$TOP/scripts/container-build"
	[ "$status" -eq 0 ]
	[[ "$output" == *"initramfs default"*"a new kernel; its programs were kept"* ]]
	[[ "$output" != *"the archive too"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/gcc-calls" ]
	zcat "$ARTIFACTS/default/initramfs.cpio.gz" | cpio -i --quiet --to-stdout etc/pipeline/expected | grep -qx release=6.12.0-edited
	fast=$(sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz")
	[ "$(from_nothing)" = "$fast" ]
}

@test "build-initramfs: no kept programs when the tree's selftests changed; the build line is honest when only files were missing" {
	VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1
	# the same kernel, only the archive lost: no "new kernel"
	rm "$ARTIFACTS/default/initramfs.cpio.gz"
	VARIANTS=default run "$TOP/scripts/container-build"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"initramfs default"*"its files were missing"*"its programs were kept"* ]]
	[[ "$output" != *"a new kernel"* ]]
	# kselftest.h is no UAPI header, but the programs include it
	echo '/* a new kselftest.h */' >"$(tree)/tools/testing/selftests/kselftest.h"
	git -C "$(tree)" add tools/testing/selftests/kselftest.h
	tree_commit selftests
	VARIANTS=default run "$TOP/scripts/container-build"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"initramfs default"*ok* ]]
	[[ "$output" != *"programs were kept"* ]]
}

# A fake project for bench-build: default and off, the file its edit
# step changes in the series, and a fake `make` first in PATH that runs
# the targets as the Makefile does natively (NAME=VALUE arguments the
# environment), logs each call with what it saw, and fails the target
# FAKE_MAKE_FAIL names ("container-build NO_DONOR=1": that call). Any
# other call (the fake kernel's build) goes to the real make. The bench
# unsets NO_CCACHE: an empty masquerade directory stands for ccache's, so
# the test does not depend on ccache on the host (a fresh CI machine has
# none until the native runtime is set up).
bench_project() {
	export CCACHE_MASQUERADE=$BATS_TEST_TMPDIR/ccache-masq
	mkdir -p "$CCACHE_MASQUERADE"
	add_variant default '#@ cmdline = fake=clean' '#@ suites = smoke umcg' '#@ boot_timeout = 5' \
		'#@ silence = 5' 'CONFIG_FEATURE=y'
	add_variant off 'CONFIG_FEATURE=n' '#@ cmdline = fake=clean' '#@ suites = smoke' \
		'#@ boot_timeout = 5' '#@ silence = 5'
	cp -r "$GUEST_TESTS/smoke" "$GUEST_TESTS/umcg"
	# the file the edit step changes, in the series
	mkdir -p "$(tree)/kernel/sched"
	printf 'int umcg;\n' >"$(tree)/kernel/sched/umcg.c"
	git -C "$(tree)" add kernel/sched/umcg.c
	git -C "$(tree)" -c user.name=t -c user.email=t@t commit -qm "sched/umcg: add"
	"$TOP/scripts/patches-export" >/dev/null 2>&1
	series=$(cat "$PATCHES"/*.patch | sha256sum)
	head=$(git -C "$(tree)" rev-parse HEAD)
	# make as the Makefile runs it natively: targets are scripts, NAME=VALUE
	# arguments the environment; each call is logged with what it saw
	calls=$BATS_TEST_TMPDIR/calls
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/make" <<SH
#!/usr/bin/env bash
set -euo pipefail
case "\$*" in
all | "container-build"* | "test-variant"* | *patches-export | "repro-check"*) ;;
*) exec $(command -v make) "\$@" ;;
esac
[ "\$1" != -s ] || shift
t=\$1
shift
for a in "\$@"; do export "\$a"; done
[ "\$t NO_DONOR=\${NO_DONOR:-}" != "\${FAKE_MAKE_FAIL:-}" ] || exit 2
echo "\$t VARIANTS=\${VARIANTS:-} NO_DONOR=\${NO_DONOR:-} CCACHE_DIR=\${CCACHE_DIR:-} tree: \$(git -C "$(tree)" log -1 --format=%s)" >>"$calls"
case \$t in
all) exec "$TOP/scripts/build-and-boot" ;;
container-build) exec "$TOP/scripts/container-build" ;;
test-variant) exec "$TOP/scripts/test-variant" "\$VARIANT" ;;
*) exec "$TOP/scripts/\$t" ;;
esac
SH
	chmod +x "$BATS_TEST_TMPDIR/bin/make"
}

@test "bench-build: every step through make, the edit taken back, the table and JSON (plain make from PATH, fake kernel)" {
	bench_project
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run "$TOP/scripts/bench-build"
	echo "$output"
	cat "$calls"
	[ "$status" -eq 0 ]
	bench=$output
	# the steps, in order, with the bench's own ccache
	run cut -d' ' -f1-3 "$calls"
	[ "$output" = "all VARIANTS= NO_DONOR=
container-build VARIANTS= NO_DONOR=
container-build VARIANTS= NO_DONOR=
patches-export VARIANTS= NO_DONOR=
container-build VARIANTS=default NO_DONOR=
test-variant VARIANTS= NO_DONOR=
patches-export VARIANTS= NO_DONOR=
container-build VARIANTS=default NO_DONOR=
container-build VARIANTS=off NO_DONOR=1
container-build VARIANTS=off NO_DONOR=
repro-check VARIANTS= NO_DONOR=" ]
	[ "$(grep -vc "CCACHE_DIR=$BUILD/bench/ccache " "$calls")" = 0 ]
	# the edited tree was built and booted, then taken back
	[ "$(grep -c 'tree: sched/umcg: bench edit' "$calls")" = 3 ]
	[ "$(git -C "$(tree)" rev-parse HEAD)" = "$head" ]
	[ "$(cat "$PATCHES"/*.patch | sha256sum)" = "$series" ]
	# the table, and the JSON with every row measured
	out=$RESULTS/bench-build.json
	[ "$(jq '[.table[] | select(.seconds == null)] | length' "$out")" = 0 ]
	[ "$(jq -r .raw.repro_result "$out")" = identical ]
	[ "$(jq -r .exit_class "$RESULTS/default/results.json")" = 0 ]
	grep -q 'umcg' "$RESULTS/default/results.json"
	[ "$(jq -r .raw.off_donor_line "$out")" = "donor default: 1 of 2 objects reusable" ]
	[ "$(jq -r .raw.off_clean_sha256 "$out")" = "$(jq -r .raw.off_donor_sha256 "$out")" ]
	[[ "$(jq -r .raw.cold_builds_done "$out")" =~ ^[0-9.]+$ ]]
	[ "$(jq -r .raw.kernels "$out")" = "default off" ]
	[[ "$bench" == *"| make repro-check (second checkout, no ccache) | "[0-9]*" | identical |"* ]]
	[[ "$bench" == *"donor/clean"*"donor default: 1 of 2 objects reusable; same bzImage: True"* ]]
}

@test "bench-build: a step that failed shows FAILED and no time, and the benchmark exits 1" {
	bench_project
	FAKE_MAKE_FAIL="container-build NO_DONOR=1" PATH=$BATS_TEST_TMPDIR/bin:$PATH \
		run "$TOP/scripts/bench-build"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"| off, empty ccache, from nothing | - | FAILED (exit 2); kernel stage "* ]]
	[[ "$output" == *"these steps failed, their rows show no time: off_clean"* ]]
	out=$RESULTS/bench-build.json
	[ "$(jq -c .failed "$out")" = '["off_clean"]' ]
	[ "$(jq '[.table[] | select(.seconds == null)] | length' "$out")" = 1 ]
	# the edit was still taken back
	[ "$(git -C "$(tree)" log -1 --format=%s)" = "sched/umcg: add" ]
}
