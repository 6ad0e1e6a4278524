#!/usr/bin/env bats
# The project's own data and code: variant files, suites, the one pin of
# the kernel version, CI workflow files, C hygiene (shellcheck: shellcheck.bats;
# make check and run-tests: check.bats).
bats_require_minimum_version 1.5.0

load ../helpers

variants() { "$TOP/scripts/pipeline" config list --all; }

@test "the kernel package version is pinned in exactly one file" {
	version=$(awk -F= '!/^#/ && NF { print $2; exit }' "$TOP/scripts/deps/kernel-source.txt")
	[ -n "$version" ]
	run git -C "$TOP" grep -lF -- "$version" -- ':!*.md'
	[ "$output" = scripts/deps/kernel-source.txt ]
	# every package of that file (the source, Debian's configs) is of the
	# same upload
	run awk -F= '!/^#/ && NF { print $2 }' "$TOP/scripts/deps/kernel-source.txt"
	[ "${#lines[@]}" -ge 1 ]
	for v in "${lines[@]}"; do
		[ "$v" = "$version" ] || { echo "kernel-source.txt pins $v and $version"; return 1; }
	done
}

@test "Debian's kernel that distro-modules boots is of the pinned upload" {
	version=$(awk -F= '!/^#/ && NF { print $2; exit }' "$TOP/scripts/deps/kernel-source.txt")
	pkg=$(awk '!/^#/ && NF { print $1; exit }' "$TOP/scripts/deps/distro-vm-kernel.txt")
	[[ "$pkg" =~ ^linux-image-([0-9.]+)\+deb[0-9]+-amd64-unsigned$ ]]
	[ "${BASH_REMATCH[1]}" = "${version%%-*}" ] ||
		{ echo "$pkg is not of the pinned upload $version"; return 1; }
}

@test "a variant name is checked by one rule everywhere: test-variant, rerun-failed, matrix, boot-plan refuse '../x' with exit 2" {
	for cmd in test-variant rerun-failed; do
		run "$TOP/scripts/$cmd" '../x'
		[ "$status" -eq 2 ]
		[[ "$output" == *"invalid variant name '../x'"* ]]
	done
	run env VARIANTS='default ../x' "$TOP/scripts/matrix"
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid variant name"* ]]
	run "$TOP/scripts/pipeline" boot plan qemu "$BATS_TEST_TMPDIR" '../x'
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid variant name '../x'"* ]]
}

@test "every kernel has a release of its own (uname -r, /lib/modules, the package names)" {
	# With one release for all, debug's packages would replace default's
	# on a test machine and a module built for one would load into the
	# other (vermagic cannot tell them apart).
	declare -A owner
	local v k vs
	mapfile -t vs < <(variants)
	[ "${#vs[@]}" -gt 1 ]
	# (each variant's kernel in one process: "NAME KERNEL" a line)
	while read -r v k; do
		[ "$k" = "$v" ] || continue
		rel=$("$TOP/scripts/pipeline" config kconfig "$v" | sed -n 's/^CONFIG_LOCALVERSION="\(.*\)"$/\1/p' | tail -n1)
		[ -n "$rel" ] || { echo "$v: no CONFIG_LOCALVERSION"; return 1; }
		[ -z "${owner[$rel]:-}" ] || { echo "$v and ${owner[$rel]} are both $rel"; return 1; }
		owner[$rel]=$v
	done < <("$TOP/scripts/pipeline" config each kernel "${vs[@]}")
	[ "${#owner[@]}" -gt 1 ]
	[ "${owner[-pipeline]}" = default ]
}

