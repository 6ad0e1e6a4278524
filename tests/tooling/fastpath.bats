#!/usr/bin/env bats
# scripts/fastpath-insns on two tiny objects with the functions it counts:
# the per-function instructions, the delta, and its allowances (issue 44,
# defect 3; tests/system/fastpath.bats runs it on the real kernels).
bats_require_minimum_version 1.5.0

load ../helpers

# obj NAME EXTRA: an object with every counted function, schedule() with
# EXTRA more statements
obj() {
	local c=$BATS_TEST_TMPDIR/$1.c i
	{
		echo 'volatile int v;'
		printf 'void schedule(void) { v = 1;'
		for ((i = 0; i < $2; i++)); do printf ' v = %d;' "$((i + 2))"; done
		echo ' }'
		for f in sched_submit_work __schedule syscall_exit_to_user_mode \
			irqentry_exit_to_user_mode exit_to_user_mode_loop; do
			echo "void $f(void) { v = 1; }"
		done
	} >"$c"
	gcc -O1 -c -o "$BATS_TEST_TMPDIR/$1.o" "$c"
	echo "$BATS_TEST_TMPDIR/$1.o"
}

@test "fastpath-insns: equal objects pass with +0 for every function" {
	a=$(obj a 0)
	run "$TOP/scripts/fastpath-insns" "$a" "$a"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 6 ]
	[[ "${lines[0]}" =~ ^schedule\ ([0-9]+)\ ([0-9]+)\ \+0$ ]]
}

@test "fastpath-insns: a function that grows fails, naming it, unless allowed" {
	a=$(obj a 0)
	b=$(obj b 2)
	run "$TOP/scripts/fastpath-insns" "$a" "$b"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "schedule "*" +2 more than allowed (0)" ]]
	echo 'schedule 2  # two stores' >"$BATS_TEST_TMPDIR/allow"
	run "$TOP/scripts/fastpath-insns" "$a" "$b" "$BATS_TEST_TMPDIR/allow"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^schedule\ [0-9]+\ [0-9]+\ \+2$ ]]
	# shrinking is fine
	run "$TOP/scripts/fastpath-insns" "$b" "$a"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^schedule\ [0-9]+\ [0-9]+\ -2$ ]]
}

@test "fastpath-insns: a function missing from one kernel fails" {
	a=$(obj a 0)
	FASTPATH_FUNCTIONS="schedule no_such_function" run "$TOP/scripts/fastpath-insns" "$a" "$a"
	[ "$status" -eq 1 ]
	[ "${lines[1]}" = "no_such_function - - missing" ]
}

@test "fastpath-insns: reads a vmlinux.xz as artifacts/ holds it" {
	a=$(obj a 0)
	xz -k "$a"
	run "$TOP/scripts/fastpath-insns" "$a.xz" "$a"
	[ "$status" -eq 0 ]
}
