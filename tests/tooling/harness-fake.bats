#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# The boot harness itself (expect-scripts/boot-and-test.exp and the parser
# of what it writes), with a fake QEMU (tests/fixtures/fakes/qemu-system-x86_64)
# instead of a kernel: every way a boot can end, in seconds, and the exit
# class each one yields.

load ../helpers

setup() {
	# The fake's kernel and initrd: unique paths, so that a fake QEMU left
	# running by a test can be found.
	k=$BATS_TEST_TMPDIR/bzImage
	i=$BATS_TEST_TMPDIR/initrd
	echo fake >"$k"
	# The initramfs: the guest's real run-suite, and suites smoke and
	# other of one program each (the fake QEMU runs them with it).
	local r=$BATS_TEST_TMPDIR/root s
	mkdir -p "$r/bin"
	cp "$TOP/guest-tests/runner/run-suite" "$r/bin/"
	[ ! -e "$TOP/guest-tests/runner/ready" ] || cp "$TOP/guest-tests/runner/ready" "$r/bin/"
	cp "$TOP/guest-tests/runner/debug-checks" "$r/bin/"
	for s in smoke other; do
		mkdir -p "$r/tests/$s"
		printf '#!/bin/sh\necho "TAP version 13"; echo "1..1"; echo "ok 1 %s"\n' "$s" >"$r/tests/$s/t"
		chmod +x "$r/tests/$s/t"
	done
	mkdir -p "$r/tests/empty"
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip) >"$i"
	log=$BATS_TEST_TMPDIR/out/console.log
	mkdir -p "$BATS_TEST_TMPDIR/out"
}

teardown() {
	pkill -9 -f "$BATS_TEST_TMPDIR/bzImage" 2>/dev/null || true
	pkill -9 -f "$BATS_TEST_TMPDIR/fake-guest" 2>/dev/null || true
}

# Every "@@@ HARNESS" line of the log is one pipeline/protocol.py defines,
# with its fields (the definition pipeline/machine.py writes by); boot()
# holds every boot of these tests to it.
protocol_lines() {
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
from pipeline import protocol
lines = [l.rstrip("\r\n") for l in open(sys.argv[2], encoding="utf-8", errors="replace") if l.startswith(protocol.PREFIX)]
bad = [protocol.check(l) for l in lines if protocol.check(l)]
print("\n".join(bad) or "%d harness lines" % len(lines))
sys.exit(1 if bad or not lines else 0)' "$TOP" "$log"
}

# boot SCENARIO BOOT_TIMEOUT SILENCE SUITES [OPTIONS...]: the harness with
# the fake QEMU; $status is the harness's exit, $class the parser's.
boot() {
	local scenario=$1 bt=$2 silence=$3 suites=$4
	shift 4
	start=$SECONDS
	run "$TOP/expect-scripts/boot-and-test.exp" "$@" "$log" fakevariant "$bt" "$silence" "$suites" \
		"$TOP/pipeline/results/failure-patterns.txt" -- "$TOP/tests/fixtures/fakes/qemu-system-x86_64" \
		-kernel "$k" -initrd "$i" -append "console=ttyS0 fake=$scenario"
	took=$((SECONDS - start))
	harness=$status
	class=0
	"$TOP/scripts/pipeline" parse --quiet --out "$BATS_TEST_TMPDIR/out" "$log" || class=$?
	# every boot's harness lines are the protocol's
	[ ! -s "$log" ] || protocol_lines >/dev/null || { protocol_lines; return 1; }
}

reason() {
	jq -r '.reasons[0].reason' "$BATS_TEST_TMPDIR/out/results.json"
}

# Neither the fake QEMU nor its guest's programs (the trouble a suite
# plays runs there: tests/fixtures/fakes/ktap-run) outlive the harness; a
# hung-up guest gets a moment to go.
no_fake_left() {
	local i
	for i in $(seq 20); do
		pgrep -f "$BATS_TEST_TMPDIR/(bzImage|fake-guest)" >/dev/null || return 0
		sleep 0.1
	done
	pgrep -af "$BATS_TEST_TMPDIR/(bzImage|fake-guest)"
	return 1
}

