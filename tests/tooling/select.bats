#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# TESTS selections: the guest's run-suite (run here with sh on a suite
# directory), the host's rules (pipeline/testsel.py) that must agree with
# it, and what `make rerun-failed` selects (scripts/pipeline select-tests failed).

load ../helpers

setup() {
	export TESTS_DIR=$BATS_TEST_TMPDIR/tests PATH=$TOP/tests/fixtures/fakes:$PATH
	export PYTHONDONTWRITEBYTECODE=1
	mkdir -p "$TESTS_DIR/s"
	# a kselftest_harness program (the real "-l" table) and a plain one
	cp "$TOP/tests/fixtures/fakes/ksft-program" "$TOP/tests/fixtures/fakes/harness-list.txt" "$TESTS_DIR/s/"
	chmod -x "$TESTS_DIR/s/harness-list.txt"
	printf '#!/bin/sh\necho "TAP version 13"; echo "1..1"; echo "ok 1 only"\n' >"$TESTS_DIR/s/plain"
	chmod +x "$TESTS_DIR/s/plain"
}

# The ids run-suite ran: suite/program/test of every result line.
ran() { # GLOB...
	sh "$TOP/guest-tests/runner/run-suite" s "$@" | awk '
		/^@@@ TEST-BEGIN / { prog = $3 }
		/^ok [0-9]+ / { print prog "/" $3 }' | sort
}

@test "run-suite: no TESTS runs everything; each glob selects as pipeline/testsel.py says" {
	all=$(ran)
	[ "$(wc -l <<<"$all")" = 10 ]
	for sel in "s" "s/ksft-program" "s/ksft-*" "s/*/global.*" "s/ksft-program/fx.t*" \
		"s/ksft-program/fx.*.second s/ksft-program/a_*" "s/plain/x" "s/*/*.one.*" \
		"s/ksft-program/global.alpha" "s/ksft-program/fx.[ot]*.first" "*/plain" "s/p*"; do
		# shellcheck disable=SC2086 # the globs as separate words
		got=$(ran $sel)
		[ -n "$got" ] || { echo "nothing ran for '$sel'"; return 1; }
		# shellcheck disable=SC2086
		want=$(cd "$TESTS_DIR" && all=$all python3 -c 'import os, sys; sys.path.insert(0, sys.argv[1]); from pipeline import testsel
globs = sys.argv[2].split()
for i in os.environ["all"].split():
    s, p, t = i.split("/", 2)
    ok = testsel.selects(globs, s, p) if p == "plain" else testsel.selects(globs, s, p, t)
    if ok is not False:
        print(i)' "$TOP" "$sel" | sort)
		[ "$got" = "$want" ] || { printf 'TESTS=%s\nrun-suite ran:\n%s\ntestsel says:\n%s\n' "$sel" "$got" "$want"; return 1; }
	done
}

@test "run-suite: a harness program gets -r for each selected test, and says how many" {
	run sh "$TOP/guest-tests/runner/run-suite" s 's/ksft-program/fx.*.second' 's/ksft-program/a_*'
	[ "$status" -eq 0 ]
	[[ "$output" == *"# run-suite: 4 of 9 tests selected"* ]]
	[ "$(grep -c '^ok ' <<<"$output")" = 4 ]
	[[ "$output" == *"ok 4 a_fixture_name_longer_than_twenty.only"* ]]
	# the plain program is not reached by these globs
	[[ "$output" != *"TEST-BEGIN s/plain"* ]]
	# a glob inside a program without the harness runs it whole, saying so
	run sh "$TOP/guest-tests/runner/run-suite" s 's/plain/only'
	[[ "$output" == *"s/plain is not a kselftest_harness program"* ]]
}

@test "run-suite: a harness program whose -l lists nothing is run whole, not skipped" {
	printf '#!/bin/sh\n# [-t|-T|-v|-V|-f|-F|-r name]\n[ "$1" = -l ] && exit 4\necho "TAP version 13"; echo "1..1"; echo "ok 1 global.x"\n' >"$TESTS_DIR/s/quiet"
	chmod +x "$TESTS_DIR/s/quiet"
	run sh "$TOP/guest-tests/runner/run-suite" s 's/quiet/global.x'
	[ "$status" -eq 0 ]
	[[ "$output" == *"# run-suite: s/quiet listed no tests (-l): it runs whole"* ]]
	[[ "$output" == *"ok 1 global.x"* ]]
}

@test "run-suite: a selection that runs nothing is rc=2 and says so, not a pass" {
	run sh "$TOP/guest-tests/runner/run-suite" s 's/nosuch'
	[ "$status" -eq 2 ]
	[[ "$output" == *"# run-suite: nothing in s matches TESTS: s/nosuch"* ]]
	[[ "$output" == *"@@@ SUITE-END s rc=2 "* ]]
	# a directory (a suite's helpers, e.g. bin/) is not a program
	mkdir "$TESTS_DIR/s/nosuch"
	run sh "$TOP/guest-tests/runner/run-suite" s 's/nosu*'
	[ "$status" -eq 2 ]
}

@test "run-suite: a glob is not expanded against the files where it runs" {
	# in a directory where s/p* names a file, the glob still selects the
	# program plain, which pathname expansion to s/pzzz would not
	mkdir -p "$BATS_TEST_TMPDIR/cwd/s"
	touch "$BATS_TEST_TMPDIR/cwd/s/pzzz"
	cd "$BATS_TEST_TMPDIR/cwd"
	run sh "$TOP/guest-tests/runner/run-suite" s 's/p*'
	[ "$status" -eq 0 ]
	[[ "$output" == *"@@@ TEST-BEGIN s/plain "* ]]
}

@test "run-suite: a file that is not executable is a program that cannot run (rc 126, rc=1), never skipped in silence" {
	printf 'not a program\n' >"$TESTS_DIR/s/data"
	run sh "$TOP/guest-tests/runner/run-suite" s
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *$'@@@ TEST-BEGIN s/data uptime='*$'\n# run-suite: s/data is not executable: it cannot run\n@@@ TEST-END s/data rc=126 uptime='* ]]
	[[ "$output" == *"@@@ SUITE-END s rc=1 "* ]]
	# not selected, it is not reported
	run sh "$TOP/guest-tests/runner/run-suite" s 's/quiet*'
	[[ "$output" != *"s/data"* ]]
}

