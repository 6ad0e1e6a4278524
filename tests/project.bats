#!/usr/bin/env bats
# The project's own data and code: variant files, suites, the one pin of
# the kernel version, CI workflow files, shell and C hygiene.
bats_require_minimum_version 1.5.0

load helpers

variants() { "$TOP/scripts/variant" list; }
V() { "$TOP/scripts/variant" "$@"; }

@test "the kernel package version is pinned in exactly one file" {
	version=$(awk -F= '!/^#/ && NF { print $2; exit }' "$TOP/scripts/deps/kernel-source.txt")
	[ -n "$version" ]
	run git -C "$TOP" grep -lF -- "$version" -- ':!*.md'
	[ "$output" = scripts/deps/kernel-source.txt ]
}

@test "every variant resolves: its parameters parse, every suite it names exists" {
	vs=$(variants)
	[ "$(wc -w <<<"$vs")" -ge 3 ]
	for v in $vs; do
		V check "$v"
		[ -n "$(V get "$v" smp)" ]
		[ -n "$(V get "$v" mem)" ]
		for s in $(V suites "$v"); do
			[ -n "$(V suite "$s" timeout)" ]
		done
	done
}

@test "variant parameters: extends inherits, += appends, an unknown variant is a clear error" {
	[ "$(V show debug | jq -r '.chain | join(" ")')" = "default debug" ]
	[[ "$(V get debug cmdline)" == *panic_on_warn=1* ]]
	[ "$(V get debug smp)" = "$(V get default smp)" ]
	[ "$(V get isolated kernel)" = default ]
	[ "$(V kernels isolated debug default)" = "$(printf 'default\ndebug')" ]
	run V get nosuch smp
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown variant 'nosuch'"* ]]
	run V check 'a b'
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid variant name"* ]]
}

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

@test "variant: an extends loop is an error naming the loop, never a silent default" {
	cfg 'a:#@ extends = b|#@ smp = 3' 'b:#@ extends = a'
	run V get a smp
	[ "$status" -eq 2 ]
	[[ "$output" == *"'extends' loop: a -> b -> a"* ]]
	cfg 'a:#@ extends = a'
	run V get a smp
	[ "$status" -eq 2 ]
	[[ "$output" == *"loop: a -> a"* ]]
}

@test "variant: defaults, '=' then '+=' in order, boot-only rules" {
	cfg 'p:#@ cmdline = a|CONFIG_P=y' 'c:#@ extends = p|#@ cmdline += b|#@ cmdline += c|#@ qemu_args = -numa node' \
		'b:#@ extends = c|#@ kernel = c|#@ smp = 4' 'bad:#@ kernel = p|CONFIG_X=y' 'bb:#@ kernel = b'
	[ "$(V get p smp)" = 2 ]
	[ "$(V get p mem)" = 512M ]
	[ "$(V get p suites)" = smoke ]
	[ "$(V get c cmdline)" = "a b c" ]
	[ "$(V get c qemu_args)" = "-numa node" ]
	[ "$(V get b kernel)" = c ]
	[ "$(V get b smp)" = 4 ]
	[ "$(V fragments b | sed 's|.*/||' | tr '\n' ' ')" = "base.config p.variant c.variant " ]
	[ "$(V kconfig c | tr '\n' ' ')" = "CONFIG_BASE=y CONFIG_P=y " ]
	run V get bad smp
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot have Kconfig lines of its own"* ]]
	run V get bb smp
	[ "$status" -eq 2 ]
	[[ "$output" == *"'b' is boot-only itself"* ]]
}

