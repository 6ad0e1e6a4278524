#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# make compare (scripts/pipeline compare): two result sets, per variant and test.

load ../helpers

setup() {
	export PYTHONDONTWRITEBYTECODE=1
	A=$BATS_TEST_TMPDIR/A
	B=$BATS_TEST_TMPDIR/B
}

# res DIR VARIANT CLASS PY-EXTRA: a results.json with the tests of
# PY-EXTRA's "t" (id -> status or (status, metrics)) and more keys.
res() {
	mkdir -p "$1/$2"
	python3 -c 'import json, sys
d, v, cls = sys.argv[1], sys.argv[2], int(sys.argv[3])
extra = eval(sys.argv[4])
tests = []
for tid, st in extra.pop("t", {}).items():
    st, m = st if isinstance(st, tuple) else (st, {})
    tests.append({"id": tid, "status": st, "metrics": m, "note": None})
r = {"variant": v, "exit_class": cls, "exit_class_name": "c%d" % cls,
     "boot": {"ready_uptime_s": 1.5}, "kernel_problems": [], "tests": tests}
r.update(extra)
json.dump(r, open(d + "/" + v + "/results.json", "w"))' "$1" "$2" "$3" "$4"
}

@test "compare: the same results are no regression (exit 0)" {
	res "$A" default 0 "{'t': {'umcg/switch/global.a': 'pass', 'smoke/smoke/global.b': 'skip'}}"
	cp -r "$A" "$B"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"compare: no regression; 0 new failures, 0 lost, 0 fixed, 0 other status changes"* ]]
}

@test "compare: a new failure, a fixed test, a LOST test (pass -> skip), a metric ratio; exit 1" {
	res "$A" default 0 "{'t': {'umcg/switch/global.a': 'pass', 'umcg/block/global.c': 'fail',
		'smoke/smoke/global.b': 'pass', 'umcg-bench/switch_bench/global.x': ('pass', {'umcg_futex_ratio': 1.06, 'unit': 'ns'})}}"
	res "$B" default 1 "{'t': {'umcg/switch/global.a': 'fail', 'umcg/block/global.c': 'pass',
		'smoke/smoke/global.b': 'skip', 'umcg-bench/switch_bench/global.x': ('pass', {'umcg_futex_ratio': 1.59, 'unit': 'ns'})},
		'boot': {'ready_uptime_s': 1.75}}"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"== default   REGRESSED"* ]]
	[[ "$output" == *"   class 0 c0 -> 1 c1   WORSE"* ]]
	[[ "$output" == *"   NEW FAILURE  umcg/switch/global.a: pass -> fail"* ]]
	[[ "$output" == *"   FIXED        umcg/block/global.c: fail -> pass"* ]]
	[[ "$output" == *"   LOST         smoke/smoke/global.b: pass -> skip"* ]]
	[[ "$output" == *"   metric umcg-bench/switch_bench/global.x umcg_futex_ratio: 1.06 -> 1.59 (+0.53, x1.500)"* ]]
	[[ "$output" == *"   boot to READY (guest uptime, s): 1.5 -> 1.75 (+0.25, x1.167)"* ]]
	[[ "$output" == *"compare: regressed: default; 1 new failures, 1 lost, 1 fixed, 0 other status changes"* ]]
	# the first rows are the news
	[[ "$(grep -m1 '^   [A-Z]' <<<"$output")" == "   NEW FAILURE"* ]]
	[[ "$(grep -m2 '^   [A-Z]' <<<"$output" | tail -n1)" == "   LOST"* ]]
}

