#!/usr/bin/env bats
# The project's own data and code: variant files, suites, the one pin of
# the kernel version, CI workflow files, shell and C hygiene.
bats_require_minimum_version 1.5.0

load helpers

variants() { for f in "$TOP"/configs/*.variant; do f=${f##*/}; echo "${f%.variant}"; done; }

@test "the kernel package version is pinned in exactly one file" {
	version=$(awk -F= '!/^#/ && NF { print $2; exit }' "$TOP/scripts/deps/kernel-source.txt")
	[ -n "$version" ]
	run git -C "$TOP" grep -lF -- "$version" -- ':!*.md'
	[ "$output" = scripts/deps/kernel-source.txt ]
}

@test "every variant has smp, mem and suites, and every suite it names exists" {
	. "$TOP/scripts/lib.sh"
	for v in $(variants); do
		[ -n "$(variant_param "$v" smp)" ]
		[ -n "$(variant_param "$v" mem)" ]
		for s in $(variant_param "$v" suites); do
			[ -f "$TOP/guest-tests/$s/suite.conf" ] || { echo "variant $v: no suite $s"; return 1; }
			[ -n "$(suite_param "$s" timeout)" ]
		done
	done
}

@test "variant parameters: extends inherits, += appends, an unknown variant is a clear error" {
	. "$TOP/scripts/lib.sh"
	[ "$(variant_chain debug | tr '\n' ' ')" = "default debug " ]
	[[ "$(variant_param debug cmdline)" == *panic_on_warn=1* ]]
	[ "$(variant_param debug smp)" = "$(variant_param default smp)" ]
	run variant_chain nosuch
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown variant 'nosuch'"* ]]
	run check_variant 'a b'
	[ "$status" -eq 2 ]
	[[ "$output" == *"invalid variant name"* ]]
}

@test "the debug variant asks for lockdep, atomic-sleep checks, KASAN, kmemleak and panic_on_warn" {
	. "$TOP/scripts/lib.sh"
	for o in CONFIG_PROVE_LOCKING=y CONFIG_DEBUG_ATOMIC_SLEEP=y CONFIG_KASAN=y CONFIG_DEBUG_KMEMLEAK=y; do
		grep -qx "$o" "$TOP/configs/debug.variant"
	done
	[[ "$(variant_param debug cmdline)" == *panic_on_warn=1* ]]
	# tinyconfig's traps (see configs/base.config): BUG on, SLUB_TINY off.
	grep -qx 'CONFIG_BUG=y' "$TOP/configs/base.config"
	grep -qx '# CONFIG_SLUB_TINY is not set' "$TOP/configs/base.config"
}

@test "the GitHub workflow parses, runs every variant, and calls scripts that exist" {
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
assert any("ci/run-variant" in x for x in cmds) and any("ci/summarize" in x for x in cmds)
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

@test "shell scripts pass shellcheck" {
	cd "$TOP"
	mapfile -t files < <(grep -lE '^#!/usr/bin/env (bash|sh)|^#!/bin/sh' scripts/* ci/* guest-tests/runner/* .ci/run 2>/dev/null)
	[ "${#files[@]}" -gt 5 ]
	run shellcheck -x scripts/lib.sh "${files[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
}
