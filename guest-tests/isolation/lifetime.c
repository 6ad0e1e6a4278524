// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime of the per-task state.  A forked child and a new thread
 * start without state, the state survives execve() (the test re-executes
 * itself): the settings prctl() reports and the quiescing itself: where a
 * CPU is isolated, an mlock() there seen in nr_mlock at once; where the
 * function tracer is (debug), the hook counted on every return of the new
 * image's system calls; and repeated PR_ISOL_SET/PR_ISOL_CTRL_SET
 * calls do not grow slab memory (and, where kmemleak is available, leave
 * no leak report).
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define EXEC_CHECK_ARG	"--isol-exec-check"
#define LOOPS		100000
#define HOOK_CALLS	200
/* exit status of the exec'd check when it has no function tracer */
#define EXEC_NO_TRACER	30
/* ... and when it has none but saw its mlock() folded on an isolated CPU */
#define EXEC_FOLDED	31

/* No state: GET/CTRL_GET report 0 and CTRL_SET has nothing to activate. */
static int check_no_state(void)
{
	if (isol_prctl(PR_ISOL_GET, PR_ISOL_F_QUIESCE, 0, 0, 0) != 0)
		return 1;
	if (isol_prctl(PR_ISOL_CTRL_GET, 0, 0, 0, 0) != 0)
		return 2;
	if (isol_prctl(PR_ISOL_CTRL_SET, PR_ISOL_F_QUIESCE, 0, 0, 0) != -EINVAL)
		return 3;
	return 0;
}

static void *thread_fn(void *arg)
{
	*(int *)arg = check_no_state();
	return NULL;
}

TEST(fork_child_starts_without_state)
{
	int status;
	pid_t pid;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	ASSERT_EQ(0, isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(check_no_state());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child check %d failed", WEXITSTATUS(status));
	}
	/* the parent keeps its own state */
	EXPECT_EQ(ISOL_Q, isol_prctl(PR_ISOL_CTRL_GET, 0, 0, 0, 0));
	EXPECT_EQ(ISOL_VM,
		  isol_prctl(PR_ISOL_GET, PR_ISOL_F_QUIESCE, 0, 0, 0));
}

TEST(new_thread_starts_without_state)
{
	pthread_t t;
	int res = -1;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	ASSERT_EQ(0, isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS));
	ASSERT_EQ(0, pthread_create(&t, NULL, thread_fn, &res));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, res) {
		TH_LOG("thread check %d failed", res);
	}
	EXPECT_EQ(ISOL_Q, isol_prctl(PR_ISOL_CTRL_GET, 0, 0, 0, 0));
}

TEST(state_survives_execve)
{
	char *argv[] = { "/proc/self/exe", EXEC_CHECK_ARG, NULL };
	int status;
	pid_t pid;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS))
			_exit(10);
		execv(argv[0], argv);
		_exit(11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == EXEC_NO_TRACER) {
		ksft_print_msg("after execve: settings kept; the quiescing not seen (no isolated CPU, no function tracer: the isolated and debug variants see it)\n");
		return;
	}
	if (WEXITSTATUS(status) == EXEC_FOLDED) {
		ksft_print_msg("after execve: settings kept, and an mlock() on the isolated CPU was in nr_mlock at once (the new image quiesces)\n");
		return;
	}
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("exec check failed with %d (10: setup, 11: execv, 20: mask, 21: active, 22: the hook ran fewer times than the new image made system calls, 23: tracing, 24: an mlock() on the isolated CPU was not in nr_mlock at once)",
		       WEXITSTATUS(status));
	}
}

/*
 * Calls of the quiesce hook by this task while it makes HOOK_CALLS
 * getppid() calls, with the function tracer; -1 if tracing failed.
 */
static int hook_calls_of_self(void)
{
	int i, n = -1;

	if (!trace_function_start(ISOL_EXIT_HOOK)) {
		for (i = 0; i < HOOK_CALLS; i++)
			syscall(SYS_getppid);
		write_file(TRACEFS "/tracing_on", "0");
		n = trace_count_pid(ISOL_EXIT_HOOK, getpid());
	}
	trace_function_off();
	return n;
}

/*
 * kmemleak prints, for each suspected leak, the allocation backtrace as
 * "[<address>] function+offset/size" lines.  Static helpers of
 * kernel/task_isolation.c may be inlined or tail-called away, so match the
 * frame that every allocation made by prctl() has: the syscall entry
 * (__x64_sys_prctl on x86_64).
 */
#define LEAK_FUNC	"sys_prctl"
#define LEAK_FRAME	LEAK_FUNC "+"

/* True if a kernel symbol's name contains @name (the frame can match). */
static bool kallsyms_has(const char *name)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sym = strrchr(line, ' ');

		found = sym && strstr(sym + 1, name);
	}
	fclose(f);
	return found;
}

