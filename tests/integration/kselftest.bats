#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# Tooling tests of the kselftest wiring (issue 11): targets as variant data,
# the per-target guest programs (scripts/kselftest-suite) and their test
# selection in run-suite, nested KTAP as per-test results in results.json
# and JUnit, the pristine kernel (#@ source = pristine) and the regressions
# column of the summary. Fakes only: seconds, no kernel.

load ../helpers

setup() {
	export PYTHONDONTWRITEBYTECODE=1
}

@test "variant: kselftest targets are data; an unknown one is exit 2 naming file and line; KSELFTEST picks the set" {
	cfg 'a:#@ kselftests = futex ptrace|#@ suites = smoke kselftest' \
		'b:#@ extends = a|#@ kselftests += nosuch' 'c:#@ suites = kselftest'
	[ "$(V get a kselftests)" = "futex ptrace" ]
	[ "$(V get a kselftest_set)" = quick ]
	[ "$(KSELFTEST=full V get a kselftest_set)" = full ]
	run V get a kselftest_set
	[ "$output" = quick ]
	run env KSELFTEST=most "$TOP/scripts/pipeline" config get a kselftest_set
	[ "$status" -eq 2 ]
	[[ "$output" == *"environment (KSELFTEST): kselftest_set: expected quick or full, not 'most'"* ]]
	run V get b kselftests
	[ "$status" -eq 2 ]
	[[ "$output" == *"configs/b.variant:2: kselftests: unknown kselftest target 'nosuch'"* ]]
	# the kselftest suite without targets would run nothing
	run V get c suites
	[ "$status" -eq 2 ]
	[[ "$output" == *"suite kselftest needs '#@ kselftests = TARGET...'"* ]]
	# the real default variant runs the kselftest suite
	unset CONFIGS
	[[ " $(V get default suites) " == *" kselftest "* ]]
	[[ " $(V get default kselftests) " == *" futex "* ]]
	[ "$(V get pristine source)" = pristine ]
	[ "$(V get default source)" = series ]
}

# A fake kselftest list, targets.conf and skip.conf; the generated programs
# run a fake run_kselftest.sh that prints its arguments as KTAP.
fake_ksft() {
	K=$BATS_TEST_TMPDIR/ksft
	mkdir -p "$K/kselftest"
	printf 'alpha:one\nalpha:two\nalpha:slow\nbeta:b1\n' >"$K/kselftest/kselftest-list.txt"
	cat >"$K/kselftest/run_kselftest.sh" <<'SH'
#!/bin/sh
echo "TAP version 13"
echo "# runner args: $*"
echo "# two args: ${KSELFTEST_TWO_ARGS:-}"
n=0
for a in "$@"; do
	case "$a" in -o|-t) ;; *:*) n=$((n + 1)); echo "ok $n selftests: ${a%%:*}: ${a#*:}" ;; esac
done
SH
	chmod +x "$K/kselftest/run_kselftest.sh"
	export TARGETS_CONF=$BATS_TEST_TMPDIR/targets.conf SKIP_CONF=$BATS_TEST_TMPDIR/skip.conf
	export ARGS_CONF=$BATS_TEST_TMPDIR/args.conf KSELFTEST_DIR=$K/kselftest
	printf 'alpha link=static timeout=45 quick=10 full=30\nbeta link=static timeout=20 timeout_full=99 quick=2 full=2\n' >"$TARGETS_CONF"
	printf 'alpha:slow quick takes too long here\n' >"$SKIP_CONF"
	printf 'alpha:two -n 3\n' >"$ARGS_CONF"
}