# pipeline/testsel.py's own rules, in-process: tests/unit/test_testsel.py.

@test "select-tests check: a glob the guest shell could misread is exit 2, named" {
	run "$TOP/scripts/pipeline" select-tests check "umcg/x'y"
	[ "$status" -eq 2 ]
	[[ "$output" == *"TESTS: 'umcg/x'y' has a character a test glob cannot have"* ]]
	run "$TOP/scripts/pipeline" select-tests check 'umcg//x'
	[ "$status" -eq 2 ]
	[[ "$output" == *"has an empty component"* ]]
	run "$TOP/scripts/pipeline" select-tests check 'umcg/switch*' 'smoke'
	[ "$status" -eq 0 ]
}

# results.json of a run, from a Python literal of its tests (and more).
results() { # DIR PY-DICT
	mkdir -p "$1"
	python3 -c 'import json, sys
r = {"variant": "v", "exit_class": 1, "tests": [], "kernel_problems": [], "suites": []}
r.update(eval(sys.argv[2]))
json.dump(r, open(sys.argv[1] + "/results.json", "w"))' "$1" "$2"
}

t() { # SUITE PROGRAM NAME STATUS [NUMBER]
	printf '{"suite": "%s", "program": "%s", "name": "%s", "id": "%s/%s/%s", "status": "%s", "number": %s}' \
		"$1" "$2" "$3" "$1" "$2" "$3" "$4" "${5:-1}"
}