@test "one reader per fact: defaults, the base image, the series, no inline Python in scripts" {
	cd "$TOP"
	# the run-parameter defaults live in pipeline/params.py only
	run git grep -nE "512M|smp 2|suites smoke|:-smoke|timeout 300" -- scripts ci Makefile pipeline ':!pipeline/params.py'
	[ "$output" = "" ]
	# the local base image is named once
	run git grep -lF "kernel-pipeline-base:" -- ':!*.md' ':!tests'
	[ "$output" = scripts/lib.sh ]
	# patches/series is parsed in pipeline/series.py only
	run git grep -lE '(PATCHES|patches)/series"?' -- scripts ci pipeline ':!pipeline/series.py'
	echo "$output"
	for f in $output; do
		run ! grep -nE 'read -r p|open\(.*series' "$f"
	done
	# no Python hidden in shell scripts: every Python entry point is a
	# file of its own, reached by the tests
	run git grep -lE "python3 -( |$)|<<'?PY" -- scripts ci .ci Makefile
	[ "$output" = "" ]
	# variant files are read by pipeline/config.py only
	run git grep -nE '#@\[|"#@|\^#@' -- scripts ci pipeline ':!pipeline/config.py'
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
		scripts/boot-interactive scripts/podman-probe scripts/repro-env scripts/pipeline scripts/apt-sources \
		scripts/host-setup scripts/in-runtime ci/variant-job expect-scripts/boot-and-test.exp \
		scripts/rerun-failed scripts/bisect-step ci/build-job ci/boot-job scripts/build-packages \
		scripts/boot-packages scripts/build-tests-package scripts/with-knobs scripts/source-pin ci/matrix; do
		run "$TOP/$f"
		[ "$status" -eq 2 ] || { echo "$f without arguments: exit $status: $output"; return 1; }
		[[ "$output" == *sage* ]] || { echo "$f: no usage message: $output"; return 1; }
	done
	# the pipeline's subcommands that need arguments, called without
	for c in "build check-config" summarize parse "build describe-artifacts" "boot plan" config \
		compare symbolize report select-tests "build donor" artifacts "artifacts stale" \
		"artifacts manifest" "config series" record-failure bench-table; do
		# shellcheck disable=SC2086 # a subcommand of one or two words
		run "$TOP/scripts/pipeline" $c
		[ "$status" -eq 2 ] || { echo "pipeline $c without arguments: exit $status: $output"; return 1; }
		[[ "$output" == *sage* ]] || { echo "pipeline $c: no usage message: $output"; return 1; }
	done
	# scripts that take none, called with one
	for f in scripts/container-build scripts/matrix scripts/prepare-source scripts/source-date scripts/check \
		scripts/repro-check scripts/series-check scripts/patches-export scripts/image scripts/base-image \
		scripts/accel-probe scripts/bisect-run \
		scripts/build-and-boot scripts/bench-build scripts/distccd-serve scripts/compiler-env \
		scripts/check-scale ci/newest-upload; do
		run "$TOP/$f" --no-such-option extra
		[ "$status" -eq 2 ] || { echo "$f with a bogus argument: exit $status: $output"; return 1; }
	done
	run "$TOP/ci/summary-job" a b
	[ "$status" -eq 2 ]
	run "$TOP/scripts/run-tests" --no-such-option
	[ "$status" -eq 2 ]
	[ ! -e "$sandbox" ]
}