@test "kselftest-suite: a program per target: skips with reasons as KTAP, the rest through the tree's runner; --list; a selection" {
	fake_ksft
	out=$BATS_TEST_TMPDIR/out
	run "$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$out" alpha beta
	[ "$status" -eq 0 ]
	# budget: 3 x measured (10 + 2) + the largest per-test timeout
	[ "$output" = 81 ]
	run "$out/alpha"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok 1 selftests: alpha: slow # SKIP takes too long here"* ]]
	[[ "$output" == *"# runner args: -o 45 -t alpha:one -t alpha:two"* ]]
	run "$out/alpha" --list
	[ "$output" = "$(printf 'one\ntwo\nslow')" ]
	# selected tests only (run-suite passes their names)
	run "$out/alpha" two
	[[ "$output" == *"# runner args: -o 45 -t alpha:two"* ]]
	[[ "$output" != *"alpha: slow"* ]]
	run "$out/alpha" slow
	[[ "$output" == *"ok 1 selftests: alpha: slow # SKIP takes too long here"* ]]
	[[ "$output" != *"runner args"* ]]
	run "$out/alpha" nosuch
	[ "$status" -eq 2 ]
	[[ "$output" == *"no test nosuch in kselftest target alpha"* ]]
	# args.conf's arguments reach the runner
	run "$out/alpha" two
	[[ "$output" == *"# two args: -n 3"* ]]
	# the full set: no skip, the target's timeout_full
	run "$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" full "$out" alpha beta
	[ "$output" = $((3 * 32 + 99)) ]
	run "$out/alpha"
	[[ "$output" == *"-t alpha:one -t alpha:two -t alpha:slow"* ]]
	run "$out/beta"
	[[ "$output" == *"-o 99 -t beta:b1"* ]]
	# data errors are exit 2, named
	run "$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$out" gamma
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown kselftest target 'gamma'"* ]]
}

@test "run-suite: TESTS reaches inside a kselftest target program: only the selected tests run" {
	fake_ksft
	export TESTS_DIR=$BATS_TEST_TMPDIR/tests PATH=$TOP/tests/fixtures/fakes:$PATH
	"$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$TESTS_DIR/kselftest" alpha beta >/dev/null
	run sh "$TOP/guest-tests/runner/run-suite" kselftest 'kselftest/alpha/t*'
	[ "$status" -eq 0 ]
	[[ "$output" == *"# run-suite: 1 of 3 tests selected"* ]]
	[[ "$output" == *"# runner args: -o 45 -t alpha:two"* ]]
	[[ "$output" != *"TEST-BEGIN kselftest/beta"* ]]
	run sh "$TOP/guest-tests/runner/run-suite" kselftest 'kselftest/*/nomatch'
	[ "$status" -eq 2 ]
	[[ "$output" == *"nothing in kselftest matches"* ]]
	# the host's rules agree
	run python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from pipeline import testsel
print(testsel.selects(["kselftest/alpha/t*"], "kselftest", "alpha", "two"), testsel.selects(["kselftest/alpha/t*"], "kselftest", "alpha", "one"))' "$TOP"
	[ "$output" = "True False" ]
}

# A retry in the guest (kselftests/flaky.conf): target alpha's test one
# fails with "timing thing returned 11" in the runner's first run (a state
# file) and passes after; test two fails in every run. The runner's exit
# status is 1 when a test failed.
fake_flaky_ksft() {
	fake_ksft
	export FLAKY_CONF=$BATS_TEST_TMPDIR/flaky.conf RUNS=$BATS_TEST_TMPDIR/runs
	cat >"$K/kselftest/run_kselftest.sh" <<'SH'
#!/bin/sh
echo "TAP version 13"
echo "# runner args: $*"
echo run >>"$RUNS"
n=0
for a in "$@"; do
	case "$a" in -o|-t) continue ;; *:*) ;; *) continue ;; esac
	n=$((n + 1))
	t=${a#*:}
	echo "# selftests: ${a%%:*}: $t"
	echo "# TAP version 13"
	echo "# 1..1"
	if [ "$t" = two ]; then
		echo "# not ok 1 always broken"
		rc=1
	elif [ "$t" = one ] && [ "$(wc -l <"$RUNS")" -eq 1 ]; then
		echo "# waiter failed errno 110"
		echo "# not ok 1 timing thing returned: 11"
		rc=1
	else
		echo "# ok 1 timing thing succeeds"
	fi
	echo "ok $n selftests: ${a%%:*}: $t"
done
exit "${rc:-0}"
SH
}