@test "select-tests failed: failed tests by id, a missing result as its program, a kernel report's program" {
	d=$BATS_TEST_TMPDIR/r
	results "$d" "{'tests': [$(t umcg switch global.a pass), $(t umcg switch 'global.b[1]' fail 2),
		$(t umcg switch 'global.b[1]#3' fail 3), $(t umcg block test-4 error None),
		$(t smoke smoke global.ok skip)],
		'kernel_problems': [{'kind': 'warning', 'during': 'isolation/effect/global.quiesce'}],
		'suites': [{'name': 'umcg'}, {'name': 'smoke'}, {'name': 'isolation'}]}"
	run "$TOP/scripts/pipeline" select-tests failed "$d"
	[ "$status" -eq 0 ]
	echo "$output"
	[ "${lines[0]}" = "umcg isolation" ]
	[ "${lines[1]}" = "umcg/switch/global.b[[]1] umcg/block isolation/effect" ]
}

@test "select-tests failed: nothing failed is nothing; a run that never got to a test is repeated as it was" {
	d=$BATS_TEST_TMPDIR/r
	results "$d" "{'exit_class': 0, 'tests': [$(t smoke smoke global.ok pass)]}"
	run "$TOP/scripts/pipeline" select-tests failed "$d"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '\n')" ] || [ "$output" = "" ]
	results "$d" "{'exit_class': 2, 'suites': [{'name': 'smoke'}, {'name': 'umcg'}]}"
	run "$TOP/scripts/pipeline" select-tests failed "$d"
	[ "${lines[0]}" = "smoke umcg" ]
	[ "${#lines[@]}" -eq 1 ]
	run "$TOP/scripts/pipeline" select-tests failed "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 2 ]
	[[ "$output" == *"run make test-variant first"* ]]
}

@test "debug-checks: each checker's state from /sys and /proc; one that refuses a scan, has debug_locks 0 or is missing is off" {
	r=$BATS_TEST_TMPDIR/root
	mkdir -p "$r/sys/kernel/debug" "$r/proc/sys/kernel"
	: >"$r/sys/kernel/debug/kmemleak"
	printf ' debug_locks:                             1\n' >"$r/proc/lockdep_stats"
	echo 1 >"$r/proc/sys/kernel/panic_on_warn"
	CHECKS_ROOT=$r run sh "$TOP/guest-tests/runner/debug-checks"
	[ "$status" -eq 0 ]
	[ "$(grep '^@@@ CHECK' <<<"$output" | paste -sd'|')" = "@@@ CHECK kmemleak on two scans done|@@@ CHECK lockdep on debug_locks=1|@@@ CHECK panic_on_warn on panic_on_warn=1" ]
	# the report between its lines (here the file holds what was written)
	[[ "$output" == *$'# debug-checks: kmemleak report follows\nscan\n# debug-checks: kmemleak report done'* ]]
	# a kmemleak that refuses commands (here: writes fail) has disabled itself
	rm "$r/sys/kernel/debug/kmemleak"
	mkdir "$r/sys/kernel/debug/kmemleak"
	printf ' debug_locks:                             0\n' >"$r/proc/lockdep_stats"
	echo 0 >"$r/proc/sys/kernel/panic_on_warn"
	CHECKS_ROOT=$r run sh "$TOP/guest-tests/runner/debug-checks"
	[ "$(grep '^@@@ CHECK' <<<"$output" | cut -d' ' -f3,4 | paste -sd'|')" = "kmemleak off|lockdep off|panic_on_warn off" ]
	[[ "$output" == *"@@@ CHECK kmemleak off $r/sys/kernel/debug/kmemleak refuses a scan"* ]]
	[[ "$output" == *"@@@ CHECK lockdep off debug_locks=0"* ]]
	rm -r "$r/sys/kernel/debug/kmemleak" "$r/proc/lockdep_stats"
	CHECKS_ROOT=$r run sh "$TOP/guest-tests/runner/debug-checks"
	[[ "$output" == *"@@@ CHECK kmemleak off no $r/sys/kernel/debug/kmemleak (CONFIG_DEBUG_KMEMLEAK off, or no debugfs)"* ]]
	[[ "$output" == *"@@@ CHECK lockdep off no $r/proc/lockdep_stats (CONFIG_LOCKDEP off)"* ]]
}
