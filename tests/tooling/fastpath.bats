#!/usr/bin/env bats
# scripts/fastpath-insns on two tiny objects with the functions it counts:
# the per-function instructions, the delta, and its allowances (issue 44,
# defect 3; tests/system/fastpath.bats runs it on the real kernels); and
# the no-work path (issue 45, defect 6) on tiny gcc -O2 objects whose
# code has the shapes of the real functions': the work out of line, code
# added on the work branch only, a test added on the way every task takes,
# a loop, a tail call, a decision after a cmp.
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
	[[ "${lines[0]}" =~ ^schedule\ ([0-9]+)\ ([0-9]+)\ \+0\;\ path\ ([0-9]+)\ ([0-9]+)\ \+0\ \(not\ held\)$ ]]
}

@test "fastpath-insns: a function that grows fails, naming it, unless allowed" {
	a=$(obj a 0)
	b=$(obj b 2)
	run "$TOP/scripts/fastpath-insns" "$a" "$b"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "schedule "*" +2 more than allowed (0); path "* ]]
	echo 'schedule 2  # two stores' >"$BATS_TEST_TMPDIR/allow"
	run "$TOP/scripts/fastpath-insns" "$a" "$b" "$BATS_TEST_TMPDIR/allow"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^schedule\ [0-9]+\ [0-9]+\ \+2\;\ path ]]
	# shrinking is fine
	run "$TOP/scripts/fastpath-insns" "$b" "$a"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^schedule\ [0-9]+\ [0-9]+\ -2\;\ path ]]
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

# cobj NAME: an object of the C on stdin (the struct and the functions
# the C may call declared), built as the kernel is, gcc -O2
cobj() {
	{
		echo 'struct task { unsigned long flags, other; int count; };'
		echo 'void work(unsigned long f); void more(unsigned long f);'
		echo 'void tail(void);'
		echo '#define unlikely(x) __builtin_expect(!!(x), 0)'
		cat
	} >"$BATS_TEST_TMPDIR/$1.c"
	gcc -O2 -c -o "$BATS_TEST_TMPDIR/$1.o" "$BATS_TEST_TMPDIR/$1.c"
	echo "$BATS_TEST_TMPDIR/$1.o"
}

# the return to user space of tests (a), (b) and (c): the work behind a
# flag test, out of line
exit_work() {
	cobj "$1" <<-EOF
		void syscall_exit_to_user_mode(struct task *t)
		{
			unsigned long f = t->flags;

			if (unlikely(f & 0x230ce)) {
				work(f);
				$2
			}
			$3
		}
	EOF
}

@test "fastpath-insns: (a) a flag test with the work out of line: the path is the load, the test, its branch and the return" {
	export FASTPATH_FUNCTIONS=syscall_exit_to_user_mode
	a=$(exit_work a)
	run "$TOP/scripts/fastpath-insns" "$a" "$a"
	[ "$status" -eq 0 ]
	[ "$output" = "syscall_exit_to_user_mode 6 6 +0; path 4 4 +0" ]
	run "$TOP/scripts/pipeline" build fastpath --trace "$a" syscall_exit_to_user_mode
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" =~ ^\ +\+0x3\ +test\ \$0x230ce,%edi$ ]]
	[[ "${lines[3]}" =~ ^\ +\+0x9\ +jne\ .*\ not\ taken$ ]]
	[[ "${lines[4]}" =~ ^\ +\+0x[0-9a-f]+\ +ret\ +returns$ ]]
}

@test "fastpath-insns: (b) code added on the work branch only grows the static count, not the path: passes" {
	export FASTPATH_FUNCTIONS=syscall_exit_to_user_mode
	a=$(exit_work a)
	b=$(exit_work b 'more(1); more(2);')
	echo 'syscall_exit_to_user_mode 20  # the work branch only' >"$BATS_TEST_TMPDIR/allow"
	run "$TOP/scripts/fastpath-insns" "$a" "$b" "$BATS_TEST_TMPDIR/allow"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^syscall_exit_to_user_mode\ 6\ ([0-9]+)\ \+([0-9]+)\;\ path\ 4\ 4\ \+0$ ]]
	[ "${BASH_REMATCH[2]}" -gt 0 ]
}

