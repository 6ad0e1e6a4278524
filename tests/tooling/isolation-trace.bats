#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# The isolation suite's kworker classifier (guest-tests/isolation/
# isol_common.h, trace_kworker_irqs), compiled on the host and run on
# per-CPU traces: the effect test's verdict rests on it. The two
# deferred_probe traces are what the housekeeping test saw when it failed
# under load (rebuilt line by line from its console): driver core's deferred_probe_timeout_work_func (10 s after
# boot) blocked and continued in slots without an execute_start.

load ../helpers

setup() {
	d=$BATS_TEST_TMPDIR
	mkdir -p "$d/tracefs/per_cpu/cpu1"
	cat >"$d/count.c" <<C
#define TRACEFS "$d/tracefs"
#include "isol_common.h"

int main(void)
{
	struct kworker_irqs n;

	if (trace_kworker_irqs(1, &n, false))
		return 2;
	printf("exec=%d sw=%d other=%d\\n", n.exec, n.sw, n.other);
	return 0;
}
C
	gcc -O2 -Wall -Wextra -Werror -I"$TOP/guest-tests/isolation" -I"$TOP/guest-tests/lib" \
		-o "$d/count" "$d/count.c"
}

sw() { # FROM-COMM FROM-PID FROM-STATE TO-COMM TO-PID
	printf '%16s-%-5s [001] d....    11.42: sched_switch: prev_comm=%s prev_pid=%s prev_prio=120 prev_state=%s ==> next_comm=%s next_pid=%s next_prio=120\n' \
		"$1" "$2" "$1" "$2" "$3" "$4" "$5"
}
wq() { # START|END PID FUNCTION
	printf '     kworker/1:2-%-5s [001] .....    11.42: workqueue_execute_%s: work struct (____ptrval____): function %s\n' \
		"$2" "$1" "$3"
}
# counts EXPECTED: the classifier's counts of the trace on stdin are EXPECTED
counts() {
	cat >"$BATS_TEST_TMPDIR/tracefs/per_cpu/cpu1/trace"
	run "$BATS_TEST_TMPDIR/count"
	echo "$output"
	[ "$output" = "$1" ]
}

@test "isolation classifier: a blocked work function's later slots are other work, not vmstat or cancelled wakeups" {
	# blocked in the work, resumed in a slot with no execute event
	{
		echo '# tracer: nop'
		sw effect 85 R+ kworker/1:2 52
		wq start 52 deferred_probe_timeout_work_func
		sw kworker/1:2 52 D effect 85
		sw effect 85 R kworker/1:2 52
		sw kworker/1:2 52 I effect 85
	} | counts "exec=0 sw=0 other=2"
	# preempted before its work started, then blocked in it
	{
		sw effect 83 R kworker/1:1 47
		sw kworker/1:1 47 R effect 83
		sw effect 83 R kworker/1:1 47
		wq start 47 deferred_probe_timeout_work_func
		sw kworker/1:1 47 D effect 83
		sw effect 83 R kworker/1:1 47
		wq end 47 deferred_probe_timeout_work_func
		sw kworker/1:1 47 I effect 83
	} | counts "exec=0 sw=0 other=3"
	# preempted after its work ended, then idle in a slot of its own
	{
		sw effect 84 R kworker/1:1 47
		wq start 47 deferred_probe_timeout_work_func
		wq end 47 deferred_probe_timeout_work_func
		sw kworker/1:1 47 R+ effect 84
		sw effect 84 R kworker/1:1 47
		sw kworker/1:1 47 I effect 84
	} | counts "exec=0 sw=0 other=2"
	# a work function that started before the trace: its execute_end says which
	{
		sw effect 83 R kworker/1:1 47
		wq end 47 flush_to_ldisc
		sw kworker/1:1 47 I effect 83
	} | counts "exec=0 sw=0 other=1"
	# still blocked when the trace ends, after a switch from one kworker
	# straight to another that ran other work
	{
		sw effect 83 R kworker/1:1 47
		wq start 47 deferred_probe_timeout_work_func
		sw kworker/1:1 47 D kworker/1:0 20
		wq start 20 flush_to_ldisc
		wq end 20 flush_to_ldisc
		sw kworker/1:0 20 I effect 83
	} | counts "exec=0 sw=0 other=2"
}

@test "isolation classifier: vmstat work and wakeups for cancelled work are still counted, each kworker apart" {
	{
		# vmstat_update, preempted once in the middle: two slots
		sw effect 85 R kworker/1:2 52
		wq start 52 vmstat_update
		sw kworker/1:2 52 R effect 85
		sw effect 85 R kworker/1:2 52
		wq end 52 vmstat_update
		sw kworker/1:2 52 I effect 85
		# woken for work cancelled before it ran: one slot, nothing run
		sw effect 85 R kworker/1:1 47
		sw kworker/1:1 47 I effect 85
		# other work on a third kworker
		sw effect 85 R kworker/1:0 20
		wq start 20 flush_to_ldisc
		wq end 20 flush_to_ldisc
		sw kworker/1:0 20 I effect 85
		# the trace ends inside a vmstat slot
		sw effect 85 R kworker/1:2 52
		wq start 52 vmstat_update
	} | counts "exec=2 sw=4 other=1"
}
