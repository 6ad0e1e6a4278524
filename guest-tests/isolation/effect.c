// SPDX-License-Identifier: GPL-2.0
/*
 * Items 4-6: the effect of ISOL_F_QUIESCE_VMSTATS, counted with tracefs
 * (workqueue_execute_start of vmstat_update / refresh_vm_stats on the CPU
 * of the task).  Each test measures a baseline without activation in the
 * same boot; a baseline of 0 events means the scenario did not reproduce,
 * and the test fails as inconclusive instead of passing.
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE		4096UL
#define RUN_SECONDS	5.0
#define PERIOD_SEC	0.002		/* one dirtying syscall every 2 ms */
#define LOOP_PAGES	4096		/* > RUN_SECONDS / PERIOD_SEC */
#define REFRESH_PAGES	16
#define ACC_PAGES	4

/* Shared between the parent and the measured child, no syscalls needed */
struct ctl {
	volatile int stage;
	volatile long syscalls;
	volatile int err;
};

static struct ctl *ctl_map(void)
{
	struct ctl *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		return NULL;
	memset((void *)c, 0, sizeof(*c));
	return c;
}

static void wait_stage(struct ctl *c, int stage, bool spin)
{
	while (c->stage < stage && !c->err) {
		if (!spin)
			usleep(1000);
	}
}

static int pick_housekeeping_cpu(unsigned long iso, bool highest)
{
	int n = online_cpus(), cpu, pick = -1;

	for (cpu = 0; cpu < n && cpu < 64; cpu++) {
		if (iso & (1UL << cpu))
			continue;
		if (pick < 0 || highest)
			pick = cpu;
	}
	return pick;
}

static int pick_isolated_cpu(unsigned long iso)
{
	int n = online_cpus(), cpu, pick = -1;

	for (cpu = 0; cpu < n && cpu < 64; cpu++)
		if (iso & (1UL << cpu))
			pick = cpu;
	return pick;
}

static void restore_stat_interval(const char *saved)
{
	if (saved[0])
		write_file("/proc/sys/vm/stat_interval", saved);
}

/*
 * Item 4 child: on a housekeeping CPU, for RUN_SECONDS, busy loop and
 * mlock() one new page every PERIOD_SEC (NR_MLOCK and the page allocation
 * dirty this CPU's vmstat differentials inside the syscall).
 */
static void loop_child(struct ctl *c, int cpu, bool quiesce)
{
	char *buf;
	double end, next;
	long i = 0;

	if (pin_to_cpu(cpu)) {
		c->err = 1;
		_exit(1);
	}
	buf = mmap(NULL, LOOP_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		c->err = 2;
		_exit(1);
	}
	if (quiesce && isol_quiesce_on(ISOL_F_QUIESCE_VMSTATS)) {
		c->err = 3;
		_exit(1);
	}
	c->stage = 1;
	wait_stage(c, 2, true);

	end = now_sec() + RUN_SECONDS;
	next = now_sec() + PERIOD_SEC;
	while (now_sec() < end && i < LOOP_PAGES) {
		while (now_sec() < next)
			;
		next += PERIOD_SEC;
		if (mlock(buf + i * PAGE, PAGE)) {
			c->err = 4;
			_exit(1);
		}
		i++;
	}
	c->syscalls = i;
	c->stage = 3;
	wait_stage(c, 4, true);
	_exit(0);
}

/* Returns vmstat_update executions on @cpu during one run, -1 on error. */
static int loop_phase(struct __test_metadata *_metadata, int cpu, bool quiesce,
		      long *syscalls)
{
	struct ctl *c = ctl_map();
	int status, count;
	pid_t pid;

	if (!c)
		return -1;
	if (trace_vmstat_start())
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		loop_child(c, cpu, quiesce);

	wait_stage(c, 1, false);
	trace_clear();
	c->stage = 2;
	wait_stage(c, 3, false);
	trace_stop();
	count = trace_count(cpu, "vmstat_update");
	c->stage = 4;
	waitpid(pid, &status, 0);
	*syscalls = c->syscalls;
	if (c->err) {
		TH_LOG("child error %d", c->err);
		count = -1;
	}
	trace_off();
	munmap((void *)c, sizeof(*c));
	return count;
}

FIXTURE(effect) {
	int unused;
};

FIXTURE_SETUP(effect)
{
}

FIXTURE_TEARDOWN(effect)
{
	trace_off();
}

