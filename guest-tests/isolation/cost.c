// SPDX-License-Identifier: GPL-2.0
/*
 * What task isolation costs the tasks that do not quiesce.
 *
 * exit_hook_only_while_active: with the function tracer, count calls of
 * the out-of-line quiesce hook (__task_isol_exit_to_user_mode) during
 * getppid() loops of a task that never used the interface, one that
 * activated quiescing (the positive control) and one that activated and
 * deactivated it again.  Only the active task may reach the hook.
 *
 * getppid_cost: a benchmark, not a timed assertion (suite.conf declares it:
 * its result is "bench", never a pass).  ns per getppid() for
 * the same three kinds of task, each measured several times in turn on one
 * CPU in this boot; prints the minimum and the median per kind and the
 * ratios of the minima to the task that never used the interface (under
 * TCG on a busy host the median moves with the host's load, the minimum
 * much less).  On a kernel without
 * CONFIG_TASK_ISOLATION (the "off" variant) only the first kind exists,
 * which gives the figure to compare across kernels.
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define HOOK_CALLS	1000
#define BENCH_ROUNDS	15
#define BENCH_CALLS	20000

enum kind { NEVER, ACTIVE, DEACTIVATED, NR_KINDS };

static const char * const kind_name[NR_KINDS] = {
	"never_used", "active", "deactivated",
};

struct shared {
	volatile int stage;
	volatile int err;
	volatile double ns;
};

/* Put the calling task in the state of @k; 0 or -errno. */
static int become(enum kind k)
{
	int ret;

	if (k == NEVER)
		return 0;
	ret = isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS);
	if (ret || k == ACTIVE)
		return ret;
	return prctl(PR_ISOL_CTRL_SET, 0, 0, 0, 0) ? -errno : 0;
}

static int pick_cpu(void)
{
	unsigned long iso = isolated_cpus();
	int n = online_cpus(), cpu;

	/* the last isolated CPU, else the last CPU */
	for (cpu = n - 1; cpu > 0; cpu--)
		if (iso & (1UL << cpu))
			return cpu;
	return n - 1;
}

static struct shared *shared_map(void)
{
	struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED)
		return NULL;
	memset((void *)s, 0, sizeof(*s));
	return s;
}

/*
 * Child of one measurement: pinned to @cpu, in state @k; waits for stage
 * 1, makes @calls getppid() calls, reports ns per call, stage 2.
 */
static void child(struct shared *s, int cpu, enum kind k, long calls)
{
	double t0;
	long i;

	if (pin_to_cpu(cpu) || become(k)) {
		s->err = 1;
		_exit(1);
	}
	s->stage = 1;
	while (s->stage < 2)
		;
	t0 = now_sec();
	for (i = 0; i < calls; i++)
		syscall(SYS_getppid);
	s->ns = (now_sec() - t0) * 1e9 / calls;
	s->stage = 3;
	_exit(0);
}

/*
 * Fork the child of one measurement and wait until it is ready (stage 1)
 * or failed.  Returns its pid, or -1.
 */
static pid_t child_start(struct shared *s, int cpu, enum kind k, long calls)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		child(s, cpu, k, calls);
	while (s->stage < 1 && !s->err)
		usleep(1000);
	return pid;
}

/* Hook calls on @cpu while a task of kind @k makes HOOK_CALLS getppid(). */
static int hook_calls(struct __test_metadata *_metadata, int cpu, enum kind k)
{
	struct shared *s = shared_map();
	int status, n;
	pid_t pid;

	if (!s)
		return -1;
	pid = child_start(s, cpu, k, HOOK_CALLS);
	if (pid < 0)
		return -1;
	trace_clear();
	write_file(TRACEFS "/tracing_on", "1");
	s->stage = 2;
	while (s->stage < 3 && !s->err)
		usleep(1000);
	write_file(TRACEFS "/tracing_on", "0");
	waitpid(pid, &status, 0);
	n = s->err ? -1 : trace_count_lines(cpu, ISOL_EXIT_HOOK, NULL);
	if (s->err)
		TH_LOG("%s child failed", kind_name[k]);
	munmap((void *)s, sizeof(*s));
	return n;
}

