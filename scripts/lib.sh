# shellcheck shell=bash
# Shared helpers for the pipeline scripts. Sourced, never run.
#
# Exit statuses used everywhere: 0 success, 1 test failures,
# 2 infrastructure, input or build errors.

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-$TOP/build}
ARTIFACTS=${ARTIFACTS:-$TOP/artifacts}
RESULTS=${RESULTS:-$TOP/results}
CONFIGS=${CONFIGS:-$TOP/configs}
PATCHES=${PATCHES:-$TOP/patches}

die() {
	printf 'error: %s\n' "$*" >&2
	exit 2
}

info() {
	printf '%s\n' "$*" >&2
}

# Seconds since the epoch with sub-second precision, for stage timings.
now() {
	date +%s.%N
}

elapsed_since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

# run_stage LABEL LOG CMD...: run CMD with its output in LOG, print one line
# with the elapsed time; on failure show the end of LOG and where it is.
run_stage() {
	local label=$1 log=$2 start rc=0
	shift 2
	start=$(now)
	mkdir -p "$(dirname "$log")"
	"$@" >>"$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		printf '%-40s FAILED after %ss (exit %s)\n' "$label" "$(elapsed_since "$start")" "$rc" >&2
		printf -- '--- last lines of %s ---\n' "$log" >&2
		tail -n 25 "$log" >&2
		printf -- '--- full log: %s ---\n' "$log" >&2
		return 2
	fi
	printf '%-40s ok (%ss)\n' "$label" "$(elapsed_since "$start")" >&2
}

# The pinned kernel source package, from the one file that pins it.
kernel_pin() {
	awk '!/^[[:space:]]*(#|$)/ { print $1; exit }' "$TOP/scripts/deps/kernel-source.txt"
}
kernel_package() { local p; p=$(kernel_pin); printf '%s\n' "${p%%=*}"; }
kernel_version() { local p; p=$(kernel_pin); printf '%s\n' "${p#*=}"; }

# The installed version of the kernel source package and its tarball.
# KSRC_VERSION / KSRC_TARBALL replace them (the tooling tests use a small
# fake source).
ksrc_version() {
	if [ -n "${KSRC_VERSION:-}" ]; then
		printf '%s\n' "$KSRC_VERSION"
	else
		dpkg-query -W -f '${Version}' "$(kernel_package)" 2>/dev/null
	fi
}
ksrc_tarball() {
	printf '%s\n' "${KSRC_TARBALL:-/usr/src/$(kernel_package).tar.xz}"
}

# Package names from a deps list (comments and blank lines dropped).
deps_list() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/scripts/deps/$1.txt"
}

variant_file() {
	printf '%s/%s.variant\n' "$CONFIGS" "$1"
}

# All variant names, sorted.
variant_names() {
	local f
	for f in "$CONFIGS"/*.variant; do
		[ -e "$f" ] || continue
		f=${f##*/}
		printf '%s\n' "${f%.variant}"
	done
}

check_variant() {
	local name=$1
	case "$name" in
	"" | *[!a-z0-9_-]*) die "invalid variant name '$name' (use a-z, 0-9, - and _)" ;;
	linux | src | ccache | repro | initramfs | guest-tests | state) die "variant name '$name' is reserved" ;;
	esac
	[ -f "$(variant_file "$name")" ] || die "unknown variant '$name': no $(variant_file "$name") (known: $(variant_names | tr '\n' ' '))"
}

# The chain of variant files a variant is made of, parents first
# (`#@ extends = parent`).
variant_chain() {
	local name=$1 parent depth=0 chain=()
	while [ -n "$name" ]; do
		check_variant "$name"
		depth=$((depth + 1))
		[ "$depth" -le 8 ] || die "variant '$1': 'extends' nests too deep (a loop?)"
		chain=("$name" "${chain[@]}")
		parent=$(variant_own_param "$name" extends)
		name=$parent
	done
	printf '%s\n' "${chain[@]}"
}

# A parameter set in this variant's own file (`#@ key = value`), or nothing.
variant_own_param() {
	sed -n "s/^#@[[:space:]]*$2[[:space:]]*=[[:space:]]*//p" "$(variant_file "$1")" |
		tail -n 1 | sed 's/[[:space:]]*$//'
}

# variant_param VARIANT KEY [DEFAULT]: the nearest definition along the
# extends chain wins; `+=` in a child appends to the parent's value.
variant_param() {
	local v key=$2 val="" set=0 own add
	while read -r v; do
		own=$(sed -n "s/^#@[[:space:]]*${key}[[:space:]]*=[[:space:]]*//p" "$(variant_file "$v")" | tail -n 1 | sed 's/[[:space:]]*$//')
		add=$(sed -n "s/^#@[[:space:]]*${key}[[:space:]]*+=[[:space:]]*//p" "$(variant_file "$v")" | tail -n 1 | sed 's/[[:space:]]*$//')
		if grep -q "^#@[[:space:]]*${key}[[:space:]]*=" "$(variant_file "$v")"; then
			val=$own
			set=1
		fi
		if [ -n "$add" ]; then
			val="${val:+$val }$add"
			set=1
		fi
	done < <(variant_chain "$1")
	if [ "$set" -eq 0 ]; then
		val=${3-}
	fi
	printf '%s\n' "$val"
}

# The variant whose kernel VARIANT boots: itself, or the one named by
# `#@ kernel = other` (a boot-only variant: same kernel, other cmdline/-smp).
kernel_variant() {
	local k
	k=$(variant_param "$1" kernel "")
	if [ -n "$k" ]; then
		check_variant "$k"
		if grep -qE '^(CONFIG_|# CONFIG_)' "$(variant_file "$1")"; then
			die "variant '$1' boots the kernel of '$k' (#@ kernel) and cannot have Kconfig lines of its own"
		fi
	fi
	printf '%s\n' "${k:-$1}"
}

# make in the kernel tree, with the optional host toolchains that Kconfig
# probes (rustc, pahole, bindgen) pinned to "absent": no config here uses
# Rust or BTF, and a host that happens to have them would otherwise get
# different CONFIG_RUSTC_VERSION/CONFIG_PAHOLE_VERSION lines in .config (and
# so in /proc/config.gz, inside bzImage) than the container.
kmake() {
	make RUSTC=/nonexistent/rustc RUSTDOC=/nonexistent/rustdoc \
		BINDGEN=/nonexistent/bindgen PAHOLE=/nonexistent/pahole "$@"
}

# Variants to work on: $VARIANTS if given (space separated), else all.
selected_variants() {
	local v
	if [ -n "${VARIANTS:-}" ]; then
		for v in $VARIANTS; do
			check_variant "$v"
			printf '%s\n' "$v"
		done
	else
		variant_names
	fi
}

# The kernels the selected variants boot, each once (a boot-only variant
# needs its kernel variant's build).
selected_kernel_variants() {
	local v
	selected_variants | while read -r v; do kernel_variant "$v"; done | awk '!seen[$0]++'
}

sha256_of() {
	sha256sum "$1" | cut -d' ' -f1
}

# suite_param SUITE KEY [DEFAULT]: `key = value` from guest-tests/SUITE/suite.conf.
suite_param() {
	local conf=$TOP/guest-tests/$1/suite.conf val
	[ -f "$conf" ] || die "unknown guest-test suite '$1' (no guest-tests/$1/suite.conf)"
	val=$(sed -n "s/^[[:space:]]*$2[[:space:]]*=[[:space:]]*//p" "$conf" | tail -n 1 | sed 's/[[:space:]]*$//')
	printf '%s\n' "${val:-${3-}}"
}