@test "Python entry points run Debian's python3 (scripts/deps/check.txt), not the first python3 on PATH" {
	# A pyenv or venv shim first on PATH costs 0.4 s a call (0.04 s for
	# /usr/bin/python3), and the pipeline makes hundreds of calls; nor
	# does such a Python have what apt installed.
	cd "$TOP"
	mapfile -t py < <(grep -l '^#!.*python' scripts/* ci/* 2>/dev/null)
	# (the one Python entry point: every stage is a subcommand of it)
	[[ " ${py[*]} " == *" scripts/pipeline "* ]]
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "shim $*" >>"%s"\nexit 9\n' "$BATS_TEST_TMPDIR/used" >"$BATS_TEST_TMPDIR/bin/python3"
	chmod +x "$BATS_TEST_TMPDIR/bin/python3"
	for f in "${py[@]}"; do
		PATH="$BATS_TEST_TMPDIR/bin:$PATH" run "$f" --help
		[ "$status" -eq 0 ] || { echo "$f: $output"; return 1; }
	done
	[ ! -e "$BATS_TEST_TMPDIR/used" ]
}

@test "an uncaught exception in a Python entry point exits 2 with a message" {
	# every Python entry point goes through entry.run
	cd "$TOP"
	for f in $(grep -l '^#!.*python3' scripts/* ci/* 2>/dev/null); do
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

@test "make all is the main job, one script (it orders builds and boots), its failure is make's" {
	p=$BATS_TEST_TMPDIR/proj
	mkdir -p "$p/scripts"
	cp "$TOP/Makefile" "$p/"
	cp "$TOP/scripts/checkout-lock" "$TOP/scripts/lib.sh" "$TOP/scripts/with-knobs" "$p/scripts/"
	printf '#!/bin/sh\nexec "$@"\n' >"$p/scripts/in-runtime"
	printf '#!/bin/sh\nexit 0\n' >"$p/scripts/host-setup"
	printf '#!/bin/sh\necho ran >>ran\nexit "${RC:-0}"\n' >"$p/scripts/build-and-boot"
	chmod +x "$p"/scripts/*
	# The copy's own checkout (and lock), not this one's: TOP and BUILD
	# exported here would point its scripts/lib.sh at the real build/,
	# whose lock any make running in this checkout holds.
	run env -u TOP -u BUILD make -C "$p" -j4 all RUNTIME=native
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$p/ran")" = ran ]
	# (tests/integration/build-speed.bats: builds and boots overlap, failures are rows)
	RC=3 run env -u TOP -u BUILD make -C "$p" -j4 all RUNTIME=native
	[ "$status" -ne 0 ]
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

@test "the GitHub workflow: tooling tests first, each kernel built once, every variant booted from its set, cached, fenced" {
	run python3 - "$TOP/.github/workflows/kernels.yml" "$TOP" <<'PY'
import os, re, subprocess, sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
top = sys.argv[2]
V = lambda *a: subprocess.run([os.path.join(top, "scripts/pipeline"), "config"] + list(a),
                              capture_output=True, text=True, check=True).stdout.split()
variants = V("list")
each = V("each", "kernel", *variants)  # (one process: "NAME KERNEL" a line)
kernel_of = dict(zip(each[0::2], each[1::2]))
assert list(kernel_of) == variants, each
jobs = wf["jobs"]
# the JUnit action needs to write checks; a newer push cancels an older run
assert wf["permissions"]["checks"] == "write", wf.get("permissions")
assert "concurrency" in wf and "github.ref" in wf["concurrency"]["group"], wf.get("concurrency")
assert wf["concurrency"].get("cancel-in-progress") is True
runs = lambda job: [s.get("run", "") for s in jobs[job]["steps"]]
uses = lambda job: [s for s in jobs[job]["steps"] if "uses" in s]
# the fast tooling tests first, and nothing is built before they pass
assert any(re.search(r"\bmake test\b", r) for r in runs("tooling")), runs("tooling")
assert "tooling" in jobs["build"]["needs"], jobs["build"]["needs"]
# the integration tests run too, beside the builds
assert any(re.search(r"\bmake test-integration\b", r) for r in runs("integration")), runs("integration")
# the matrices are configs/'s, generated (ci/matrix github, tested
# below), never listed here: each kernel once, every variant from its set
assert any(re.search(r"\bci/matrix github >>\s*\"?\$GITHUB_OUTPUT", r) for r in runs("matrix")), runs("matrix")
outs = jobs["matrix"]["outputs"]
assert set(outs) == {"kernels", "boots"}, outs
assert jobs["build"]["strategy"]["matrix"] == {"kernel": "${{ fromJSON(needs.matrix.outputs.kernels) }}"}
assert set(jobs["build"]["needs"]) == {"tooling", "matrix"}, jobs["build"]["needs"]
assert any("ci/build-job ${{ matrix.kernel }}" in r for r in runs("build")), runs("build")
# every variant boots from its kernel's set, without building
assert jobs["boot"]["strategy"]["matrix"] == {"include": "${{ fromJSON(needs.matrix.outputs.boots) }}"}
assert set(jobs["boot"]["needs"]) == {"build", "matrix"}, jobs["boot"]["needs"]
assert "needs.matrix.result == 'success'" in jobs["boot"]["if"], jobs["boot"]["if"]
assert not any("build-job" in r or "container-build" in r for r in runs("boot")), runs("boot")
assert any("ci/boot-job ${{ matrix.variant }}" in r for r in runs("boot"))
dl = [s for s in uses("boot") if s["uses"].startswith("actions/download-artifact@")]
assert dl and dl[0]["with"]["name"] == "artifacts-${{ matrix.kernel }}", dl
# ccache cached, keyed on the image's inputs and the series
cache = [s for s in uses("build") if s["uses"].startswith("actions/cache@")]
assert cache and cache[0]["with"]["path"] == "build/ccache", cache
# ... which is where the build writes it, through sudo (the default is the
# per-user cache, which a fresh runner does not keep)
assert jobs["build"]["env"]["CCACHE_DIR"] == "${{ github.workspace }}/build/ccache", jobs["build"]["env"]
assert any("--preserve-env=" in r and "CCACHE_DIR" in r.split("--preserve-env=")[1].split()[0]
           for r in runs("build")), runs("build")
key = cache[0]["with"]["key"]
assert "Containerfile" in key and "patches/" in key and "matrix.kernel" in key, key
# the uploaded set is the contract: its own directory, no hidden files
up = [s for s in uses("build") if s["uses"].startswith("actions/upload-artifact@")]
sets = [s for s in up if s["with"]["name"] == "artifacts-${{ matrix.kernel }}"]
assert sets and sets[0]["with"]["path"].rstrip("/") == "artifacts-${{ matrix.kernel }}", up
assert sets[0]["with"].get("include-hidden-files") is False
# the summary table is fenced as code in the step summary
summ = "\n".join(runs("summary"))
assert "ci/summary-job" in summ and "```" in summ and "GITHUB_STEP_SUMMARY" in summ, summ
# the JUnit report of every boot
assert any(s["uses"].startswith("mikepenz/action-junit-report@") for s in uses("boot"))
# every script called exists
scripts = set(re.findall(r"\b((?:ci|scripts)/[\w.-]+)", "\n".join(r for j in jobs for r in runs(j))))
for s in scripts:
    assert os.access(os.path.join(top, s), os.X_OK), s
print("ok", sorted(scripts))
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the GitLab CI file: the same jobs in a child pipeline ci/matrix gitlab generates, a ccache cache, one directory per artifact set (no manifest overwritten)" {
	run python3 - "$TOP/.gitlab-ci.yml" "$TOP/ci/gitlab-kernels.yml" "$TOP" <<'PY'
import json, os, subprocess, sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
t = yaml.safe_load(open(sys.argv[2]))
top = sys.argv[3]
assert c["stages"] == ["tooling", "build"], c["stages"]
assert "make test" in c["tooling"]["script"]
assert "make test-integration" in c["integration"]["script"] and c["integration"]["stage"] == "build"
# the child pipeline: written by ci/matrix gitlab, an artifact, triggered
g = c["kernel-matrix"]
assert g["stage"] == "tooling" and any("ci/matrix gitlab >" in x for x in g["script"]), g
child = g["artifacts"]["paths"][0]
assert any(x.endswith(child) for x in g["script"] if "ci/matrix gitlab" in x), g["script"]
k = c["kernels"]
assert k["stage"] == "build" and set(k["needs"]) == {"tooling", "kernel-matrix"}, k
assert k["trigger"]["include"] == [{"artifact": child, "job": "kernel-matrix"}], k["trigger"]
assert k["trigger"]["strategy"] == "depend"
# the jobs it runs, in ci/gitlab-kernels.yml (the generated file extends them)
assert t["stages"] == ["build", "boot", "summary"], t["stages"]
b = t[".build"]
assert any(x.startswith("ci/build-job ") and "artifacts-$KERNEL" in x for x in b["script"]), b["script"]
# every job has its own directory: later stages see all jobs artifacts in one tree
assert "artifacts-$KERNEL/" in b["artifacts"]["paths"], b["artifacts"]
assert "artifacts/" not in b["artifacts"]["paths"]
assert b["cache"]["paths"] == ["build/ccache/"], b["cache"]
assert b["variables"]["CCACHE_DIR"] == "$CI_PROJECT_DIR/build/ccache", b.get("variables")
assert "$KERNEL" in b["cache"]["key"]["prefix"] and "Containerfile" in b["cache"]["key"]["files"]
boot = t[".boot"]
assert any(x.startswith("ci/boot-job ") and "artifacts-$KERNEL" in x for x in boot["script"])
assert boot["artifacts"]["reports"]["junit"] == "results/$VARIANT/junit.xml"
assert any("ci/summary-job" in x for x in t["summary"]["script"])
print("ok")
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "ci/matrix: the CI matrices (GitHub outputs, GitLab's child pipeline) are scripts/pipeline config list's; a new configs/NAME.variant is in them with no other edit" {
	check() { # the generated matrices against config list / get kernel
		python3 - "$1" "$2" "$TOP" <<'PY'
import json, os, subprocess, sys, yaml
gh, gl, top = open(sys.argv[1]).read(), yaml.safe_load(open(sys.argv[2])), sys.argv[3]
V = lambda *a: subprocess.run([os.path.join(top, "scripts/pipeline"), "config"] + list(a),
                              capture_output=True, text=True, check=True).stdout.split()
variants = V("list")
each = V("each", "kernel", *variants)  # (one process: "NAME KERNEL" a line)
kernel_of = dict(zip(each[0::2], each[1::2]))
assert list(kernel_of) == variants, each
kernels = list(dict.fromkeys(kernel_of[v] for v in variants))
# GitHub: name=JSON lines for $GITHUB_OUTPUT, one line each
out = dict(line.split("=", 1) for line in gh.splitlines())
assert set(out) == {"kernels", "boots"}, out
assert json.loads(out["kernels"]) == kernels, out["kernels"]
assert json.loads(out["boots"]) == [{"variant": v, "kernel": kernel_of[v]} for v in variants], out["boots"]
# GitLab: a child pipeline extending ci/gitlab-kernels.yml's jobs
assert gl["include"] == [{"local": "ci/gitlab-kernels.yml"}], gl.get("include")
assert gl["build"]["extends"] == ".build" and gl["boot"]["extends"] == ".boot"
assert gl["build"]["parallel"]["matrix"] == [{"KERNEL": kernels}], gl["build"]
assert gl["boot"]["parallel"]["matrix"] == [{"VARIANT": v, "KERNEL": kernel_of[v]} for v in variants], gl["boot"]
print(" ".join(variants))
PY
	}
	run "$TOP/ci/matrix" github
	[ "$status" -eq 0 ]
	echo "$output" >"$BATS_TEST_TMPDIR/gh"
	"$TOP/ci/matrix" gitlab >"$BATS_TEST_TMPDIR/gl"
	run check "$BATS_TEST_TMPDIR/gh" "$BATS_TEST_TMPDIR/gl"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ " $output " == *" default "* && " $output " == *" isolated "* ]]
	# a new variant file, nothing else: built (its own kernel) and booted
	export CONFIGS=$BATS_TEST_TMPDIR/configs
	cp -a "$TOP/configs" "$CONFIGS"
	printf '#@ extends = default\nCONFIG_NEW_THING=y\n' >"$CONFIGS/newkernel.variant"
	printf '#@ extends = default\n#@ kernel = default\n' >"$CONFIGS/newboot.variant"
	"$TOP/ci/matrix" github >"$BATS_TEST_TMPDIR/gh"
	"$TOP/ci/matrix" gitlab >"$BATS_TEST_TMPDIR/gl"
	run check "$BATS_TEST_TMPDIR/gh" "$BATS_TEST_TMPDIR/gl"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ " $output " == *" newkernel "* && " $output " == *" newboot "* ]]
	grep -q '"newkernel"' "$BATS_TEST_TMPDIR/gh"
	# a bad variant file stops the generator (exit 2, named), never an empty matrix
	echo 'nonsense' >"$CONFIGS/bad.variant"
	run "$TOP/ci/matrix" github
	[ "$status" -eq 2 ]
	[[ "$output" == *"configs/bad.variant:1"* ]]
	run "$TOP/ci/matrix" nosuch
	[ "$status" -eq 2 ]
	[[ "$output" == *usage* ]]
}

@test "the distro packages job (GitHub, GitLab): by hand or on tags, the runner from a variable, ci/build-job of a Debian-config kernel, uploaded" {
	run python3 - "$TOP/.github/workflows/distro-packages.yml" "$TOP/.gitlab-ci.yml" "$TOP" <<'PY'
import os, re, subprocess, sys, yaml
gh = yaml.safe_load(open(sys.argv[1]))
gl = yaml.safe_load(open(sys.argv[2]))
top = sys.argv[3]
V = lambda *a: subprocess.run([os.path.join(top, "scripts/pipeline"), "config"] + list(a),
                              capture_output=True, text=True, check=True).stdout.split()
# YAML 1.1 reads the key "on" as True
on = gh.get("on", gh.get(True))
assert "workflow_dispatch" in on and on["push"]["tags"], on
assert "pull_request" not in on and "branches" not in on["push"], on
job = gh["jobs"]["packages"]
assert re.fullmatch(r"\$\{\{ vars\.\w+ \|\| '[\w.-]+' \}\}", job["runs-on"]), job["runs-on"]
assert job["timeout-minutes"] <= 360
kernels = on["workflow_dispatch"]["inputs"]["variant"]["options"]
assert "distro" in kernels, kernels
for k in kernels:
    # each a kernel of its own on Debian's config, not in the default set
    assert V("get", k, "kernel") == [k] and V("get", k, "config") == ["debian"], k
    assert k not in V("list"), k
runs = [s.get("run", "") for s in job["steps"]]
assert any(r.startswith('sudo --preserve-env=BASE_IMAGE,CCACHE_DIR ci/build-job "$KERNEL" "artifacts-$KERNEL"') for r in runs), runs
up = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
assert up and up[0]["with"]["path"].rstrip("/") == "artifacts-${{ env.KERNEL }}", up
assert up[0]["with"].get("include-hidden-files") is False
# GitLab: the same job, manual or on tags, its runner's tag from a variable
d = gl["distro-packages"]
assert d["stage"] in gl["stages"] and d["needs"] == [], d
assert {"if": "$CI_COMMIT_TAG"} in d["rules"], d["rules"]
assert any(r.get("when") == "manual" for r in d["rules"]), d["rules"]
assert d["tags"] == ["$DISTRO_RUNNER_TAG"] and d["variables"]["DISTRO_RUNNER_TAG"], d
assert V("get", d["variables"]["KERNEL"], "config") == ["debian"]
assert 'ci/build-job "$KERNEL" "artifacts-$KERNEL"' in d["script"], d["script"]
assert "artifacts-$KERNEL/" in d["artifacts"]["paths"]
print("ok")
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "ci/build-job and ci/boot-job: a boot-only kernel and bad arguments are errors" {
	run "$TOP/ci/build-job" isolated
	[ "$status" -eq 2 ]
	[[ "$output" == *"variant 'isolated' is boot-only: build the kernel it boots, 'default'"* ]]
	run "$TOP/ci/boot-job" default
	[ "$status" -eq 2 ]
	[[ "$output" == *usage* ]]
}

@test "make help lists every target and every variable with its default; README's tables say the same" {
	run make -s -C "$TOP" help
	[ "$status" -eq 0 ]
	help=$output
	vars=$("$TOP/scripts/make-help" --variables)
	[ "$(wc -l <<<"$vars")" -ge 10 ]
	# every variable the Makefile takes from the environment is documented
	for v in $(sed -n 's/^\([A-Z_]*\) *?=.*/\1/p' "$TOP/Makefile"); do
		grep -q "^$v	" <<<"$vars" || { echo "make help does not list $v"; return 1; }
	done
	while IFS=$'\t' read -r name def meaning; do
		[[ "$help" == *"  $name"*"$meaning [$def]"* ]] || { echo "make help: $name"; return 1; }
		# README: | `NAME` | meaning | default |, code quotes aside
		row=$(grep -F "| \`$name\` |" "$TOP/README.md" | tr -d '\`') ||
			{ echo "README has no row for $name"; return 1; }
		[ "$row" = "| $name | $meaning | $def |" ] ||
			{ printf 'README row:  %s\nmake help:   | %s | %s | %s |\n' "$row" "$name" "$meaning" "$def"; return 1; }
	done <<<"$vars"
	# README's variable table has no variable make help does not know
	for name in $(sed -n '/^| variable | meaning | default |$/,/^$/p' "$TOP/README.md" | sed -n 's/^| `\([A-Z_]*\)` |.*/\1/p'); do
		grep -q "^$name	" <<<"$vars" || { echo "README lists $name, make help does not"; return 1; }
	done
	# every target make help lists is in README's target table
	for t in $(sed -n '/^targets:$/,/^$/p' <<<"$help" | awk 'NF { print $1 }' | grep -v '^targets:$'); do
		grep -qE "^\| [^|]*\`make $t( [^\`]*)?\`" "$TOP/README.md" || { echo "README's target table lacks make $t"; return 1; }
	done
}

@test "make help and README name make list-tests and VERBOSE (issue 46)" {
	run make -s -C "$TOP" help
	[ "$status" -eq 0 ]
	[[ "$output" == *"  list-tests "*"without booting"* ]]
	[[ "$output" == *"  VERBOSE "* ]]
	grep -q '^| `VERBOSE` |' "$TOP/README.md"
	grep -q '`make list-tests VARIANT=x' "$TOP/README.md"
}

@test "knobs (issue 46): make, make test-variant and make boot go through scripts/with-knobs; make help and README's first screen name KCONFIG_ADD, APPEND, QEMU_ARGS, KERNEL_TREE" {
	for t in all test-variant boot; do
		run make -n -s -C "$TOP" "$t" RUNTIME=native KCONFIG_ADD=CONFIG_X=y
		[[ "$output" == *"scripts/with-knobs "* ]] || { echo "make $t: $output"; return 1; }
	done
	run make -s -C "$TOP" help
	for v in KCONFIG_ADD APPEND QEMU_ARGS KERNEL_TREE; do
		[[ "$output" == *"  $v "* ]] || { echo "make help lacks $v"; return 1; }
		head -n 40 "$TOP/README.md" | grep -q "$v=" || { echo "README's first screen lacks $v"; return 1; }
	done
	for t in all test-variant boot; do
		run make -n -s -C "$TOP" "$t" RUNTIME=native KERNEL_TREE=/x
		[[ "$output" == *"scripts/with-knobs "* ]] || { echo "make $t: $output"; return 1; }
	done
	# the knobs reach the container
	grep -q 'KCONFIG_ADD APPEND QEMU_ARGS KERNEL_TREE' "$TOP/scripts/in-runtime"
	# a relative KERNEL_TREE reaches the scripts absolute (relative to the
	# checkout, where make runs)
	printf 'show-tree:\n\t@echo "$$KERNEL_TREE"\n' >"$BATS_TEST_TMPDIR/show.mk"
	run make -s -C "$TOP" -f Makefile -f "$BATS_TEST_TMPDIR/show.mk" show-tree KERNEL_TREE=../linux
	[ "$output" = "$(dirname "$TOP")/linux" ]
	# and so does a relative ARTIFACTS (a downloaded set)
	printf 'show-artifacts:\n\t@echo "$$ARTIFACTS"\n' >"$BATS_TEST_TMPDIR/show.mk"
	run make -s -C "$TOP" -f Makefile -f "$BATS_TEST_TMPDIR/show.mk" show-artifacts ARTIFACTS=../dl
	[ "$output" = "$(dirname "$TOP")/dl" ]
}

@test "make-help: a documented default that differs from the Makefile's is an error" {
	printf '## X: a thing [1]\nX ?= 2\n' >"$BATS_TEST_TMPDIR/mk"
	run "$TOP/scripts/make-help" "$BATS_TEST_TMPDIR/mk"
	[ "$status" -eq 2 ]
	[[ "$output" == *"X ?= 2, but its line above says [1]"* ]]
	printf '## X: a thing without a default\nX ?=\n' >"$BATS_TEST_TMPDIR/mk"
	run "$TOP/scripts/make-help" "$BATS_TEST_TMPDIR/mk"
	[ "$status" -eq 2 ]
}

@test "README's layout map names every top-level directory and every module of the package; docs/architecture.md's table every module of its subpackages too" {
	cd "$TOP"
	map=$(sed -n '/^## Layout$/,/^## /p' README.md)
	[ -n "$map" ]
	for d in $(git ls-files | grep / | cut -d/ -f1 | grep -v '^\.' | sort -u); do
		grep -qE "^    $d/ " <<<"$map" || { echo "README's layout map lacks $d/"; return 1; }
	done
	for m in $(git ls-files 'pipeline/*.py' 'pipeline/*/' | sed 's|^pipeline/||' | grep -vE '(^|/)__(init|main)__\.py$' |
		sed 's|/.*|/|' | sort -u); do
		grep -qE "^ +$m " <<<"$map" || { echo "README's layout map lacks pipeline/$m"; return 1; }
	done
	# and names nothing that is not there
	for d in $(sed -nE 's|^    ([a-z-]+)/ .*|\1|p' <<<"$map"); do
		[ -d "$d" ] || { echo "README's layout map names $d/, which does not exist"; return 1; }
	done
	for m in $(grep -oE '\b[a-z_]+\.py\b' <<<"$map" | sort -u); do
		[ -n "$(find pipeline -name "$m")" ] || { echo "README's layout map names $m, which is not in pipeline/"; return 1; }
	done
	# docs/architecture.md's module table: every module, subpackages too
	diff <(grep -oE '^\| `[a-z_/]+\.py`' docs/architecture.md | sed 's/^| `//; s/`$//' | sort) \
		<(git ls-files 'pipeline/*.py' | sed 's|^pipeline/||' | grep -vE '(^|/)__(init|main)__\.py$' | sort) ||
		{ echo "docs/architecture.md's module table (<) and pipeline/ (>) differ"; return 1; }
}

@test "every make target the README names exists" {
	targets=$(make -C "$TOP" -qp 2>/dev/null | sed -n 's/^\([a-z][a-z-]*\):.*/\1/p' | sort -u)
	# `make x` in backquotes and code lines.
	for t in $(grep -oE '(`|^    )make [a-z][a-z_-]*' "$TOP/README.md" | awk '{print $2}' | sort -u); do
		grep -qx "$t" <<<"$targets" || { echo "README names make $t, which does not exist"; return 1; }
	done
}