/* Reports whose backtrace has a frame matching @needle; -1 on error. */
static int kmemleak_reports(const char *needle)
{
	char line[512];
	int hits = 0;
	FILE *f;

	if (write_file("/sys/kernel/debug/kmemleak", "scan"))
		return -1;
	f = fopen("/sys/kernel/debug/kmemleak", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[<") && strstr(line, needle))
			hits++;
	fclose(f);
	return hits;
}

/* Set @mask and activate (only with a mask): valid in any state. */
static int set_and_activate(unsigned long mask, bool activate)
{
	if (prctl(PR_ISOL_CTRL_SET, 0, 0, 0, 0))
		return -errno;
	if (prctl(PR_ISOL_SET, PR_ISOL_F_QUIESCE, mask, 0, 0))
		return -errno;
	if (activate && mask && prctl(PR_ISOL_CTRL_SET, PR_ISOL_F_QUIESCE, 0, 0, 0))
		return -errno;
	return 0;
}

/*
 * Two kmemleak scans of a KASAN kernel under TCG take longer than the
 * harness's default 30 s when the host is busy (seen: "Test terminated by
 * timeout" in debug with builds beside it), so this test gets its own
 * budget.  The fixture is named "global" so the test id stays
 * global.repeated_set_does_not_grow.
 */
FIXTURE(global) {};
FIXTURE_SETUP(global) {}
FIXTURE_TEARDOWN(global) {}

TEST_F_TIMEOUT(global, repeated_set_does_not_grow, 180)
{
	long slab_before, slab_after, i;
	int leaks = -1;
	bool kml;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	/*
	 * No "clear" here: it would hide leaks of earlier tests from the
	 * harness's final kmemleak scan.
	 */
	kml = access("/sys/kernel/debug/kmemleak", W_OK) == 0;

	/* a needle that names no kernel function can never match */
	ASSERT_TRUE(kallsyms_has(LEAK_FUNC)) {
		TH_LOG("no kernel symbol matches the kmemleak frame '%s'", LEAK_FRAME);
	}

	/* first SET allocates the state; warm up the slab caches too */
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(0, isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS));
	slab_before = meminfo_kb("Slab");
	ASSERT_LT(0, slab_before);

	for (i = 0; i < LOOPS; i++)
		ASSERT_EQ(0, set_and_activate((i & 1) ? 0 : PR_ISOL_F_QUIESCE_VMSTATS,
					      !(i & 2)));
	slab_after = meminfo_kb("Slab");
	ksft_print_msg("metric: slab_kb_before=%ld\n", slab_before);
	ksft_print_msg("metric: slab_kb_after=%ld\n", slab_after);
	ksft_print_msg("metric: slab_kb_growth=%ld\n", slab_after - slab_before);
	/* a leak of one 16-byte object per call would be >= 1.5 MB */
	EXPECT_GT(512, slab_after - slab_before);

	if (kml) {
		/* kmemleak needs two scans to report an object */
		kmemleak_reports(LEAK_FRAME);
		sleep(1);
		leaks = kmemleak_reports(LEAK_FRAME);
		ksft_print_msg("metric: kmemleak_prctl_reports=%d\n", leaks);
		EXPECT_EQ(0, leaks);
	}
}

/*
 * While any task quiesces, vmstat_shepherd looks at the task running on
 * each CPU that has dirty differentials and no vmstat_update pending
 * (task_isol_cpu_quiescing()). A quiescing task that exits must stop
 * counting then, not when its zombie is reaped. The series' own function
 * is the one counted: cpu_curr_snapshot() is RCU Tasks Trace's too, whose
 * calls would count as looks (issue 45, weak tests).
 * The look reads the CPU's running task without taking its runqueue lock
 * (issue 45: cpu_curr_snapshot(), which takes it, is RCU Tasks' helper):
 * calls of cpu_curr_snapshot() made by the series' functions are counted
 * too, and must be none.
 * This task dirties its CPU's differentials every DIRTY_PERIOD_SEC (one
 * new page) and sleeps: each time, vmstat_update has gone idle, so a scan
 * of the shepherd meets the CPU as described.
 */
#define ZOMBIE_PHASE_SEC	7
#define DIRTY_PERIOD_SEC	2.5
#define LOOK_FN			"task_isol_cpu_quiescing"
#define LOCKED_LOOK_FN		"cpu_curr_snapshot"

/*
 * The shepherd's looks during one phase of dirtying, and in *@locked those
 * that took a runqueue lock; -1 on error.
 */
static int looks_while_dirtying(char *pages, int *page, int *locked)
{
	double end = now_sec() + ZOMBIE_PHASE_SEC;
	char needle[64];
	int n;

	if (trace_function_start(LOOK_FN) || trace_filter_add(LOCKED_LOOK_FN))
		return -1;
	while (now_sec() < end) {
		pages[(*page)++ * 4096] = 1;
		usleep(DIRTY_PERIOD_SEC * 1e6);
	}
	write_file(TRACEFS "/tracing_on", "0");
	/* the look itself, not cpu_curr_snapshot() called from it */
	snprintf(needle, sizeof(needle), ": %s <-", LOOK_FN);
	n = trace_count_pid(needle, 0);
	/* cpu_curr_snapshot() called from a function of the series */
	snprintf(needle, sizeof(needle), ": %s <-task_isol_", LOCKED_LOOK_FN);
	*locked = trace_count_pid(needle, 0);
	trace_function_off();
	return *locked < 0 ? -1 : n;
}

TEST_F_TIMEOUT(global, exited_quiescing_task_not_counted, 120)
{
	char saved[32] = "", *pages;
	int live, zombie, page = 0, status, go[2], live_locked, zombie_locked;
	pid_t pid;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");
	if (access(TRACEFS "/set_ftrace_filter", W_OK))
		SKIP(return, "no function tracer (the debug variants have it)");
	pages = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	ASSERT_EQ(0, pin_to_cpu(0));
	ASSERT_EQ(0, pipe(go));
	read_file("/proc/sys/vm/stat_interval", saved, sizeof(saved));
	ASSERT_EQ(0, write_file("/proc/sys/vm/stat_interval", "1"));

	/* a quiescing child that sleeps until told to exit */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char c;

		close(go[1]);
		if (isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS))
			_exit(10);
		_exit(read(go[0], &c, 1) == 1 ? 0 : 11);
	}
	close(go[0]);

	live = looks_while_dirtying(pages, &page, &live_locked);
	/* exits now; not reaped until the second phase is over */
	ASSERT_EQ(1, write(go[1], "x", 1));
	close(go[1]);
	usleep(200000);
	zombie = looks_while_dirtying(pages, &page, &zombie_locked);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	restore_stat_interval(saved);

	ksft_print_msg("metric: shepherd_looks_live_quiescing=%d\n", live);
	ksft_print_msg("metric: shepherd_looks_zombie=%d\n", zombie);
	ksft_print_msg("metric: shepherd_looks_locked=%d\n",
		       live_locked + zombie_locked);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("the quiescing child failed (status 0x%x)", status);
	}
	ASSERT_LE(0, live);
	ASSERT_LE(0, zombie);
	ASSERT_LT(0, live) {
		TH_LOG("inconclusive: no look at a running task while one quiesced");
	}
	EXPECT_EQ(0, zombie);
	EXPECT_EQ(0, live_locked + zombie_locked) {
		TH_LOG("the look took the runqueue lock (cpu_curr_snapshot())");
	}
}