@test "compare: a new kernel problem, a missing variant or a test that no longer runs (LOST) regresses; an accepted one does not" {
	res "$A" default 0 "{'t': {'a/b/c': 'pass', 'a/b/d': 'pass'}}"
	res "$A" off 0 "{'t': {'a/b/c': 'pass'}}"
	res "$B" default 3 "{'t': {'a/b/c': 'pass'}, 'kernel_problems': [{'kind': 'warning', 'first_line': 'WARNING: at kernel/sched/umcg.c:10'}]}"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"   NEW KERNEL PROBLEM  warning: 0 -> 1 (WARNING: at kernel/sched/umcg.c:10)"* ]]
	[[ "$output" == *"   LOST         a/b/d: pass -> -"* ]]
	[[ "$output" == *"== off: in A only: no result in B   REGRESSED"* ]]
	# only the variants asked for; a/b/d no longer runs
	res "$B" default 0 "{'t': {'a/b/c': 'pass', 'a/b/e': 'skip'}}"
	run "$TOP/scripts/pipeline" compare --variants default "$A" "$B"
	[ "$status" -eq 1 ]
	[[ "$output" == *"== default   REGRESSED"* ]]
	[[ "$output" == *"   only in B    a/b/e: - -> skip"* ]]
	# accepted, with its reason: shown, not a regression
	printf '# why these may stop running\na/b/[d]  retired with the old ABI\n' >"$BATS_TEST_TMPDIR/acc"
	run "$TOP/scripts/pipeline" compare --accepted "$BATS_TEST_TMPDIR/acc" --variants default "$A" "$B"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"   lost, ok     a/b/d: pass -> -  (accepted: retired with the old ABI)"* ]]
	[[ "$output" == *"compare: no regression; 0 new failures, 0 lost,"* ]]
	# a rule without a reason is an error naming its line
	printf 'a/b/d\n' >"$BATS_TEST_TMPDIR/acc"
	run "$TOP/scripts/pipeline" compare --accepted "$BATS_TEST_TMPDIR/acc" "$A" "$B"
	[ "$status" -eq 2 ]
	[[ "$output" == *"acc:1: \"a/b/d\" has no reason"* ]]
}

@test "compare: CI downloads (results-<variant>/) and single variant directories; bad input is exit 2" {
	res "$A" default 0 "{'t': {'a/b/c': 'pass'}}"
	mkdir -p "$B"
	res "$BATS_TEST_TMPDIR/dl" default 1 "{'t': {'a/b/c': 'fail'}}"
	mv "$BATS_TEST_TMPDIR/dl/default" "$B/results-default"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	[ "$status" -eq 1 ]
	[[ "$output" == *"NEW FAILURE  a/b/c: pass -> fail"* ]]
	run "$TOP/scripts/pipeline" compare "$A/default" "$B/results-default"
	[ "$status" -eq 1 ]
	run "$TOP/scripts/pipeline" compare "$A" "$BATS_TEST_TMPDIR/nothing"
	[ "$status" -eq 2 ]
	[[ "$output" == *"is not a directory of results"* ]]
	mkdir "$BATS_TEST_TMPDIR/empty"
	run "$TOP/scripts/pipeline" compare "$A" "$BATS_TEST_TMPDIR/empty"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no results.json in"* ]]
	run make -s -C "$TOP" compare
	[ "$status" -ne 0 ]
	[[ "$output" == *"give A=<results dir>"* ]]
}

@test "compare: a run B that planned less (TESTS, its plan.json) loses nothing it did not select; a test with a new name but the same key is the same test" {
	res "$A" default 0 "{'t': {'a/b/c': 'pass', 'a/b/d': 'pass', 'a/e/f': 'pass'}}"
	res "$B" default 0 "{'t': {'a/b/c': 'pass'}, 'plan': {'suites': [{'name': 'a', 'programs': [], 'optional': ['b']}], 'tests': ['a/b/c']}}"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"   only in A    a/b/d: pass -> -"* ]]
	[[ "$output" == *"   only in A    a/e/f: pass -> -"* ]]
	# no selection, and program e not in B's plan (it left the
	# initramfs): its tests are LOST (issue 42: B's plan alone was read)
	res "$B" default 0 "{'t': {'a/b/c': 'pass', 'a/b/d': 'pass'}, 'plan': {'suites': [{'name': 'a', 'programs': ['b'], 'optional': []}], 'tests': []}}"
	run "$TOP/scripts/pipeline" compare --variants default "$A" "$B"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"   LOST         a/e/f: pass -> -"* ]]
	# the same selection, and a/b/c gone: LOST
	res "$B" default 0 "{'t': {'a/b/x': 'pass'}, 'plan': {'suites': [{'name': 'a', 'programs': ['b'], 'optional': []}], 'tests': []}}"
	run "$TOP/scripts/pipeline" compare --variants default "$A" "$B"
	[ "$status" -eq 1 ]
	[[ "$output" == *"   LOST         a/b/c: pass -> -"* ]]
	# kselftest names can carry a pid: the key (pipeline/ktap.py) decides
	python3 -c 'import json, sys