@test "variant: bad input is exit 2 naming the file and line" {
	cfg 'x:# fine|#@ smpp = 2'
	run V get x smp
	[ "$status" -eq 2 ]
	[[ "$output" == *"configs/x.variant:2: unknown parameter 'smpp'"* ]]
	cfg 'x:#@ smp = two'
	run V get x smp
	[ "$status" -eq 2 ]
	[[ "$output" == *"configs/x.variant:1: smp: expected a positive whole number, not 'two'"* ]]
	cfg 'x:#@ mem 512M'
	run V get x mem
	[ "$status" -eq 2 ]
	[[ "$output" == *'configs/x.variant:1: expected "#@ key = value"'* ]]
	cfg 'x:CONFIG_A=y|oops'
	run V kconfig x
	[ "$status" -eq 2 ]
	[[ "$output" == *"configs/x.variant:2: not a Kconfig line"* ]]
	cfg 'x:#@ suites = smoke nosuchsuite'
	run V get x suites
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown guest-test suite 'nosuchsuite' named by variant x"* ]]
}

@test "one reader per fact: defaults, the base image, the series, no inline Python in scripts" {
	cd "$TOP"
	# the run-parameter defaults live in scripts/variants.py only
	run git grep -nE "512M|smp 2|suites smoke|:-smoke|timeout 300" -- scripts ci Makefile ':!scripts/variants.py'
	[ "$output" = "" ]
	# the local base image is named once
	run git grep -lF "kernel-pipeline-base:" -- ':!*.md' ':!tests'
	[ "$output" = scripts/lib.sh ]
	# patches/series is parsed in scripts/series.py only
	run git grep -lE '(PATCHES|patches)/series"?' -- scripts ci ':!scripts/series.py' ':!scripts/series'
	echo "$output"
	for f in $output; do
		run ! grep -nE 'read -r p|open\(.*series' "$f"
	done
	# no Python hidden in shell scripts: every Python entry point is a
	# file of its own, reached by the tests
	run git grep -lE "python3 -( |$)|<<'?PY" -- scripts ci .ci Makefile
	[ "$output" = "" ]
	# variant files are read by scripts/variants.py only
	run git grep -nE '#@\[|"#@|\^#@' -- scripts ci ':!scripts/variants.py'
	[ "$output" = "" ]
}