@test "fastpath-insns: (c) a test added on the way every task takes fails, even within the static allowance, unless the path's allowance names it" {
	export FASTPATH_FUNCTIONS=syscall_exit_to_user_mode
	a=$(exit_work a)
	c=$(exit_work c '' 'if (unlikely(t->other)) more(0);')
	echo 'syscall_exit_to_user_mode 20  # static' >"$BATS_TEST_TMPDIR/allow"
	run "$TOP/scripts/fastpath-insns" "$a" "$c" "$BATS_TEST_TMPDIR/allow"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" =~ ^syscall_exit_to_user_mode\ 6\ [0-9]+\ \+[0-9]+\;\ path\ 4\ ([0-9]+)\ \+([0-9]+)\ more\ than\ allowed\ \(0\)$ ]]
	[ "${BASH_REMATCH[2]}" -ge 3 ]
	echo "nowork syscall_exit_to_user_mode ${BASH_REMATCH[2]}  # the test of other" >>"$BATS_TEST_TMPDIR/allow"
	run "$TOP/scripts/fastpath-insns" "$a" "$c" "$BATS_TEST_TMPDIR/allow"
	[ "$status" -eq 0 ]
	# not held (FASTPATH_NOWORK names other functions): printed only;
	# a nowork line in the allow file holds it all the same
	echo 'syscall_exit_to_user_mode 20  # static' >"$BATS_TEST_TMPDIR/allow"
	FASTPATH_NOWORK=none run "$TOP/scripts/fastpath-insns" "$a" "$c" "$BATS_TEST_TMPDIR/allow"
	[ "$status" -eq 0 ]
	[[ "$output" != *" more than allowed"* ]]
	[[ "$output" == *"(not held)" ]]
	echo 'nowork syscall_exit_to_user_mode 0  # none' >>"$BATS_TEST_TMPDIR/allow"
	FASTPATH_NOWORK=none run "$TOP/scripts/fastpath-insns" "$a" "$c" "$BATS_TEST_TMPDIR/allow"
	[ "$status" -eq 1 ]
}

@test "fastpath-insns: (d) a loop the zero words never leave is an error, not a hang; a held function fails" {
	d=$(cobj d <<-'EOF'
		void sched_submit_work(struct task *t)
		{
			while (!__atomic_load_n(&t->count, __ATOMIC_RELAXED))
				;
		}
	EOF
	)
	FASTPATH_FUNCTIONS=sched_submit_work run timeout 20 "$TOP/scripts/fastpath-insns" "$d" "$d"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" =~ ^sched_submit_work\ [0-9]+\ [0-9]+\ \+0\;\ path\ \?\ \?\ \(pristine\ error:\ loop\ at\ \+0x[0-9a-f]+\;\ series\ error:\ loop\ at ]]
	# not held: printed, not a failure
	FASTPATH_NOWORK=none FASTPATH_FUNCTIONS=sched_submit_work run timeout 20 "$TOP/scripts/fastpath-insns" "$d" "$d"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(not held; pristine error: loop at"* ]]
}

@test "fastpath-insns: a tail call in a .o (a relocated jmp whose printed target is the next instruction) ends the path" {
	e=$(cobj e <<-'EOF'
		void irqentry_exit_to_user_mode(struct task *t)
		{
			if (unlikely(t->flags & 0x230ce))
				work(t->flags);
			tail();
		}
	EOF
	)
	FASTPATH_FUNCTIONS=irqentry_exit_to_user_mode run "$TOP/scripts/fastpath-insns" "$e" "$e"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^irqentry_exit_to_user_mode\ [0-9]+\ [0-9]+\ \+0\;\ path\ 4\ 4\ \+0$ ]]
	run "$TOP/scripts/pipeline" build fastpath --trace "$e" irqentry_exit_to_user_mode
	[ "${lines[-1]}" = "  (jumps to tail)" ]
}

@test "fastpath-insns: a branch decided after a cmp is marked assumed; a held function fails unless the allow file accepts it" {
	export FASTPATH_FUNCTIONS=syscall_exit_to_user_mode
	f=$(cobj f <<-'EOF'
		void syscall_exit_to_user_mode(struct task *t)
		{
			if (unlikely(t->count > 1))
				work(0);
		}
	EOF
	)
	run "$TOP/scripts/fastpath-insns" "$f" "$f"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == "syscall_exit_to_user_mode "*"; path 3 3 +0 (pristine assumed: +0x4 jg after cmpl \$0x1,0x10(%rdi) (+0x0): not taken, not accepted; series assumed: "*", not accepted)" ]]
	echo 'nowork syscall_exit_to_user_mode 0 assumed  # count > 1 is false when count is 0' >"$BATS_TEST_TMPDIR/allow"
	run "$TOP/scripts/fastpath-insns" "$f" "$f" "$BATS_TEST_TMPDIR/allow"
	[ "$status" -eq 0 ]
	[[ "$output" == *"not taken, accepted)" ]]
}

@test "fastpath-insns: an allow line without a count is an error, not 0" {
	export FASTPATH_FUNCTIONS=syscall_exit_to_user_mode
	a=$(exit_work a)
	echo 'nowork syscall_exit_to_user_mode assumed  # count forgotten' >"$BATS_TEST_TMPDIR/allow"
	run "$TOP/scripts/fastpath-insns" "$a" "$a" "$BATS_TEST_TMPDIR/allow"
	[ "$status" -eq 2 ]
	[[ "$output" == *"allow:1: nowork syscall_exit_to_user_mode assumed"* ]]
}