FIXTURE(cost) {
	int unused;
};

FIXTURE_SETUP(cost)
{
}

FIXTURE_TEARDOWN(cost)
{
}

TEST_F_TIMEOUT(cost, exit_hook_only_while_active, 120)
{
	int cpu = pick_cpu(), n[NR_KINDS], k;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");
	if (access(TRACEFS "/set_ftrace_filter", W_OK))
		SKIP(return, "no function tracer in this kernel (CONFIG_FUNCTION_TRACER)");

	write_file(TRACEFS "/events/enable", "0");
	if (trace_function_start(ISOL_EXIT_HOOK)) {
		trace_function_off();
		ASSERT_TRUE(false) {
			TH_LOG("cannot trace " ISOL_EXIT_HOOK " with the function tracer");
		}
	}
	write_file(TRACEFS "/tracing_on", "0");
	for (k = 0; k < NR_KINDS; k++)
		n[k] = hook_calls(_metadata, cpu, k);
	trace_function_off();

	for (k = 0; k < NR_KINDS; k++)
		ksft_print_msg("metric: exit_hook_calls_%s=%d\n", kind_name[k], n[k]);
	ksft_print_msg("metric: exit_hook_getppid_calls=%d\n", HOOK_CALLS);
	for (k = 0; k < NR_KINDS; k++)
		ASSERT_LE(0, n[k]);
	/* the tracer sees the hook where it must run */
	ASSERT_LE(HOOK_CALLS, n[ACTIVE]);
	EXPECT_EQ(0, n[NEVER]);
	EXPECT_EQ(0, n[DEACTIVATED]);
}

/* One measurement: ns per getppid() of a fresh task of kind @k. */
static double bench_once(int cpu, enum kind k)
{
	struct shared *s = shared_map();
	double ns = -1;
	int status;
	pid_t pid;

	if (!s)
		return -1;
	pid = child_start(s, cpu, k, BENCH_CALLS);
	if (pid < 0)
		return -1;
	s->stage = 2;
	waitpid(pid, &status, 0);
	if (!s->err && WIFEXITED(status) && !WEXITSTATUS(status))
		ns = s->ns;
	munmap((void *)s, sizeof(*s));
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

TEST_F_TIMEOUT(cost, getppid_cost, 300)
{
	int cpu = pick_cpu(), kinds = isol_built_in() ? NR_KINDS : 1, r, k;
	double ns[NR_KINDS][BENCH_ROUNDS], best[NR_KINDS];

	/* the kinds take turns, so that drift in the host hits all alike */
	for (r = 0; r < BENCH_ROUNDS; r++) {
		for (k = 0; k < kinds; k++) {
			ns[k][r] = bench_once(cpu, k);
			ASSERT_LT(0, ns[k][r]) {
				TH_LOG("%s measurement failed", kind_name[k]);
			}
		}
	}
	for (k = 0; k < kinds; k++) {
		qsort(ns[k], BENCH_ROUNDS, sizeof(ns[k][0]), cmp_double);
		best[k] = ns[k][0];
	}
	ksft_print_msg("metric: getppid_cpu=%d\n", cpu);
	ksft_print_msg("metric: getppid_calls_per_run=%d\n", BENCH_CALLS);
	ksft_print_msg("metric: getppid_runs_per_kind=%d\n", BENCH_ROUNDS);
	for (k = 0; k < kinds; k++) {
		ksft_print_msg("metric: getppid_ns_%s=%.1f\n", kind_name[k], best[k]);
		ksft_print_msg("metric: getppid_ns_median_%s=%.1f\n", kind_name[k],
			       ns[k][BENCH_ROUNDS / 2]);
	}
	for (k = 1; k < kinds; k++)
		ksft_print_msg("metric: getppid_ratio_%s=%.3f\n", kind_name[k],
			       best[k] / best[NEVER]);
}

TEST_HARNESS_MAIN