@test "kselftest-suite: each selected test flaky.conf names runs once more in the same run, failed or not, announced by @@@ RETRY per glob; the host decides (the guest reads no KTAP)" {
	fake_flaky_ksft
	out=$BATS_TEST_TMPDIR/out
	printf '# comment\nalpha:one  timing?thing*  waits 30 ms under TCG\nalpha:one  other?thing*  waits too\n' >"$FLAKY_CONF"
	"$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$out" alpha beta >/dev/null
	run "$out/alpha"
	echo "$output"
	# the first run (one fails, two fails), then a marker per glob, then
	# test one again; the exit status says a run failed
	[ "$status" -ne 0 ]
	[[ "$output" == *"# not ok 1 timing thing returned: 11"*$'\n'"@@@ RETRY kselftest/alpha one/timing?thing*"$'\n'"@@@ RETRY kselftest/alpha one/other?thing*"$'\n'*"# runner args: -o 45 -t alpha:one"$'\n'*"# ok 1 timing thing succeeds"* ]]
	[ "$(wc -l <"$RUNS")" = 2 ]
	[ "$(grep -c '@@@ RETRY' <<<"$output")" = 2 ]
	# two is not in flaky.conf: run once
	[ "$(grep -c 'always broken' <<<"$output")" = 1 ]
	# a pass the first time: run again all the same, the host keeps the
	# first (pipeline/results/programs.py)
	rm "$RUNS"
	echo run >"$RUNS"
	run "$out/alpha" one
	[ "$status" -eq 0 ]
	[[ "$output" == *"# ok 1 timing thing succeeds"*$'\n'"@@@ RETRY kselftest/alpha one/timing?thing*"$'\n'* ]]
	[ "$(wc -l <"$RUNS")" = 3 ]
	# one not selected: not run at all
	rm "$RUNS"
	run "$out/alpha" two
	[[ "$output" != *"@@@ RETRY"* ]]
	[ "$(wc -l <"$RUNS")" = 1 ]
	# a target without entries is what it was
	run "$out/beta"
	[[ "$output" != *RETRY* ]]
	# the guest keeps no output to read
	[[ "$(cat "$out/alpha")" != *"not ok"* ]]
	# skip.conf wins: a skipped test is not run, neither time
	printf 'alpha:one quick not here\n' >"$SKIP_CONF"
	"$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$out" alpha >/dev/null
	rm "$RUNS"
	run "$out/alpha"
	[[ "$output" != *"@@@ RETRY"* ]]
	[ "$(wc -l <"$RUNS")" = 1 ]
	printf 'alpha:slow quick takes too long here\n' >"$SKIP_CONF"
	# a glob that matches an empty description would name the test itself
	printf 'alpha:one  *  anything\n' >"$FLAKY_CONF"
	run "$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$out" alpha
	[ "$status" -eq 2 ]
	[[ "$output" == *"the glob '*' of alpha:one matches an empty description"* ]]
	# a glob for a test that is not there is a data error, named
	printf 'alpha:nosuch  x*  why\n' >"$FLAKY_CONF"
	run "$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$out" alpha
	[ "$status" -eq 2 ]
	[[ "$output" == *"flaky.conf names alpha:nosuch"* ]]
	printf 'alpha:one\n' >"$FLAKY_CONF"
	run "$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$out" alpha
	[ "$status" -eq 2 ]
	[[ "$output" == *"flaky.conf:1: expected 'TARGET:TEST GLOB REASON'"* ]]
}

# A recorded KTAP file of tests/fixtures/ktap.
ktap_file() { cat "$TOP/tests/fixtures/ktap/$1"; }

