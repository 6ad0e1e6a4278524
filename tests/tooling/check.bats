#!/usr/bin/env bats
# make check (scripts/check) on a project whose sections are stubs, and
# scripts/run-tests on small projects of its own: their counts, recap,
# sets and output. Split from project.bats so that bats runs it beside
# the other files: the tooling tests run a file a job (scripts/run-tests).
bats_require_minimum_version 1.5.0

load ../helpers

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