# Every executable the project has for people and CI (not the guest's).
entry_points() {
	cd "$TOP"
	for f in scripts/* ci/* expect-scripts/*.exp .ci/run; do
		[ -f "$f" ] && [ -x "$f" ] && echo "$f"
	done
}

@test "every script answers --help with exit 0 and does nothing else" {
	n=0
	sandbox=$BATS_TEST_TMPDIR/sandbox
	mkdir -p "$sandbox/bin"
	# anything it would start to do work leaves a trace
	for t in podman make apt-get qemu-system-x86_64 gcc git; do
		printf '#!/bin/sh\necho "$0 $*" >>%s/calls\nexit 99\n' "$sandbox" >"$sandbox/bin/$t"
		chmod +x "$sandbox/bin/$t"
	done
	for f in $(entry_points); do
		BUILD=$sandbox/build ARTIFACTS=$sandbox/artifacts RESULTS=$sandbox/results \
			PATH=$sandbox/bin:$PATH run "$TOP/$f" --help
		[ "$status" -eq 0 ] || { echo "$f --help: exit $status: $output"; return 1; }
		[ "${#output}" -gt 40 ] || { echo "$f --help says nothing: $output"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 25 ]
	[ ! -e "$sandbox/calls" ] || { cat "$sandbox/calls"; return 1; }
	[ "$(ls "$sandbox")" = bin ]
}

@test "usage errors exit 2 (never 1, which means a test failed)" {
	sandbox=$BATS_TEST_TMPDIR/sandbox
	export BUILD=$sandbox/build ARTIFACTS=$sandbox/artifacts RESULTS=$sandbox/results
	# scripts that need arguments, called without
	for f in scripts/build-kernel scripts/build-initramfs scripts/config-variant scripts/test-variant \
		scripts/boot-interactive scripts/podman-probe scripts/repro-env scripts/check-config \
		scripts/record-failure scripts/summarize scripts/parse-console scripts/manifest \
		scripts/describe-artifacts scripts/boot-plan scripts/variant scripts/series scripts/apt-sources \
		scripts/host-setup scripts/in-container ci/variant-job expect-scripts/boot-and-test.exp; do
		run "$TOP/$f"
		[ "$status" -eq 2 ] || { echo "$f without arguments: exit $status: $output"; return 1; }
		[[ "$output" == *sage* ]] || { echo "$f: no usage message: $output"; return 1; }
	done
	# scripts that take none, called with one
	for f in scripts/build-all scripts/matrix scripts/prepare-source scripts/source-date scripts/check \
		scripts/repro-check scripts/series-check scripts/patches-export scripts/image scripts/base-image; do
		run "$TOP/$f" --no-such-option extra
		[ "$status" -eq 2 ] || { echo "$f with a bogus argument: exit $status: $output"; return 1; }
	done
	run "$TOP/ci/summary-job" a b
	[ "$status" -eq 2 ]
	run "$TOP/scripts/run-tests" --no-such-option
	[ "$status" -eq 2 ]
	[ ! -e "$sandbox" ]
}

@test "an uncaught exception in a Python entry point exits 2 with a message" {
	# every Python entry point goes through entry.run
	cd "$TOP"
	for f in $(grep -l '^#!/usr/bin/env python3' scripts/* ci/* 2>/dev/null); do
		grep -q "entry.run(main, " "$f" || { echo "$f does not use entry.run"; return 1; }
	done
	run python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import entry
def main(argv):
    return {}["no such key"]
entry.run(main, "demo")' "$TOP/scripts"
	[ "$status" -eq 2 ]
	[[ "$output" == *"demo: error: internal error (KeyError"* ]]
	run python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import entry
def main(argv):
    sys.exit("a message")
entry.run(main, "demo")' "$TOP/scripts"
	[ "$status" -eq 2 ]
	run python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import entry
entry.run(lambda argv: 3, "demo")' "$TOP/scripts"
	[ "$status" -eq 3 ]
}

@test "make -j all never boots a kernel before it is built" {
	p=$BATS_TEST_TMPDIR/proj
	mkdir -p "$p/scripts"
	cp "$TOP/Makefile" "$p/"
	printf '#!/bin/sh\nexec "$@"\n' >"$p/scripts/in-container"
	printf '#!/bin/sh\nexit 0\n' >"$p/scripts/host-setup"
	printf '#!/bin/sh\nsleep 1\ntouch built\n' >"$p/scripts/build-all"
	printf '#!/bin/sh\n[ -f built ] || { echo "matrix started before the build ended"; exit 9; }\necho booted >booted\n' >"$p/scripts/matrix"
	chmod +x "$p"/scripts/*
	run make -C "$p" -j4 all RUNTIME=native
	echo "$output"
	[ "$status" -eq 0 ]
	[ -f "$p/booted" ]
	# and a failed build still boots what there is, then fails
	printf '#!/bin/sh\ntouch built\nexit 2\n' >"$p/scripts/build-all"
	rm -f "$p/booted"
	run make -C "$p" -j4 all RUNTIME=native
	[ "$status" -ne 0 ]
	[ -f "$p/booted" ]
}

@test "the debug variant asks for lockdep, atomic-sleep checks, KASAN, kmemleak and panic_on_warn" {
	for o in CONFIG_PROVE_LOCKING=y CONFIG_DEBUG_ATOMIC_SLEEP=y CONFIG_KASAN=y CONFIG_DEBUG_KMEMLEAK=y; do
		V kconfig debug | grep -qx "$o"
	done
	[[ "$(V get debug cmdline)" == *panic_on_warn=1* ]]
	# tinyconfig's traps (see configs/base.config): BUG on, SLUB_TINY off.
	grep -qx 'CONFIG_BUG=y' "$TOP/configs/base.config"
	grep -qx '# CONFIG_SLUB_TINY is not set' "$TOP/configs/base.config"
}

@test "the GitHub workflow parses, runs every variant, uploads artifacts/, calls scripts that exist" {
	run python3 - "$TOP/.github/workflows/kernels.yml" "$TOP" <<'PY'
import os, re, sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
top = sys.argv[2]
jobs = wf["jobs"]
matrix = jobs["variant"]["strategy"]["matrix"]["variant"]
configs = sorted(f[:-8] for f in os.listdir(os.path.join(top, "configs")) if f.endswith(".variant"))
assert sorted(matrix) == configs, (matrix, configs)
runs = [s.get("run", "") for j in jobs.values() for s in j["steps"]]
scripts = set(re.findall(r"\b((?:ci|scripts)/[\w.-]+)", "\n".join(runs)))
assert scripts, "no script is called"
for s in scripts:
    assert os.access(os.path.join(top, s), os.X_OK), s
uses = [s["uses"] for j in jobs.values() for s in j["steps"] if "uses" in s]
assert any(u.startswith("actions/upload-artifact@") for u in uses)
# the whole artifacts directory: a boot-only variant's kernel is in
# another variant's directory
paths = [s["with"]["path"] for s in jobs["variant"]["steps"]
         if s.get("uses", "").startswith("actions/upload-artifact@")]
assert "artifacts/" in paths, paths
assert "ci/variant-job" in scripts and "ci/summary-job" in scripts, scripts
print("ok", sorted(scripts))
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the GitLab CI file parses and calls the same scripts" {
	run python3 -c '
import sys, yaml, os
c = yaml.safe_load(open(sys.argv[1]))
cmds = c["variant"]["script"] + c["summary"]["script"]
assert any("ci/variant-job" in x for x in cmds) and any("ci/summary-job" in x for x in cmds)
assert "artifacts/" in c["variant"]["artifacts"]["paths"]
vs = c["variant"]["parallel"]["matrix"][0]["VARIANT"]
assert sorted(vs) == sorted(f[:-8] for f in os.listdir(sys.argv[2]) if f.endswith(".variant")), vs
' "$TOP/.gitlab-ci.yml" "$TOP/configs"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "every make target the README names exists" {
	targets=$(make -C "$TOP" -qp 2>/dev/null | sed -n 's/^\([a-z][a-z-]*\):.*/\1/p' | sort -u)
	# `make x` in backquotes and code lines.
	for t in $(grep -oE '(`|^    )make [a-z][a-z_-]*' "$TOP/README.md" | awk '{print $2}' | sort -u); do
		grep -qx "$t" <<<"$targets" || { echo "README names make $t, which does not exist"; return 1; }
	done
}