for d, name in ((sys.argv[1], "[41] Result matches"), (sys.argv[2], "[97] Result matches")):
    json.dump({"variant": "default", "exit_class": 0, "exit_class_name": "c0", "kernel_problems": [],
               "tests": [{"id": "k/clone3/" + name, "key": "1.1", "status": "pass", "metrics": {}, "note": None}]},
              open(d + "/default/results.json", "w"))' "$A" "$B"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"LOST"* ]]
}

@test "compare: a position (key) matches only a test under a new name in the same place; a program that crashed loses its tests to that failure, not to LOST" {
	mkdir -p "$A/default" "$B/default"
	python3 -c 'import json, sys
def t(i, k, s, **kw):
    return dict({"id": i, "key": k, "status": s, "metrics": {}, "note": None}, **kw)
A = [t("k/m/a/x", "1.1", "pass"), t("k/m/b/y", "2.1", "pass"), t("k/f/global.one", None, "pass"), t("k/f/global.two", None, "pass")]
# a was skipped as a whole: b moved to position 1.1; f crashed after its first test
B = [t("k/m/b/y", "1.1", "pass"), t("k/m/a", "0.1", "skip"), t("k/f/global.one", None, "pass"),
     t("k/f/test-2", None, "error", missing=True)]
for d, tests in ((sys.argv[1], A), (sys.argv[2], B)):
    json.dump({"variant": "default", "exit_class": 0, "exit_class_name": "c0", "kernel_problems": [], "tests": tests},
              open(d + "/default/results.json", "w"))' "$A" "$B"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"   LOST         k/m/a/x: pass -> -"* ]]
	[[ "$output" != *"LOST         k/f/global.two"* ]]
	[[ "$output" == *"   NEW FAILURE  k/f/test-2: - -> error"* ]]
}

@test "compare: a run with knobs or KERNEL_TREE (NAME-knobs-HASH) is compared with its variant NAME when the other set has no such run (issue 46)" {
	res "$A" default 0 "{'t': {'smoke/smoke/global.a': 'pass', 'umcg/switch/global.b': 'pass'}}"
	res "$B" default-knobs-0123abcd 1 "{'t': {'smoke/smoke/global.a': 'pass', 'umcg/switch/global.b': 'fail'},
		'plan': {'knobs': {'variant': 'default', 'append': 'x=1'}}}"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"== default-knobs-0123abcd (against default of A)   REGRESSED"* ]]
	[[ "$output" == *"   NEW FAILURE  umcg/switch/global.b: pass -> fail"* ]]
	[[ "$output" != *"in A only"* && "$output" != *"in B only"* ]]
	[[ "$output" == *"compare: regressed: default-knobs-0123abcd; 1 new failures"* ]]
	# the other way round too
	run "$TOP/scripts/pipeline" compare "$B" "$A"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"== default (against default-knobs-0123abcd of A)"$'\n'*"FIXED        umcg/switch/global.b: fail -> pass"* ]]
	[[ "$output" != *"in A only"* && "$output" != *"in B only"* ]]
	# with the variant itself in both sets, each is compared with its own
	res "$A" default-knobs-0123abcd 0 "{'t': {'smoke/smoke/global.a': 'pass'}}"
	res "$B" default 0 "{'t': {'smoke/smoke/global.a': 'pass', 'umcg/switch/global.b': 'pass'}}"
	run "$TOP/scripts/pipeline" compare "$A" "$B"
	echo "$output"
	[[ "$output" == *"== default"$'\n'* ]]
	[[ "$output" == *"== default-knobs-0123abcd   REGRESSED"* ]]
	# VARIANTS=NAME takes its runs with knobs along
	rm -r "$A/default-knobs-0123abcd" "$B/default"
	run "$TOP/scripts/pipeline" compare --variants default "$A" "$B"
	echo "$output"
	[[ "$output" == *"== default-knobs-0123abcd (against default of A)   REGRESSED"* ]]
}