TEST_F_TIMEOUT(effect, housekeeping_cpu_vmstat_update, 120)
{
	unsigned long iso = isolated_cpus();
	char saved[32] = "";
	long sc_base, sc_q;
	int cpu, parent, base, q;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");
	if (access(TRACEFS "/events/workqueue/workqueue_execute_start/enable", W_OK))
		SKIP(return, "no workqueue trace events in " TRACEFS);
	cpu = pick_housekeeping_cpu(iso, true);
	parent = pick_housekeeping_cpu(iso, false);
	if (cpu < 0 || cpu == parent)
		SKIP(return, "needs two housekeeping CPUs");
	ASSERT_EQ(0, pin_to_cpu(parent));

	read_file("/proc/sys/vm/stat_interval", saved, sizeof(saved));
	ASSERT_EQ(0, write_file("/proc/sys/vm/stat_interval", "1"));

	base = loop_phase(_metadata, cpu, false, &sc_base);
	q = loop_phase(_metadata, cpu, true, &sc_q);
	restore_stat_interval(saved);

	ksft_print_msg("metric: housekeeping_cpu=%d\n", cpu);
	ksft_print_msg("metric: housekeeping_mlock_syscalls_not_quiesced=%ld\n", sc_base);
	ksft_print_msg("metric: housekeeping_mlock_syscalls_quiesced=%ld\n", sc_q);
	ksft_print_msg("metric: housekeeping_vmstat_update_not_quiesced=%d\n", base);
	ksft_print_msg("metric: housekeeping_vmstat_update_quiesced=%d\n", q);
	ASSERT_LE(0, base);
	ASSERT_LE(0, q);
	ASSERT_LT(0, base) {
		TH_LOG("inconclusive: baseline without activation saw no vmstat_update on CPU %d",
		       cpu);
	}
	EXPECT_EQ(0, q);
}

/*
 * Item 5 child: on the isolated CPU dirty vmstat with mlock(), then spin
 * without syscalls until told to stop.
 */
static void refresh_child(struct ctl *c, int cpu, bool quiesce)
{
	char *buf;

	if (pin_to_cpu(cpu)) {
		c->err = 1;
		_exit(1);
	}
	buf = mmap(NULL, REFRESH_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		c->err = 2;
		_exit(1);
	}
	if (quiesce && isol_quiesce_on(ISOL_F_QUIESCE_VMSTATS)) {
		c->err = 3;
		_exit(1);
	}
	if (mlock(buf, REFRESH_PAGES * PAGE)) {
		c->err = 4;
		_exit(1);
	}
	c->stage = 1;
	wait_stage(c, 3, true);
	_exit(0);
}

static int refresh_phase(struct __test_metadata *_metadata, int cpu,
			 bool quiesce, int *refresh_ret, double *ms)
{
	struct ctl *c = ctl_map();
	int status, count;
	double t0;
	pid_t pid;

	if (!c)
		return -1;
	if (trace_vmstat_start())
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		refresh_child(c, cpu, quiesce);

	wait_stage(c, 1, false);
	/* let the child settle into its spin loop */
	usleep(100000);
	trace_clear();
	t0 = now_sec();
	*refresh_ret = write_file("/proc/sys/vm/stat_refresh", "1");
	*ms = (now_sec() - t0) * 1000;
	trace_stop();
	count = trace_count(cpu, "refresh_vm_stats");
	if (count >= 0) {
		int vu = trace_count(cpu, "vmstat_update");

		count = vu < 0 ? vu : count + vu;
	}
	c->stage = 3;
	waitpid(pid, &status, 0);
	if (c->err) {
		TH_LOG("child error %d", c->err);
		count = -1;
	}
	trace_off();
	munmap((void *)c, sizeof(*c));
	return count;
}