@test "shell scripts and the tests pass shellcheck" {
	cd "$TOP"
	mapfile -t files < <(grep -lE '^#!/usr/bin/env (bash|sh)|^#!/bin/sh' scripts/* ci/* guest-tests/runner/* tests/fakes/* .ci/run 2>/dev/null)
	[ "${#files[@]}" -gt 5 ]
	run shellcheck -x scripts/lib.sh "${files[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	# The bats files too: this is what finds a `! cmd` that can never
	# fail a test (SC2314, SC2315).
	run shellcheck -x -s bash -e SC2030,SC2031,SC2034,SC2154,SC2164,SC1090,SC1091,SC2016,SC2317,SC2329,SC2005,SC2013 tests/*.bats tests/harness/*.bats tests/helpers.bash
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "make check: a failed build still boots what built, and every matrix failure is counted" {
	p=$BATS_TEST_TMPDIR/proj
	mkdir -p "$p/scripts" "$p/tests/harness"
	cp "$TOP/scripts/check" "$TOP/scripts/lib.sh" "$p/scripts/"
	touch "$p/tests/harness/x.bats"
	stub() { printf '#!/bin/sh\n%s\n' "$2" >"$p/scripts/$1"; chmod +x "$p/scripts/$1"; }
	stub run-tests 'echo "${2:-tooling}: 4 passed, 0 failed, 1 skipped"'
	stub in-container 'exec "$@"'
	stub build-all 'echo "kernel off FAILED"; exit 2'
	# what scripts/summarize ends with: off had no result (1 failure)
	stub matrix 'echo "matrix: 3 passed, 1 failed, 0 skipped"; exit 2'
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "check: 11 passed, 2 failed, 2 skipped" ]
	# a matrix that dies before its closing line is a failure too
	stub build-all 'exit 0'
	stub matrix 'echo "Traceback"; exit 2'
	run env -u TOP "$p/scripts/check"
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "check: 8 passed, 1 failed, 2 skipped" ]
}
