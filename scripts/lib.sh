# shellcheck shell=bash
# Shared helpers for the pipeline scripts. Sourced, never run.
#
# Exit statuses used everywhere: 0 success, 1 test failures,
# 2 infrastructure, input or build errors (usage errors too), 3 the kernel
# crashed or reported a bug.

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-$TOP/build}
ARTIFACTS=${ARTIFACTS:-$TOP/artifacts}
RESULTS=${RESULTS:-$TOP/results}
CONFIGS=${CONFIGS:-$TOP/configs}
PATCHES=${PATCHES:-$TOP/patches}
# What is keyed by content and safe to share between checkouts (the
# compiler cache, the extracted source, kselftest and guest-program builds)
# lives per user, not per checkout: a second clone, a worktree and CI on
# the same machine start warm. `make clean-cache` removes it; `make
# distclean` keeps it. With no HOME at all it falls back to build/.
# PIPELINE_CACHE names another place (exported: every script agrees).
if [ -z "${PIPELINE_CACHE:-}" ]; then
	PIPELINE_CACHE=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
	PIPELINE_CACHE=${PIPELINE_CACHE:+$PIPELINE_CACHE/kernel-pipeline}
	PIPELINE_CACHE=${PIPELINE_CACHE:-$BUILD/cache}
fi
export PIPELINE_CACHE
# The compiler cache: CCACHE_DIR names another (whose own ccache.conf then
# sets its size); the pipeline's is capped at 8 GB (CCACHE_MAXSIZE) so that
# a shared cache does not grow without bound.
if [ -z "${CCACHE_DIR:-}" ] || [ "$CCACHE_DIR" = "$PIPELINE_CACHE/ccache" ]; then
	CCACHE_DIR=$PIPELINE_CACHE/ccache
	CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
	export CCACHE_MAXSIZE
fi
export CCACHE_DIR
# The image the pipeline's image is built on unless BASE_IMAGE names
# another: made locally by scripts/base-image (debootstrap).
LOCAL_BASE_IMAGE=localhost/kernel-pipeline-base:bookworm

base_image() {
	printf '%s\n' "${BASE_IMAGE:-$LOCAL_BASE_IMAGE}"
}

# Every script answers --help (or -h) as its first argument with the
# comment block at its top, and does nothing else. This runs when a script
# sources this file, with the script's own arguments.
if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
	awk 'NR == 1 && /^#!/ { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
	exit 0
fi

# usage WORDS: a usage error (exit 2, like every input error).
usage() {
	printf 'usage: %s\n' "$*" >&2
	printf '(%s --help says more)\n' "${0##*/}" >&2
	exit 2
}

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
	awk '!/^[[:space:]]*(#|$)/ { print $1; exit }' "${PIN_FILE:-$TOP/scripts/deps/kernel-source.txt}"
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

# The variant resolver (pipeline/config.py): parameters, kernels,
# fragments and suites come from it and nowhere else.
variant() {
	"$TOP/scripts/pipeline" config "$@"
}

# capture ARRAY CMD...: CMD's output lines into ARRAY, failing (with CMD's
# status) when CMD fails; `mapfile < <(CMD)` would lose that status.
# Callers write ARRAY=() first: shellcheck cannot see the assignment.
capture() {
	local -n _capture_into=$1
	local _capture_out
	shift
	_capture_out=$("$@") || return
	_capture_into=()
	[ -z "$_capture_out" ] || mapfile -t _capture_into <<<"$_capture_out"
}

# Exit 2 unless each argument is a variant name as configs/ allows it,
# before it is used in a path. The rule is pipeline/config.py's
# check_name() and nowhere else, so that a boot refuses exactly the names
# a build does (the reserved ones too: build/<name> is taken by them).
valid_variant_name() {
	variant name "$@" || exit 2
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

# Variants to work on: $VARIANTS if given (space separated), else all;
# each checked (exit 2 naming the problem).
selected_variants() {
	if [ -n "${VARIANTS:-}" ]; then
		# shellcheck disable=SC2086 # a list of names
		variant check $VARIANTS || return
		# shellcheck disable=SC2086 # a list of names
		printf '%s\n' $VARIANTS | awk '!seen[$0]++'
	else
		variant list
	fi
}

# has_variant_file NAME: NAME is a variant of configs/ or a run variant
# the knobs of one run made (build/knobs/, pipeline/knobs.py): this
# checkout builds it (a downloaded set's variants may have no file).
has_variant_file() {
	[ -f "$CONFIGS/$1.variant" ] || [ -f "$BUILD/knobs/$1.variant" ]
}

# The kernels the selected variants boot, each once (a boot-only variant
# needs its kernel variant's build); with VARIANTs, the kernels those boot
# (a caller that has the selection saves resolving it again).
selected_kernel_variants() {
	local vs
	vs=("$@")
	[ "${#vs[@]}" -gt 0 ] || capture vs selected_variants || return
	[ "${#vs[@]}" -gt 0 ] || return 0
	variant kernels "${vs[@]}"
}

# kernel_map MAP VARIANT...: MAP[VARIANT] = the variant whose kernel it
# boots, for all of them in one resolver call.
kernel_map() {
	local -n _kernel_map=$1
	local _lines _l
	shift
	[ $# -gt 0 ] || return 0
	_lines=()
	capture _lines variant each kernel "$@" || return
	for _l in "${_lines[@]}"; do
		_kernel_map[${_l%% *}]=${_l#* }
	done
}

# refreshed_manifest VARIANT: after build-initramfs ran for a boot, keep
# artifacts/manifest.json and SHA256SUMS true to the files (a rebuilt
# initramfs has a new hash). One writer at a time: matrix runs boots in
# parallel.
refreshed_manifest() {
	local want have
	want=$(sha256_of "$ARTIFACTS/$1/initramfs.cpio.gz")
	have=$(awk -v f="$1/initramfs.cpio.gz" '$2 == f { print $1 }' "$ARTIFACTS/SHA256SUMS" 2>/dev/null)
	[ "$want" != "$have" ] || return 0
	flock "$ARTIFACTS/.manifest.lock" "$TOP/scripts/pipeline" artifacts manifest --update "$1"
}

# kernel_image_of VARIANT: the bzImage a boot of VARIANT uses (its
# variant.json's kernel, else configs/), when it is there; for the
# accelerator probe (scripts/accel-probe --variant).
kernel_image_of() {
	local k=""
	k=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["kernel"]["variant"])' \
		"$ARTIFACTS/$1/variant.json" 2>/dev/null) ||
		k=$(variant get "$1" kernel 2>/dev/null) || return 0
	[ ! -f "$ARTIFACTS/$k/bzImage" ] || printf '%s\n' "$ARTIFACTS/$k/bzImage"
}

sha256_of() {
	sha256sum "$1" | cut -d' ' -f1
}