@test "harness: a clean boot runs every suite, powers off and passes (class 0)" {
	boot clean 5 5 "smoke:5 other:5"
	[ "$harness" -eq 0 ]
	[ "$class" -eq 0 ] || { cat "$log"; jq .reasons "$BATS_TEST_TMPDIR/out/results.json"; false; }
	[ "$(jq -r .counts.pass "$BATS_TEST_TMPDIR/out/results.json")" = 2 ]
	grep -q '^@@@ HARNESS QEMU-EXIT status=0' "$log"
	no_fake_left
}

@test "harness: no READY marker within the boot timeout is BOOT-TIMEOUT, class 2" {
	boot no-ready 2 10 "smoke:5"
	[ "$harness" -eq 2 ]
	[ "$class" -eq 2 ]
	[ "$took" -lt 10 ]
	grep -q '^@@@ HARNESS BOOT-TIMEOUT after=2' "$log"
	[ "$(reason)" = "boot timeout after 2s" ]
	no_fake_left
}

@test "harness: a suite that never ends is stopped at its own timeout, class 2" {
	boot hang 5 10 "smoke:2"
	[ "$harness" -eq 2 ]
	[ "$class" -eq 2 ]
	[ "$took" -lt 10 ]
	grep -q '^@@@ HARNESS SUITE-TIMEOUT suite=smoke after=2' "$log"
	[ "$(reason)" = "suite smoke timed out after 2s" ]
	no_fake_left
}

@test "harness: a console quiet for longer than the silence limit is SILENCE, class 2" {
	boot silent 5 2 "smoke:30"
	[ "$harness" -eq 2 ]
	[ "$class" -eq 2 ]
	[ "$took" -lt 10 ]
	grep -q '^@@@ HARNESS SILENCE after=2' "$log"
	[ "$(reason)" = "console silent for 2s" ]
	no_fake_left
}

@test "harness: a panic is seen live and ends the run at once, class 3" {
	boot panic 5 30 "smoke:30 other:30"
	[ "$harness" -eq 3 ]
	[ "$class" -eq 3 ]
	[ "$took" -lt 10 ]
	grep -q '^@@@ HARNESS PANIC' "$log"
	# The second suite was never sent.
	run ! grep -q 'SEND run-suite other' "$log"
	[ "$(reason)" = "kernel panic: Kernel panic - not syncing: fake panic" ]
	no_fake_left
}

@test "harness: a fake trouble that no program played (a suite without programs) fails the boot, never a clean pass" {
	boot panic 5 10 "empty:5"
	[ "$class" -eq 2 ]
	grep -q 'fake: scenario panic never played: no program ran' "$log"
	no_fake_left
}

@test "harness: QEMU ending before READY is class 2 with its exit status" {
	boot exit-early 5 5 "smoke:5"
	[ "$harness" -eq 2 ]
	[ "$class" -eq 2 ]
	grep -q '^@@@ HARNESS QEMU-EXIT status=1' "$log"
	jq -r '.reasons[].reason' "$BATS_TEST_TMPDIR/out/results.json" | grep -qx 'QEMU exited with status 1 without a kernel panic'
	no_fake_left
}

@test "harness: QEMU that does not end after poweroff is POWEROFF-TIMEOUT, class 2, said so" {
	boot no-poweroff 5 10 "smoke:5" --poweroff-timeout 2
	[ "$harness" -eq 2 ]
	[ "$class" -eq 2 ]
	[ "$took" -lt 10 ]
	grep -q '^@@@ HARNESS POWEROFF-TIMEOUT after=2' "$log"
	# The tests passed; the reason is the power-off, not "QEMU killed".
	[ "$(jq -r .counts.pass "$BATS_TEST_TMPDIR/out/results.json")" = 1 ]
	[ "$(reason)" = "QEMU did not end within 2s of poweroff -f" ]
	no_fake_left
}

