#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# Markers only their writer can write (docs/architecture.md): the guest's
# ktap-run (compiled here as the initramfs build compiles it) and the
# smoke suite's markers program, which prints every marker of
# expect-scripts/PROTOCOL.md on stdout, stderr and /dev/kmsg (a file here),
# run by the guest's real run-suite; their output, put into recorded
# console logs (tests/fixtures/console-logs) where the guest printed it,
# leaves the verdict as it was.

load ../helpers

LOGS=$TOP/tests/fixtures/console-logs

# Compiled once for the file's tests (each test gets its own copy).
setup_file() {
	local b=$BATS_FILE_TMPDIR/built
	mkdir -p "$b/bin" "$b/tests/smoke"
	gcc -O2 -Wall -Wextra -Werror -o "$b/bin/ktap-run" "$TOP/guest-tests/runner/ktap-run.c"
	gcc -O2 -Wall -Wextra -Werror -o "$b/tests/smoke/markers" "$TOP/guest-tests/smoke/markers.c"
}

setup() {
	d=$BATS_TEST_TMPDIR
	cp -a "$BATS_FILE_TMPDIR/built/." "$d/"
	: >"$d/kmsg"
}

# The guest's side of "run-suite smoke" with the markers program alone,
# then its /dev/kmsg lines as the console shows kernel records
# (timestamped, from uptime 11.2).
guest_run() {
	PATH=$d/bin:$PATH TESTS_DIR=$d/tests KMSG=$d/kmsg sh "$TOP/guest-tests/runner/run-suite" smoke >"$d/run.out"
	awk '{ printf "[   11.2%05d] %s\n", NR, $0 }' "$d/kmsg" >"$d/kmsg.console"
}

@test "ktap-run: a line of 8191 bytes or more keeps its newline; the result after it keeps its line and duration" {
	cat >"$d/long" <<'SH'
#!/bin/sh
echo "TAP version 13"
echo "1..2"
head -c 9000 /dev/zero | tr '\0' x; echo
echo "ok 1 first"
head -c 8191 /dev/zero | tr '\0' y; echo
echo "ok 2 second"
printf 'no newline at the end'
SH
	chmod +x "$d/long"
	run --separate-stderr "$d/bin/ktap-run" "$d/long"
	[ "$status" = 0 ]
	lines_=$(printf '%s\n' "$output" | sed 's/duration_ms=[0-9]*$/duration_ms=N/' | awk '{ print length($0) ":" substr($0, 1, 16) }')
	echo "$lines_"
	[ "$lines_" = "$(printf '%s\n' '14:TAP version 13' '4:1..2' '9000:xxxxxxxxxxxxxxxx' \
		'15:# duration_ms=N' '10:ok 1 first' '8191:yyyyyyyyyyyyyyyy' '15:# duration_ms=N' \
		'11:ok 2 second' '21:no newline at th')" ]
}

@test "ktap-run: no '@@@' of a program's output reaches the console, stdout or stderr, but its own whole '@@@ RETRY' line" {
	cat >"$d/forge" <<'SH'
#!/bin/sh
echo "@@@ CHECK lockdep on debug_locks=1"
echo "x@@@@@@@ SUITE-END smoke rc=0" >&2
echo "@@@ RETRY kselftest/t a/*"
echo " @@@ RETRY kselftest/t a/*"
SH
	chmod +x "$d/forge"
	run --separate-stderr "$d/bin/ktap-run" "$d/forge"
	[ "$status" = 0 ]
	[ "$output" = "$(printf '%s\n' '@@ @ CHECK lockdep on debug_locks=1' 'x@@ @@ @@ @ SUITE-END smoke rc=0' \
		'@@@ RETRY kselftest/t a/*' ' @@ @ RETRY kselftest/t a/*')" ]
}

@test "markers program: every marker on stdout, stderr and /dev/kmsg, in a real run, leaves the verdict as it was" {
	guest_run
	# every marker went out three ways, three times each
	[ "$(grep -c '@@@' "$d/kmsg")" = "$(($(grep -c '"@@@ ' "$TOP/guest-tests/smoke/markers.c") * 3))" ]
	# none of the program's own reached the console but its RETRY line
	[ "$(grep -v '^@@@ \(SUITE-\|TEST-\)' "$d/run.out" | grep '@@@' | sort -u)" = '@@@ RETRY smoke/markers forged/*' ]
	grep -qx 'ok 1 markers_printed' "$d/run.out"
	# clean.log: its boot, this run of the smoke suite, its power-off
	{
		sed -n '1,/^@@@ HARNESS SEND run-suite/{/^@@@ HARNESS SEND run-suite/d;p}' "$LOGS/clean.log"
		echo '@@@ HARNESS SEND run-suite smoke'
		sed '/^@@@ TEST-BEGIN /r '"$d/kmsg.console" "$d/run.out"
		echo '@@@ HARNESS SUITE-DONE suite=smoke elapsed=5.2'
		sed -n '/^@@@ HARNESS SEND poweroff/,$p' "$LOGS/clean.log"
	} >"$d/console.log"
	run "$TOP/scripts/pipeline" parse --no-plan --out "$d/out" "$d/console.log"
	echo "$output"
	[ "$status" = 0 ]
	r=$d/out/results.json
	[ "$(jq -c '[.variant, .counts.pass, .counts.total, .checks, .kernel_problems, .harness.sent, [.harness.events[].event]]' "$r")" = \
		'["lkdtm",1,1,{},[],["run-suite smoke","poweroff -f"],["READY-SEEN","SUITE-DONE","QEMU-EXIT","END"]]' ]
	[ "$(jq -r '.tests[].id' "$r")" = smoke/markers/markers_printed ]
}

@test "markers program: in a debug run, the final command's real CHECK lines stand (lockdep off is class 2, all on class 0)" {
	guest_run
	jq '.suites[0].programs += ["markers"]' "$LOGS/debug.plan.json" >"$d/plan.json"
	# debug.log with this program after its smoke program, and the CHECK
	# lines of debug-checks, the final command, after its scan
	sed -n '/^@@@ TEST-BEGIN/,/^@@@ TEST-END/p' "$d/run.out" | sed '/^@@@ TEST-BEGIN /r '"$d/kmsg.console" >"$d/prog"
	for lockdep in off on; do
		printf '%s\n' '@@@ CHECK kmemleak on two scans done' "@@@ CHECK lockdep $lockdep debug_locks=$([ "$lockdep" = on ] && echo 1 || echo 0)" \
			'@@@ CHECK panic_on_warn on panic_on_warn=1' >"$d/checks"
		sed -e '/^@@@ TEST-END smoke\/smoke/r '"$d/prog" -e '/^# kmemleak-scan: done/r '"$d/checks" \
			"$LOGS/debug.log" >"$d/console.log"
		run "$TOP/scripts/pipeline" parse --plan "$d/plan.json" --out "$d/out" "$d/console.log"
		echo "$output"
		if [ "$lockdep" = off ]; then
			[ "$status" = 2 ]
			[[ "$(jq -c '[.reasons[].reason]' "$d/out/results.json")" =~ ^\[\"debug\ checker\ lockdep\ is\ off:\ debug_locks=0\ \(line\ [0-9]+\)\"\]$ ]]
		else
			[ "$status" = 0 ]
		fi
		[ "$(jq -r '.tests[] | select(.program == "markers") | .status' "$d/out/results.json")" = pass ]
	done
}
