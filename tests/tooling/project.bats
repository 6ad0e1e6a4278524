#!/usr/bin/env bats
# The project's own data and code: variant files, suites, the one pin of
# the kernel version, CI workflow files, shell and C hygiene.
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
	for v in $(variants); do
		[ "$("$TOP/scripts/pipeline" config get "$v" kernel)" = "$v" ] || continue
		rel=$("$TOP/scripts/pipeline" config kconfig "$v" | sed -n 's/^CONFIG_LOCALVERSION="\(.*\)"$/\1/p' | tail -n1)
		[ -n "$rel" ] || { echo "$v: no CONFIG_LOCALVERSION"; return 1; }
		[ -z "${owner[$rel]:-}" ] || { echo "$v and ${owner[$rel]} are both $rel"; return 1; }
		owner[$rel]=$v
	done
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
kernel_of = {v: V("get", v, "kernel")[0] for v in variants}
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
kernel_of = {v: V("get", v, "kernel")[0] for v in variants}
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

# That `shellcheck -x OPTIONS FILE...` passes (shellcheck_files OPTIONS
# FILE...), run a few files a process, one process per CPU (one shellcheck over
# every file was the longest test of make test, 20 s of CPU in one
# process). A file whose verdict is known is not checked again:
# build/shellcheck/ keeps a name per file that passed, made of its path,
# its bytes, and what else decides the verdict (shellcheck's version,
# OPTIONS, .shellcheckrc and the libraries the scripts source,
# scripts/*.sh); a change to any of them is a file not yet checked.
shellcheck_files() {
	local opts=$1 common cache=$TOP/build/shellcheck f h todo=() keys=()
	shift
	common=$({ shellcheck --version; printf '%s\n' "$opts"; cat .shellcheckrc scripts/*.sh; } | sha256sum | cut -c1-16)
	mkdir -p "$cache"
	while read -r h f; do
		h="$cache/${f//\//%}.$common.${h:0:16}"
		[ -e "$h" ] || { todo+=("$f"); keys+=("$h"); }
	done < <(sha256sum -- "$@")
	echo "shellcheck: ${#todo[@]} of $# files not checked before"
	[ "${#todo[@]}" -gt 0 ] || return 0
	# shellcheck disable=SC2086 # OPTIONS is a list of words
	run xargs -0 -n 4 -P "$(nproc)" shellcheck -x $opts < <(printf '%s\0' "${todo[@]}")
	echo "$output"
	[ "$status" -eq 0 ] || return 1
	touch "${keys[@]}"
}

@test "shell scripts and the tests pass shellcheck" {
	cd "$TOP"
	mapfile -t files < <(grep -lE '^#!/usr/bin/env (bash|sh)|^#!/bin/sh' scripts/* scripts/dpkg-shim/* ci/* guest-tests/runner/* tests/fixtures/fakes/* .ci/run 2>/dev/null)
	[ "${#files[@]}" -gt 5 ]
	shellcheck_files "" scripts/lib.sh "${files[@]}"
	# The bats files too: this is what finds a `! cmd` that can never
	# fail a test (SC2314, SC2315).
	shellcheck_files "-s bash -e SC2030,SC2031,SC2034,SC2154,SC2164,SC1090,SC1091,SC2016,SC2317,SC2329,SC2005,SC2013" \
		tests/tooling/*.bats tests/integration/*.bats tests/system/*.bats tests/helpers.bash
}

@test "shellcheck_files: a file that fails is named, and checked again until it passes; a known one is not checked" {
	cd "$TOP"
	# (a scratch cache: the test's own build/)
	local top=$TOP
	TOP=$BATS_TEST_TMPDIR
	printf '#!/bin/sh\necho $1\n' >"$BATS_TEST_TMPDIR/bad.sh"
	printf '#!/bin/sh\necho "$1"\n' >"$BATS_TEST_TMPDIR/good.sh"
	run shellcheck_files "" "$BATS_TEST_TMPDIR/bad.sh" "$BATS_TEST_TMPDIR/good.sh"
	[ "$status" -ne 0 ]
	[[ "$output" == *"shellcheck: 2 of 2 files not checked before"*"bad.sh line 2"*"SC2086"* ]]
	run shellcheck_files "" "$BATS_TEST_TMPDIR/bad.sh"
	[ "$status" -ne 0 ]
	run shellcheck_files "" "$BATS_TEST_TMPDIR/good.sh"
	[ "$status" -eq 0 ]
	[[ "$output" == *"shellcheck: 1 of 1 files not checked before"* ]]
	run shellcheck_files "" "$BATS_TEST_TMPDIR/good.sh"
	[ "$status" -eq 0 ]
	[ "$output" = "shellcheck: 0 of 1 files not checked before" ]
	# other bytes, other options: checked again
	echo 'echo "$2"' >>"$BATS_TEST_TMPDIR/good.sh"
	run shellcheck_files "" "$BATS_TEST_TMPDIR/good.sh"
	[[ "$output" == *"shellcheck: 1 of 1 files not checked before"* ]]
	run shellcheck_files "-s bash" "$BATS_TEST_TMPDIR/good.sh"
	[[ "$output" == *"shellcheck: 1 of 1 files not checked before"* ]]
	TOP=$top
}

# A project with scripts/check and stubs for what it runs (stub NAME BODY
# replaces one); $p is its top directory.
stub() { printf '#!/bin/sh\n%s\n' "$2" >"$p/scripts/$1"; chmod +x "$p/scripts/$1"; }
check_project() {
	p=$BATS_TEST_TMPDIR/proj
	# its results are its own (make check reads results/summary.json)
	unset RESULTS
	mkdir -p "$p/scripts" "$p/tests/system" "$p/tests/integration"
	cp "$TOP/scripts/check" "$TOP/scripts/lib.sh" "$p/scripts/"
	touch "$p/tests/system/x.bats" "$p/tests/integration/x.bats"
	# a section's counts are the JSON it writes to $SECTION_COUNTS
	counts='printf '"'"'{"counts": {"passed": %s, "failed": %s, "skipped": %s}}\n'"'"' '
	stub run-tests "${counts}4 0 1 >\"\$SECTION_COUNTS\"; echo \"\${2:-tooling}: 4 passed, 0 failed, 1 skipped\""
	stub in-runtime 'exec "$@"'
	# scripts/pipeline: config (the variants of the set) and summarize;
	# class, the rules of pipeline/classes.py, is the real one
	export REAL_PIPELINE=$TOP/scripts/pipeline
	stub pipeline 'if [ "$1" = summarize ]; then shift; exec "${0%/*}/summarize" "$@"; fi
if [ "$1" = class ] || [ "$1" = counts ]; then exec "$REAL_PIPELINE" "$@"; fi
if [ "$1" = baseline ]; then exec "${0%/*}/baseline" "$@"; fi
echo default; [ "$3 $4" = "--check quick" ] || echo pristine'
	# the baseline's check: no variant judged (a test replaces it)
	stub baseline "${counts}0 0 0 >\"\$SECTION_COUNTS\"; echo \"baseline: 0 passed, 0 failed, 0 skipped\""
	# what build-and-boot ends with: summarize's summary.json (make check
	# counts it) and its closing line
	stub summarize 'r=${RESULTS:-results}; mkdir -p "$r"
printf '"'"'{"counts": {"passed": %s, "failed": %s, "skipped": %s, "benchmarks": 0}}\n'"'"' "$1" "$2" "$3" >"$r/summary.json"
echo "matrix: $1 passed, $2 failed, $3 skipped"'
}

@test "make check: a failed build still boots what built, and every matrix failure is counted" {
	check_project
	# what scripts/build-and-boot ends with: off did not build, so it had
	# no result (1 failure), and the build failed (1 more)
	stub build-and-boot 'echo "kernel off FAILED"; scripts/pipeline summarize 3 1 0; echo "build failed for:"; echo "  kernel off"; echo "matrix: not everything passed (class 2); see results/<variant>/console.log and results.json"; exit 2'
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "check: 15 passed, 2 failed, 3 skipped" ]
	# a matrix that dies before its summary is a failure too (the summary
	# of the run before is not read)
	stub build-and-boot 'echo "Traceback"; exit 2'
	run env -u TOP "$p/scripts/check"
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "check: 12 passed, 1 failed, 3 skipped" ]
	# the counts are summary.json's, not a line of the output that looks
	# like one; a summary.json that is not one counts as none
	stub build-and-boot 'echo "matrix: 99 passed, 0 failed, 0 skipped"; scripts/pipeline summarize 3 0 0 >/dev/null'
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "check: 15 passed, 0 failed, 3 skipped" ]
	stub build-and-boot 'mkdir -p results; echo "{\"counts\": {\"passed\": null}}" >results/summary.json; echo "matrix: 3 passed, 0 failed, 0 skipped"'
	run env -u TOP "$p/scripts/check"
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "check: 12 passed, 1 failed, 3 skipped" ]
}

@test "make check: a test lost against ci/baseline fails the run, named in the recap" {
	check_project
	stub build-and-boot 'scripts/pipeline summarize 3 0 0'
	stub baseline 'echo "$*" >"${0%/*}/baseline.args"
echo "baseline default: 3 tests, 1 lost"
echo "baseline: LOST default/umcg/abi/global.numbers: pass -> skip (no UMCG) (see ci/baseline/default.tests)"
echo "baseline: 0 passed, 1 failed, 0 skipped"; '"${counts}0 1 0"' >"$SECTION_COUNTS"; exit 1'
	run env -u TOP -u VARIANTS "$p/scripts/check"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "check: 15 passed, 1 failed, 3 skipped" ]
	# the quick set's variants, against the run's results
	[[ "$(cat "$p/scripts/baseline.args")" == "baseline check "*"/results --variants default" ]]
	[[ "$output" == *$'=== what failed (from above)
'*"[baseline (ci/baseline)] baseline: 0 passed, 1 failed"*"baseline: LOST default/umcg/abi/global.numbers: pass -> skip"* ]]
}

@test "make check: a class rule that cannot be asked is a failure, never a silent pass" {
	check_project
	stub build-and-boot 'scripts/pipeline summarize 3 0 0'
	export REAL_PIPELINE=/bin/false
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"main job: scripts/pipeline class main-job failed: 1 failed"* ]]
}

@test "make check: a section's counts are the JSON it writes (\$SECTION_COUNTS), not a line of its output; none is a failure" {
	check_project
	stub build-and-boot 'scripts/pipeline summarize 3 0 0'
	# a closing line that disagrees with the counts: the counts win
	stub run-tests "${counts}4 0 1 >\"\$SECTION_COUNTS\"; echo \"\${2:-tooling}: 99 passed, 0 failed, 0 skipped\""
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "check: 15 passed, 0 failed, 3 skipped" ]
	# a section that wrote no counts is one failure, whatever it printed
	stub baseline 'echo "baseline: 0 passed, 0 failed, 0 skipped"'
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "check: 15 passed, 1 failed, 3 skipped" ]
	[[ "$output" == *"[baseline (ci/baseline)] no counts"* ]]
}

@test "make check: tests that passed only when run again are passes, listed again at the end" {
	check_project
	stub build-and-boot 'echo "default: flaky (failed, then passed when run again in the same boot): kselftest/futex/run.sh/x"; scripts/pipeline summarize 3 0 0'
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "check: 15 passed, 0 failed, 3 skipped" ]
	[[ "$output" == *$'=== flaky: passed when run again in the same boot (kselftests/flaky.conf)\n  default: flaky (failed, then passed'*"kselftest/futex/run.sh/x"$'\n\ntime: '* ]]
	stub build-and-boot 'scripts/pipeline summarize 3 0 0'
	run env -u TOP "$p/scripts/check"
	[[ "$output" != *"=== flaky"* ]]
}

@test "make check: its output redirected to a file keeps every section (the build stage must not reopen and truncate it)" {
	check_project
	stub build-and-boot 'echo "kernel default ok"; scripts/pipeline summarize 3 0 0'
	env -u TOP "$p/scripts/check" >"$BATS_TEST_TMPDIR/log" 2>&1
	cat "$BATS_TEST_TMPDIR/log"
	grep -q '^=== tooling tests$' "$BATS_TEST_TMPDIR/log"
	grep -q '^tooling: 4 passed' "$BATS_TEST_TMPDIR/log"
	[ "$(grep -c '^kernel default ok$' "$BATS_TEST_TMPDIR/log")" = 1 ]
	[ "$(tail -n1 "$BATS_TEST_TMPDIR/log")" = "check: 15 passed, 0 failed, 3 skipped" ]
}

@test "make check: a section's lines appear as it runs (CI keeps the log of a job it stops), and each section's time" {
	check_project
	# the system tests section waits for the test to have seen its first line
	stub run-tests 'if [ "${2:-}" = system ]; then echo "system started"
i=0; while [ ! -e "$0.go" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done; fi
echo "${2:-tooling}: 4 passed, 0 failed, 1 skipped"; '"${counts}4 0 1"' >"$SECTION_COUNTS"'
	stub build-and-boot 'scripts/pipeline summarize 3 0 0'
	env -u TOP "$p/scripts/check" >"$BATS_TEST_TMPDIR/log" 2>&1 3>&- &
	i=0
	until grep -q '^system started$' "$BATS_TEST_TMPDIR/log"; do
		sleep 0.1
		i=$((i + 1))
		[ $i -lt 150 ] || { cat "$BATS_TEST_TMPDIR/log"; touch "$p/scripts/run-tests.go"; wait; false; }
	done
	# not finished yet: the section is still waiting
	[[ "$(cat "$BATS_TEST_TMPDIR/log")" != *"check: "* ]]
	touch "$p/scripts/run-tests.go"
	wait
	cat "$BATS_TEST_TMPDIR/log"
	grep -qE '^time: tooling tests [0-9]+ s, integration tests [0-9]+ s, build and boot [0-9]+ s, baseline [0-9]+ s, system tests [0-9]+ s$' "$BATS_TEST_TMPDIR/log"
	[ "$(tail -n1 "$BATS_TEST_TMPDIR/log")" = "check: 15 passed, 0 failed, 3 skipped" ]
}

@test "make check: CHECK picks the set, quick unless CHECK=full, says so and hands it to the system tests; a bad CHECK is exit 2, nothing run" {
	check_project
	stub run-tests 'echo "${2:-tooling} sees CHECK_SET=${CHECK_SET:-unset}"; echo "${2:-tooling}: 4 passed, 0 failed, 1 skipped"; '"${counts}4 0 1"' >"$SECTION_COUNTS"'
	stub build-and-boot 'scripts/pipeline summarize 3 0 0'
	run env -u TOP -u CHECK "$p/scripts/check"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "check set: quick "*"CHECK=full"* ]]
	[[ "$output" == *"system sees CHECK_SET=quick"* ]]
	[[ "$output" == *"tooling sees CHECK_SET=unset"* ]]
	run env -u TOP CHECK=full "$p/scripts/check"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "check set: full "* ]]
	[[ "$output" == *"system sees CHECK_SET=full"* ]]
	# the quick set leaves out the variants marked #@ check_set = full, and
	# says which; the full set and a caller's VARIANTS are taken as they are
	stub build-and-boot 'echo "build-and-boot VARIANTS=[${VARIANTS:-}]"; scripts/pipeline summarize 3 0 0'
	run env -u TOP -u CHECK -u VARIANTS "$p/scripts/check"
	echo "$output"
	[[ "$output" == *"left out of the quick set: pristine (#@ check_set = full)"* ]]
	[[ "$output" == *"build-and-boot VARIANTS=[default]"* ]]
	run env -u TOP -u VARIANTS CHECK=full "$p/scripts/check"
	[[ "$output" != *"left out"* ]]
	[[ "$output" == *"build-and-boot VARIANTS=[]"* ]]
	run env -u TOP -u CHECK VARIANTS=pristine "$p/scripts/check"
	[[ "$output" != *"left out"* ]]
	[[ "$output" == *"build-and-boot VARIANTS=[pristine]"* ]]
	# every variant marked full: an empty quick set is an error, not "all"
	stub pipeline '[ "$1" = summarize ] || [ "$3 $4" = "--check quick" ] || echo pristine'
	run env -u TOP -u CHECK -u VARIANTS "$p/scripts/check"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"the quick set is empty: every variant of the default set is marked #@ check_set = full"* ]]
	[[ "$output" != *"==="* ]]
	run env -u TOP CHECK=fast "$p/scripts/check"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"CHECK must be quick or full, not 'fast'"* ]]
	[[ "$output" != *"==="* ]]
	# make check refuses it before its setup (apt) runs: -n, so that a
	# make that took it would only print the recipe
	run make -n -C "$TOP" check CHECK=fast
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"CHECK must be quick or full, not 'fast'"* ]]
}

@test "make check: what failed, and why, is repeated just above the last line (CI shows only the tail)" {
	check_project
	# a matrix that dies without its counts: its last lines say why
	stub build-and-boot 'echo "kernel default ok"; echo "Traceback (most recent call last):"; echo "OSError: No space left on device"; exit 2'
	# and a tooling test that failed, far above the end
	stub run-tests 'if [ -n "${2:-}" ]; then echo "$2: 1 passed, 0 failed, 0 skipped"; '"${counts}1 0 0"' >"$SECTION_COUNTS"; exit 0; fi
echo "not ok 7 the thing that broke"; i=0; while [ $i -lt 50 ]; do echo "ok $i"; i=$((i + 1)); done
echo "tooling: 4 passed, 1 failed, 0 skipped"; '"${counts}4 1 0"' >"$SECTION_COUNTS"; exit 1'
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "${lines[-1]}" = "check: 6 passed, 2 failed, 0 skipped" ]
	# the recap is the last lines before the total
	recap=$(printf '%s\n' "${lines[@]}" | tail -n 12)
	[[ "$recap" == *"tooling tests"*"not ok 7 the thing that broke"* ]]
	[[ "$recap" == *"build and boot"*"no counts"*"OSError: No space left on device"* ]]
	[[ "$recap" != *"ok 49"* ]]
	# a test that failed in a variant: its line, the end of its output
	# (the lines that say why) and the variant's reason
	stub build-and-boot 'echo "[PASS]  a/b/c"; echo "        | passing output"; echo "[FAIL]  umcg/wake/global.x  1.0s"; echo "        | early output"
i=0; while [ $i -lt 20 ]; do echo "        | output $i"; i=$((i + 1)); done
echo "        | Expected 0 (0) == ret (-125)"; echo "default: 1 test failed (see results/default)"; scripts/pipeline summarize 3 1 0; echo "matrix: not everything passed (class 1)"; exit 1'
	run env -u TOP "$p/scripts/check"
	echo "$output"
	[ "${lines[-1]}" = "check: 9 passed, 2 failed, 0 skipped" ]
	recap=$(printf '%s\n' "${lines[@]}" | sed -n '/^=== what failed/,$p')
	[[ "$recap" == *"[FAIL]  umcg/wake/global.x"*"| output 19"*"| Expected 0 (0) == ret (-125)"*"default: 1 test failed (see results/default)"* ]]
	[[ "$recap" != *"[PASS]"* ]]
	[[ "$recap" != *"passing output"* ]]
	# only the end of a long output
	[[ "$recap" != *"early output"* ]]
	# nothing failed: no recap
	stub run-tests "${counts}4 0 1 >\"\$SECTION_COUNTS\""
	stub build-and-boot 'scripts/pipeline summarize 3 0 0'
	run env -u TOP "$p/scripts/check"
	[ "$status" -eq 0 ]
	[[ "$output" != *"what failed"* ]]
}

@test "run-tests: the in-process unit tests (tests/unit) run with the tooling tests, each counted, a failure failing the run" {
	p=$BATS_TEST_TMPDIR/proj
	mkdir -p "$p/scripts" "$p/tests/unit" "$p/tests/tooling"
	cp "$TOP/scripts/run-tests" "$TOP/scripts/lib.sh" "$p/scripts/"
	cp "$TOP/tests/unit/taprun.py" "$p/tests/unit/"
	printf '%s\n' '@test "one" {' 'true' '}' >"$p/tests/tooling/one.bats"
	printf '%s\n' 'import unittest' 'class T(unittest.TestCase):' \
		'    def test_good(self):' '        self.assertTrue(True)' \
		'    def test_skipped(self):' '        self.skipTest("no widget")' >"$p/tests/unit/test_a.py"
	run env -u TOP "$p/scripts/run-tests"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "tooling: 2 passed, 0 failed, 1 skipped" ]
	[[ "$output" == *"ok unit: test_good (test_a.T.test_good)"* ]]
	printf '%s\n' '    def test_bad(self):' '        self.assertEqual(1, 2)' >>"$p/tests/unit/test_a.py"
	run env -u TOP "$p/scripts/run-tests"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "tooling: 2 passed, 1 failed, 1 skipped" ]
	[[ "$output" == *"AssertionError: 1 != 2"* ]]
	# a unit file that does not even import fails the run too
	echo 'import nosuchmodule' >"$p/tests/unit/test_b.py"
	run env -u TOP "$p/scripts/run-tests"
	[ "$status" -eq 1 ]
	# bats files named: only those
	run env -u TOP "$p/scripts/run-tests" --name x "$p/tests/tooling/one.bats"
	[ "${lines[-1]}" = "x: 1 passed, 0 failed, 0 skipped" ]
}

@test "run-tests: the caller's choices (VARIANTS=off make check, CHECK) do not reach the tests, which set up their own" {
	f=$BATS_TEST_TMPDIR/env.bats
	# written with printf: bats would rewrite a test header in a heredoc here
	printf '%s\n' '@test "env" {' \
		'[ -z "${VARIANTS:-}${SUITES:-}${TESTS:-}${ARTIFACTS:-}${PREBUILT:-}${GOOD:-}${KSELFTEST:-}${CHECK:-}" ]' \
		'[ "$VARIANT" = default ]' '}' >"$f"
	run env VARIANTS=off VARIANT=debug SUITES=umcg TESTS='umcg/*' ARTIFACTS=/x PREBUILT=1 GOOD=a KSELFTEST=full CHECK=fast \
		"$TOP/scripts/run-tests" --name env-check "$f"
	echo "$output"
	rm -f "$TOP/build/test-results/env-check.tap"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "env-check: 1 passed, 0 failed, 0 skipped" ]
	# each test's time is on its line
	[[ "$output" =~ ok\ 1\ env\ in\ [0-9]+ms ]]
}

# A project with scripts/run-tests, one bats file that passes and the
# unit tests given as FILE:BODY (tests/unit/FILE).
run_tests_project() {
	p=$BATS_TEST_TMPDIR/rt
	mkdir -p "$p/scripts" "$p/tests/tooling" "$p/tests/unit"
	cp "$TOP/scripts/run-tests" "$TOP/scripts/lib.sh" "$p/scripts/"
	cp "$TOP/tests/unit/taprun.py" "$p/tests/unit/"
	printf '@test "passes" {\n\ttrue\n}\n' >"$p/tests/tooling/a.bats"
	local spec
	for spec in "$@"; do
		printf '%s\n' "${spec#*:}" >"$p/tests/unit/${spec%%:*}"
	done
}

@test "run-tests: every unit test is counted from unittest's own result, a test with a docstring too" {
	run_tests_project 'test_doc.py:import unittest


class T(unittest.TestCase):
    def test_fails(self):
        """A docstring: unittest -v prints it on the line of the verdict."""
        self.fail("broken")

    def test_passes(self):
        """Another docstring."""

    @unittest.skip("not here")
    def test_skipped(self):
        pass'
	run env -u TOP -u BUILD "$p/scripts/run-tests"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "tooling: 2 passed, 1 failed, 1 skipped" ]
	grep -qx 'not ok unit: test_fails (test_doc.T.test_fails)' "$p/build/test-results/tooling.tap"
	# the counts for make check, as JSON (scripts/check reads them, not
	# the closing line)
	[ "$(jq -c .counts "$p/build/test-results/tooling.json")" = '{"passed":2,"failed":1,"skipped":1}' ]
}