/*
 * The new image's own quiescing, seen without a tracer: on an isolated CPU
 * (no vmstat_update there) an mlock() of EXEC_MLOCK_PAGES pages shows in
 * /proc/vmstat's nr_mlock at once only if its return folded the CPU's
 * differentials. 0 if it did, 1 if not, -1 with no isolated CPU or on
 * error.
 */
#define EXEC_MLOCK_PAGES	4

static int exec_folds_on_isolated_cpu(void)
{
	unsigned long iso = isolated_cpus();
	long before, after;
	int cpu;
	char *buf;

	for (cpu = 63; cpu >= 0; cpu--)
		if (iso & (1UL << cpu))
			break;
	if (cpu < 0 || cpu >= online_cpus() || pin_to_cpu(cpu))
		return -1;
	buf = mmap(NULL, EXEC_MLOCK_PAGES * 4096UL, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	/* the munmap()'s return folds what the drain changed (we quiesce) */
	if (buf == MAP_FAILED || drain_cpu_batches())
		return -1;
	before = vmstat_value("nr_mlock");
	if (before < 0 || mlock(buf, EXEC_MLOCK_PAGES * 4096UL))
		return -1;
	after = vmstat_value("nr_mlock");
	return after - before >= EXEC_MLOCK_PAGES ? 0 : 1;
}

int main(int argc, char **argv)
{
	int n;

	if (argc == 2 && !strcmp(argv[1], EXEC_CHECK_ARG)) {
		if (isol_prctl(PR_ISOL_GET, PR_ISOL_F_QUIESCE, 0, 0, 0) !=
		    (long)PR_ISOL_F_QUIESCE_VMSTATS)
			return 20;
		if (isol_prctl(PR_ISOL_CTRL_GET, 0, 0, 0, 0) != (long)PR_ISOL_F_QUIESCE)
			return 21;
		/*
		 * The settings are not the work: the hook runs only while the
		 * task's SYSCALL_WORK bit is set, which exec must keep too.
		 * Seen by its effect where a CPU is isolated, by the function
		 * tracer where there is one (debug), both where both are.
		 */
		n = exec_folds_on_isolated_cpu();
		if (n > 0)
			return 24;
		if (access(TRACEFS "/set_ftrace_filter", W_OK))
			return n ? EXEC_NO_TRACER : EXEC_FOLDED;
		n = hook_calls_of_self();
		if (n < 0)
			return 23;
		return n < HOOK_CALLS ? 22 : 0;
	}
	return test_harness_run(argc, argv);
}