@test "harness: SIGTERM to the harness is INTERRUPTED, class 2, and QEMU is gone" {
	"$TOP/expect-scripts/boot-and-test.exp" "$log" fakevariant 5 30 "smoke:30" \
		"$TOP/pipeline/results/failure-patterns.txt" -- "$TOP/tests/fixtures/fakes/qemu-system-x86_64" \
		-kernel "$k" -initrd "$i" -append "fake=silent" &
	pid=$!
	for _ in $(seq 50); do
		grep -q 'SUITE-BEGIN' "$log" 2>/dev/null && break
		sleep 0.1
	done
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 2 ]
	grep -q '^@@@ HARNESS INTERRUPTED signal=SIGTERM' "$log"
	grep -q '^@@@ HARNESS END' "$log"
	run "$TOP/scripts/pipeline" parse --quiet --out "$BATS_TEST_TMPDIR/out" "$log"
	[ "$status" -eq 2 ]
	[ "$(reason)" = "the harness was interrupted (SIGTERM) and killed QEMU" ]
	no_fake_left
}

@test "harness: the final command runs after the suites; one that hangs is FINAL-TIMEOUT" {
	boot clean 5 10 "smoke:5" --final "debug-checks"
	[ "$harness" -eq 0 ]
	[ "$class" -eq 0 ] || { cat "$log"; jq .reasons "$BATS_TEST_TMPDIR/out/results.json"; false; }
	grep -q '^@@@ HARNESS SEND debug-checks' "$log"
	# after the suite, before the power-off
	[ "$(grep -n '^@@@ HARNESS SEND' "$log" | cut -d' ' -f4- | paste -sd'|')" = "run-suite smoke|debug-checks|poweroff -f" ]
	boot hang 5 10 "" --final "sleep 100" --final-timeout 2
	[ "$harness" -eq 2 ]
	grep -q '^@@@ HARNESS FINAL-TIMEOUT after=2' "$log"
	[ "$(reason)" = "the final command timed out after 2s" ]
	no_fake_left
}

@test "fake QEMU: its READY and @@@ CHECK lines are the initramfs's own (bin/ready, bin/debug-checks over a fake /proc and /sys), not its own copies" {
	# the guest's programs, edited: the fake prints what they print
	local r=$BATS_TEST_TMPDIR/root
	printf '#!/bin/sh\necho "@@@ READY release=edited uptime=$(cut -d" " -f1 "${PROC_ROOT:-}/proc/uptime")"\n' >"$r/bin/ready"
	sed -i 's/@@@ CHECK lockdep on debug_locks=1/@@@ CHECK lockdep on edited/' "$r/bin/debug-checks"
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip) >"$i"
	boot clean 5 10 "smoke:5" --final "debug-checks"
	cat "$log"
	[ "$harness" -eq 0 ]
	grep -q '^@@@ READY release=edited uptime=1.00' "$log"
	grep -q '^@@@ CHECK lockdep on edited' "$log"
	grep -q '^@@@ CHECK panic_on_warn on panic_on_warn=1' "$log"
	grep -q '^@@@ CHECK kmemleak on two scans done' "$log"
	# kmemleak-off: the fake's kmemleak refuses a scan, as a kernel's that
	# disabled itself does
	boot kmemleak-off 5 10 "" --final "debug-checks"
	grep -q '^@@@ CHECK kmemleak off .*refuses a scan' "$log"
}


@test "harness: usage errors exit 2 and start nothing" {
	run "$TOP/expect-scripts/boot-and-test.exp" "$log" v 5
	[ "$status" -eq 2 ]
	[[ "$output" == *usage:* ]]
	run "$TOP/expect-scripts/boot-and-test.exp" "$log" v soon 5 "" "$TOP/pipeline/results/failure-patterns.txt" -- true
	[ "$status" -eq 2 ]
	[[ "$output" == *"BOOT_TIMEOUT must be a positive number"* ]]
	run "$TOP/expect-scripts/boot-and-test.exp" --bogus 1 "$log" v 5 5 "" "$TOP/pipeline/results/failure-patterns.txt" -- true
	[ "$status" -eq 2 ]
	[ ! -e "$log" ]
}