# kselftest/futex with a retry: the real first run FIRST, the RETRY line,
# the real second run SECOND.
ksft_retry_log() { # FIRST RETRY-LINE SECOND
	printf '@@@ HARNESS START variant=default date=2026-12-06T00:00:00Z\n@@@ READY release=6.12 uptime=1.0\n'
	printf '@@@ HARNESS SEND run-suite kselftest\n@@@ SUITE-BEGIN kselftest uptime=1.0\n'
	printf '@@@ TEST-BEGIN kselftest/futex uptime=1.0\n'
	ktap_file "$1"
	printf '%s\n' "$2"
	ktap_file "$3"
	printf '@@@ TEST-END kselftest/futex rc=0 uptime=9.0\n@@@ SUITE-END kselftest rc=0 uptime=9.0\n'
	printf '@@@ HARNESS SUITE-DONE suite=kselftest elapsed=9\n@@@ HARNESS SEND poweroff -f\n'
	printf '@@@ HARNESS QEMU-EXIT status=0\n@@@ HARNESS END elapsed=10\n'
}

# When the first run stands instead (every other first-run failure), and
# nested KTAP as per-test results: tests/unit/test_kselftest_results.py.
@test "parse-console, summarize: a retried flaky.conf failure that passes the second time is a pass marked flaky, in results.json, JUnit and the summary" {
	R=$BATS_TEST_TMPDIR/results
	ksft_retry_log futex-requeue-fail.ktap '@@@ RETRY kselftest/futex run.sh/futex_requeue?many*' futex-pass.ktap \
		>"$BATS_TEST_TMPDIR/console.log"
	run "$TOP/scripts/pipeline" parse --out "$R/default" "$BATS_TEST_TMPDIR/console.log"
	[ "$status" -eq 0 ]
	r=$R/default/results.json
	[ "$(jq -r .exit_class "$r")" = 0 ]
	# the second run's tests, once each: the first run's are not counted
	[ "$(jq -r '.counts.pass' "$r")" = "$(jq -r '[.tests[] | select(.status == "pass")] | length' "$r")" ]
	[ "$(jq -r '[.tests[] | select(.name == "run.sh/futex_requeue simple succeeds")] | length' "$r")" = 1 ]
	[ "$(jq -r '[.tests[] | select(.id | test("returned"))] | length' "$r")" = 0 ]
	t='.tests[] | select(.name == "run.sh/futex_requeue many succeeds")'
	[ "$(jq -r "$t | .status" "$r")" = pass ]
	# both reports of the failing test (it printed "not ok" twice)
	[ "$(jq -r "$t | .flaky[0].name" "$r")" = "run.sh/futex_requeue many returned: 11 Resource temporarily unavailable" ]
	[ "$(jq -r "$t | .flaky | length" "$r")" = 2 ]
	jq -r "$t | .flaky[0].excerpt" "$r" | grep -q 'waiter failed errno 110'
	[ "$(jq -r '.counts.flaky' "$r")" = 1 ]
	[[ "$(jq -r .tests[0].id "$r")" == kselftest/futex/* ]]
	grep -q '<flakyFailure message=".*futex_requeue many returned' "$R/default/junit.xml"
	[[ "$output" == *"1 flaky"* ]]
	run "$TOP/scripts/pipeline" summarize "$R" default
	[ "$status" -eq 0 ]
	[[ "$output" == *"default: flaky (failed, then passed when run again in the same boot): kselftest/futex/run.sh/futex_requeue many succeeds"* ]]
	[ "$(jq -c '.variants[0].flaky_tests' "$R/summary.json")" = '["kselftest/futex/run.sh/futex_requeue many succeeds"]' ]
}

# results.json of variant V under DIR with tests ID=STATUS...
fake_results() { # DIR V ID=STATUS...
	local d=$1/$2
	shift 2
	mkdir -p "$d"
	python3 - "$d/results.json" "$@" <<'PY'
import json, sys
tests = []
for a in sys.argv[2:]:
    i, s = a.split('=')
    tests.append({'id': i, 'key': i + '#k', 'suite': i.split('/')[0], 'status': s})
c = {k: sum(1 for t in tests if t['status'] == k) for k in ('pass', 'fail', 'skip', 'error')}
c['total'] = len(tests)
cls = 1 if c['fail'] or c['error'] else 0
json.dump({'variant': sys.argv[1].split('/')[-2], 'counts': c, 'tests': tests,
           'kernel_problems': [], 'kernel_problems_total': 0, 'boot': {'ready_uptime_s': 1.0},
           'duration_s': 5, 'exit_class': cls,
           'reasons': [{'class': 1, 'reason': 'a test failed'}] if cls else []},
          open(sys.argv[1], 'w'))
PY
}

@test "summarize: regressions fail with the series and pass on pristine; pristine's own failures are known" {
	R=$BATS_TEST_TMPDIR/results
	fake_results "$R" default k/a/x=fail k/a/y=fail k/a/z=pass k/a/w=error u/p/t=fail
	fake_results "$R" pristine k/a/x=pass k/a/y=fail k/a/z=pass k/a/w=pass
	run "$TOP/scripts/pipeline" summarize "$R" default pristine
	[ "$status" -eq 1 ]
	[ "$(jq -c '.variants[] | select(.variant == "default") | [.regressions, .known_failures]' "$R/summary.json")" = '[2,1]' ]
	[ "$(jq -c '.variants[] | select(.variant == "default") | .regressed_tests' "$R/summary.json")" = '["k/a/w","k/a/x"]' ]
	[ "$(jq -c '.variants[] | select(.variant == "pristine") | [.regressions, .known_failures]' "$R/summary.json")" = '[null,1]' ]
	[[ "${lines[0]}" == *regressions* ]]
	[[ "$output" == *"default: regressions versus pristine: k/a/w k/a/x"* ]]
	[[ "$output" == *"default: known failures (also on pristine): k/a/y"* ]]
	# without pristine in the run there is nothing to judge against
	run "$TOP/scripts/pipeline" summarize "$R" default
	[ "$(jq -c '.variants[0].regressions' "$R/summary.json")" = null ]
	# nor when pristine ran no test (it did not build or boot): "-", not 0
	fake_results "$R" pristine
	run "$TOP/scripts/pipeline" summarize "$R" default pristine
	[ "$(jq -c '.variants[0].regressions' "$R/summary.json")" = null ]
	[[ "${lines[1]}" == "default "*" 3       -            1"* ]]
}

@test "summarize: a program that failed as a whole (timeout, exit, missing results) regresses when its tests passed on pristine" {
	# A kselftest program that times out or bails out has one result of
	# its own (the runner's name for it when nothing nested came), where
	# pristine has its nested tests: judged by the tests under it.
	R=$BATS_TEST_TMPDIR/results
	fake_results "$R" default 'k/f/selftests: f: run.sh=fail' k/m/cow=fail k/m/kfail=fail \
		k/p/missing-results=error k/z/other=fail k/m/co=fail
	fake_results "$R" pristine 'k/f/run.sh/t one=pass' 'k/f/run.sh/t two=pass' k/m/cow/a=pass \
		k/m/cow/b=skip k/m/kfail/a=pass k/m/kfail/b=fail k/p/poll/x=pass k/p/wait/y=skip
	run "$TOP/scripts/pipeline" summarize "$R" default pristine
	[ "$status" -eq 1 ]
	[ "$(jq -c '.variants[] | select(.variant == "default") | .regressed_tests' "$R/summary.json")" = \
		'["k/f/selftests: f: run.sh","k/m/cow","k/p/missing-results"]' ]
	[ "$(jq -c '.variants[] | select(.variant == "default") | .known_failed_tests' "$R/summary.json")" = '["k/m/kfail"]' ]
	[[ "$output" == *"default: regressions versus pristine: k/f/selftests: f: run.sh k/m/cow k/p/missing-results"* ]]
}

@test "build-kernel: #@ source = pristine builds the tree's tag pristine, without the series" {
	fake_project "$BATS_TEST_TMPDIR/p"
	make_patch 0001-two-is-three 2 3
	echo 0001-two-is-three.patch >"$PATCHES/series"
	add_variant pristine '#@ extends = default' '#@ source = pristine'
	"$TOP/scripts/prepare-source"
	run "$TOP/scripts/build-kernel" default
	[ "$status" -eq 0 ]
	run "$TOP/scripts/build-kernel" pristine
	[ "$status" -eq 0 ]
	grep -q 'return 3;' "$ARTIFACTS/default/bzImage"
	grep -q 'return 2;' "$ARTIFACTS/pristine/bzImage"
	[ "$(jq -r .source "$ARTIFACTS/pristine/kernel.json")" = pristine ]
	# the series tree is left as it was
	[ "$(git -C "$BUILD/linux" log --format=%s -1)" = "foo: 0001-two-is-three" ]
	# up to date the second time
	run "$TOP/scripts/build-kernel" pristine
	[[ "$output" == *"up to date"* ]]
}

# A stand-in for scripts/build-kselftests: the overlay of target alpha (a
# list and a runner that prints its arguments), and a record of its call.
fake_build_kselftests() {
	export BUILD_KSELFTESTS=$BATS_TEST_TMPDIR/build-kselftests
	cat >"$BUILD_KSELFTESTS" <<'SH'
#!/bin/sh
# fake build-kselftests HEADERS OUT TARGET...
[ -n "$(ls "$1/include/linux/"*.h)" ] || { echo "no headers in $1" >&2; exit 2; }
out=$2
shift 2
# one argument per target
echo "$# targets: $*" >>"$BATS_TEST_TMPDIR/ksft-builds"
mkdir -p "$out/kselftest"
printf 'alpha:one\nalpha:two\nalpha:slow\nbeta:b1\n' >"$out/kselftest/kselftest-list.txt"
printf '#!/bin/sh\necho "TAP version 13"\necho "# runner args: $*"\n' >"$out/kselftest/run_kselftest.sh"
chmod +x "$out/kselftest/run_kselftest.sh"
SH
	chmod +x "$BUILD_KSELFTESTS"
	export TARGETS_CONF=$BATS_TEST_TMPDIR/targets.conf SKIP_CONF=$BATS_TEST_TMPDIR/skip.conf
	export ARGS_CONF=$BATS_TEST_TMPDIR/args.conf
	printf 'alpha link=static timeout=45 quick=10 full=30\nbeta link=static timeout=20 quick=2 full=2\n' >"$TARGETS_CONF"
	printf 'alpha:slow quick takes too long here\n' >"$SKIP_CONF"
	: >"$ARGS_CONF"
}

@test "build-initramfs: #@ kselftests built against the variant's headers into the initramfs; timeout from the budget; KSELFTEST=full rebuilds" {
	fake_project "$BATS_TEST_TMPDIR/p"
	fake_build_kselftests
	mkdir -p "$GUEST_TESTS/kselftest"
	printf 'kselftest = yes\ntimeout = 60\nsilence = 10\n' >"$GUEST_TESTS/kselftest/suite.conf"
	add_variant default '#@ cmdline = fake=clean' '#@ suites = smoke kselftest' '#@ kselftests = alpha beta' \
		'#@ silence = 10' 'CONFIG_FEATURE=y'
	"$TOP/scripts/prepare-source"
	"$TOP/scripts/build-kernel" default
	run "$TOP/scripts/build-initramfs" default
	echo "$output"
	[ "$status" -eq 0 ]
	# the overlay was built once, for target alpha
	[ "$(wc -l <"$BATS_TEST_TMPDIR/ksft-builds")" = 1 ]
	[ "$(cat "$BATS_TEST_TMPDIR/ksft-builds")" = "2 targets: alpha beta" ]
	# the guest programs, and the suite's timeout: 60 + 3 x (10 + 2) + 45
	[ -x "$ARTIFACTS/default/guest-tests/kselftest/alpha" ]
	[ -x "$ARTIFACTS/default/guest-tests/kselftest/beta" ]
	[ "$(jq -r .suites.kselftest.timeout "$ARTIFACTS/default/variant.json")" = 141 ]
	# a hung test is quiet until the guest's runner ends it (45 s, not
	# scaled): the silence limit outlasts that, under KVM as well
	[ "$(jq -r .suites.kselftest.test_timeout "$ARTIFACTS/default/variant.json")" = 45 ]
	for accel in tcg kvm; do
		run "$TOP/scripts/pipeline" boot plan --accel "$accel" harness "$ARTIFACTS" default /x.log
		[[ "$output" == *$'\n/x.log\ndefault\n'*$'\n105\nsmoke:'* ]]
	done
	zcat "$ARTIFACTS/default/initramfs.cpio.gz" | cpio -t --quiet | grep -qx 'kselftest/run_kselftest.sh'
	# the program runs the quick set through the overlay's runner
	run env KSELFTEST_DIR="$BUILD/ksft/default/kselftest" "$ARTIFACTS/default/guest-tests/kselftest/alpha"
	[[ "$output" == *"# SKIP takes too long here"* ]]
	[[ "$output" == *"runner args: -o 45 -t alpha:one -t alpha:two"* ]]
	# unchanged: up to date, no new kselftest build
	run "$TOP/scripts/build-initramfs" default
	[[ "$output" == *"up to date"* ]]
	# the full set: the variant changed; the overlay is reused
	KSELFTEST=full run "$TOP/scripts/build-initramfs" default
	[ "$status" -eq 0 ]
	[[ "$output" == *"changed: variant"* ]]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/ksft-builds")" = 1 ]
	[ "$(jq -r .suites.kselftest.timeout "$ARTIFACTS/default/variant.json")" = $((60 + 96 + 45)) ]
	run env KSELFTEST_DIR="$BUILD/ksft/default/kselftest" "$ARTIFACTS/default/guest-tests/kselftest/alpha"
	[[ "$output" == *"-t alpha:one -t alpha:two -t alpha:slow"* ]]
	# selftests from another tree (KSFT_SRC) are built again, not reused
	cp -a "$BUILD/linux/tools/testing/selftests" "$BATS_TEST_TMPDIR/other-selftests"
	KSELFTEST=full KSFT_SRC=$BATS_TEST_TMPDIR/other-selftests run "$TOP/scripts/build-initramfs" default
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/ksft-builds")" = 2 ]
	# so are they with another compiler
	mkdir "$BATS_TEST_TMPDIR/cc"
	printf '#!/bin/sh
[ "$1" != --version ] || { echo "gcc (Other) 99.1"; exit 0; }
exec /usr/bin/gcc "$@"
' \
		>"$BATS_TEST_TMPDIR/cc/gcc"
	chmod +x "$BATS_TEST_TMPDIR/cc/gcc"
	PATH=$BATS_TEST_TMPDIR/cc:$PATH KSELFTEST=full KSFT_SRC=$BATS_TEST_TMPDIR/other-selftests \
		run "$TOP/scripts/build-initramfs" default
	[ "$status" -eq 0 ]
	[[ "$output" == *"changed: tools"* ]]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/ksft-builds")" = 3 ]
}

@test "rerun-failed: a failed nested kselftest test reruns the runner's program it is in; deeper globs select it" {
	d=$BATS_TEST_TMPDIR/r
	mkdir -p "$d"
	cat >"$d/results.json" <<'JSON'
{"exit_class": 1, "suites": [{"name": "kselftest"}], "kernel_problems": [],
 "tests": [{"suite": "kselftest", "program": "futex", "name": "run.sh/futex_requeue many returned: 11", "number": 3, "status": "fail"},
           {"suite": "kselftest", "program": "futex", "name": "run.sh/futex_wake private returned: 0", "number": 5, "status": "fail"},
           {"suite": "kselftest", "program": "mm", "name": "cow", "number": 2, "status": "error"}]}
JSON
	run "$TOP/scripts/pipeline" select-tests failed "$d"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = kselftest ]
	[ "${lines[1]}" = "kselftest/futex/run.sh kselftest/mm/cow" ]
	# a glob below the runner's program selects that program
	run python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from pipeline import testsel
print(testsel.selects(["kselftest/alpha/two/sub*"], "kselftest", "alpha", "two"))' "$TOP"
	[ "$output" = True ]
	fake_ksft
	export TESTS_DIR=$BATS_TEST_TMPDIR/tests PATH=$TOP/tests/fixtures/fakes:$PATH
	"$TOP/scripts/kselftest-suite" "$K/kselftest/kselftest-list.txt" quick "$TESTS_DIR/kselftest" alpha >/dev/null
	run sh "$TOP/guest-tests/runner/run-suite" kselftest 'kselftest/alpha/two/sub*'
	[ "$status" -eq 0 ]
	[[ "$output" == *"# runner args: -o 45 -t alpha:two"* ]]
}

@test "summarize: a test that passed on pristine and skips or vanished from a program that ran is LOST; accepted ones are listed with their reason; skips counted per reason" {
	R=$BATS_TEST_TMPDIR/results
	fake_results "$R" default k/a/x=skip k/a/z=pass k/b/missing-results=error u/p/t=skip
	fake_results "$R" pristine k/a/x=pass k/a/y=pass k/a/z=pass k/b/r=pass k/c/s=pass
	python3 - "$R/default/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for t in r['tests']:
    if t['status'] == 'skip':
        t['skip_reason'] = 'no swap' if t['id'] == 'k/a/x' else 'no KVM'
json.dump(r, open(sys.argv[1], 'w'))
PY
	run "$TOP/scripts/pipeline" summarize "$R" default pristine
	echo "$output"
	# a failure for make check: the exit status and the matrix line
	[ "$status" -eq 1 ]
	[[ "$output" == *"matrix: 6 passed, 3 failed, 2 skipped"* ]]
	# k/a/x skipped, k/a/y gone from a program that ran; k/b failed as a
	# whole (a failure already), k/c never ran here
	[ "$(jq -c '.variants[] | select(.variant == "default") | .lost_tests' "$R/summary.json")" = '["k/a/x","k/a/y"]' ]
	[[ "$output" == *"default: regressions versus pristine: LOST:k/a/x LOST:k/a/y"* ]]
	[ "$(jq -c '.variants[] | select(.variant == "default") | .skip_reasons' "$R/summary.json")" = '{"no swap":1,"no KVM":1}' ]
	mkdir -p "$BATS_TEST_TMPDIR/c"
	printf 'k/a/y  retired upstream\n' >"$BATS_TEST_TMPDIR/c/accepted-skips.txt"
	CONFIGS=$BATS_TEST_TMPDIR/c run "$TOP/scripts/pipeline" summarize "$R" default pristine
	[[ "$output" == *"default: passed on pristine, not run or skipped here, accepted (configs/accepted-skips.txt): k/a/y (retired upstream)"* ]]
	[ "$(jq -c '.variants[] | select(.variant == "default") | [.lost_tests, .accepted_lost]' "$R/summary.json")" = '[["k/a/x"],["k/a/y (retired upstream)"]]' ]
	run "$TOP/scripts/pipeline" skips "$R/default"
	[ "$status" -eq 0 ]
	[[ "$output" == *"== default: 2 skipped of 4, 2 reasons"* ]]
	[[ "$output" == *"     1  no swap"*"        k/a/x"* ]]
}