TEST_F_TIMEOUT(effect, isolated_cpu_stat_refresh, 120)
{
	unsigned long iso = isolated_cpus();
	int cpu, hk, base, q, rb = -1, rq = -1;
	double msb = 0, msq = 0;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");
	if (!iso)
		SKIP(return, "no isolcpus=/nohz_full= on /proc/cmdline");
	if (access(TRACEFS "/events/workqueue/workqueue_execute_start/enable", W_OK))
		SKIP(return, "no workqueue trace events in " TRACEFS);
	cpu = pick_isolated_cpu(iso);
	hk = pick_housekeeping_cpu(iso, false);
	if (cpu < 0 || hk < 0)
		SKIP(return, "isolated CPU not online or no housekeeping CPU");
	ASSERT_EQ(0, pin_to_cpu(hk));

	base = refresh_phase(_metadata, cpu, false, &rb, &msb);
	q = refresh_phase(_metadata, cpu, true, &rq, &msq);

	ksft_print_msg("metric: isolated_cpu=%d\n", cpu);
	ksft_print_msg("metric: isolated_refresh_work_not_quiesced=%d\n", base);
	ksft_print_msg("metric: isolated_refresh_work_quiesced=%d\n", q);
	ksft_print_msg("metric: isolated_stat_refresh_ms_not_quiesced=%.1f\n", msb);
	ksft_print_msg("metric: isolated_stat_refresh_ms_quiesced=%.1f\n", msq);
	/* stat_refresh completes in both cases */
	ASSERT_EQ(0, rb);
	ASSERT_EQ(0, rq);
	ASSERT_LE(0, base);
	ASSERT_LE(0, q);
	ASSERT_LT(0, base) {
		TH_LOG("inconclusive: baseline without activation saw no vmstat work on CPU %d",
		       cpu);
	}
	EXPECT_EQ(0, q);
}

/*
 * Item 6 child: wait for the go, mlock ACC_PAGES new pages, report, spin.
 */
static void acc_child(struct ctl *c, int cpu, bool quiesce)
{
	char *buf, *scratch;

	if (pin_to_cpu(cpu)) {
		c->err = 1;
		_exit(1);
	}
	buf = mmap(NULL, ACC_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		c->err = 2;
		_exit(1);
	}
	if (quiesce && isol_quiesce_on(ISOL_F_QUIESCE_VMSTATS)) {
		c->err = 3;
		_exit(1);
	}
	/*
	 * Earlier children that exited on this CPU left munlocks in its
	 * per-CPU mlock batch; their NR_MLOCK decrements would be applied by
	 * the next drain, i.e. inside our measured mlock().  munmap() drains
	 * the batch now (lru_add_drain()), before the "before" reading.
	 */
	scratch = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED || munmap(scratch, PAGE)) {
		c->err = 5;
		_exit(1);
	}
	c->stage = 1;
	wait_stage(c, 2, true);
	if (mlock(buf, ACC_PAGES * PAGE))
		c->err = 4;
	c->stage = 3;
	wait_stage(c, 4, true);
	_exit(0);
}

/* nr_mlock seen from the parent's CPU right after the child's mlock() */
static long acc_phase(struct __test_metadata *_metadata, int cpu, bool quiesce)
{
	struct ctl *c = ctl_map();
	long before, after;
	int status;
	pid_t pid;

	if (!c)
		return -1000;
	pid = fork();
	if (pid < 0)
		return -1000;
	if (pid == 0)
		acc_child(c, cpu, quiesce);

	wait_stage(c, 1, false);
	usleep(100000);
	before = vmstat_value("nr_mlock");
	c->stage = 2;
	wait_stage(c, 3, true);
	after = vmstat_value("nr_mlock");
	c->stage = 4;
	waitpid(pid, &status, 0);
	if (c->err) {
		TH_LOG("child error %d", c->err);
		after = before - 1000;
	}
	munmap((void *)c, sizeof(*c));
	return after - before;
}

TEST_F_TIMEOUT(effect, isolated_cpu_nr_mlock_visible, 120)
{
	unsigned long iso = isolated_cpus();
	long base, q;
	int cpu, hk;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");
	if (!iso)
		SKIP(return, "no isolcpus=/nohz_full= on /proc/cmdline");
	cpu = pick_isolated_cpu(iso);
	hk = pick_housekeeping_cpu(iso, false);
	if (cpu < 0 || hk < 0)
		SKIP(return, "isolated CPU not online or no housekeeping CPU");
	ASSERT_EQ(0, pin_to_cpu(hk));

	base = acc_phase(_metadata, cpu, false);
	q = acc_phase(_metadata, cpu, true);

	ksft_print_msg("metric: accuracy_cpu=%d\n", cpu);
	ksft_print_msg("metric: accuracy_pages_mlocked=%d\n", ACC_PAGES);
	ksft_print_msg("metric: accuracy_nr_mlock_delta_not_quiesced=%ld\n", base);
	ksft_print_msg("metric: accuracy_nr_mlock_delta_quiesced=%ld\n", q);
	ksft_print_msg("metric: accuracy_visible_not_quiesced=%d\n", base >= ACC_PAGES);
	ASSERT_NE(-1000, base);
	ASSERT_NE(-1000, q);
	/* with quiescing, the syscall folded its own diffs before returning */
	EXPECT_LE(ACC_PAGES, q);
}

TEST_HARNESS_MAIN
