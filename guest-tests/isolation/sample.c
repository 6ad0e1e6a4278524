// SPDX-License-Identifier: GPL-2.0
/*
 * Item 8: the kernel's samples/task_isolation program runs to completion,
 * and its quiescing runs: where a CPU is isolated, its mlock() of 64 KiB
 * there shows in nr_mlock at once (read from this process during the
 * sample's 2 s loop: 6.12 runs no vmstat_update on an isolated CPU, so only
 * the fold on its return puts it there); where the function tracer is
 * (debug), the hook on its way back to user space is counted for its
 * process.  It is built
 * by the kernel build (CONFIG_SAMPLE_TASK_ISOLATION, statically linked)
 * into <O>/samples/task_isolation/task_isolation; the harness copies it
 * into bin/ next to this test: /tests/isolation/bin/task_isolation.
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <libgen.h>
#include <limits.h>
#include <sys/wait.h>

/*
 * Returns to user space of the sample with quiescing active: from the
 * activating PR_ISOL_CTRL_SET, mlock() and PR_ISOL_CTRL_GET at least
 * (PR_ISOL_CTRL_SET(0) clears the work before it returns).
 */
#define SAMPLE_MIN_HOOK_CALLS	3
/* the sample's mlock() (BUF_SIZE 64 KiB, malloc()ed: 16 pages or 17) */
#define SAMPLE_MLOCK_PAGES	16
/* into the sample's loop of 2 s: its mlock() is done, munlock() not yet */
#define SAMPLE_PEEK_US		1000000

/* keep the program's output as KTAP diagnostics */
static void print_output(const char *out, int cpu)
{
	char *line, *save = NULL, copy[4096];

	snprintf(copy, sizeof(copy), "%s", out);
	ksft_print_msg("sample output (cpu %d):\n", cpu);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		ksft_print_msg("  %s\n", line);
}

TEST(sample_runs_to_completion)
{
	char self[PATH_MAX], bin[PATH_MAX + 32], out[4096];
	unsigned long iso = isolated_cpus();
	int pfd[2], status, cpu, hooks = -1;
	bool traced, on_isolated;
	long mlocked;
	ssize_t n, len = 0;
	ssize_t r;
	pid_t pid;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	r = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ASSERT_LT(0, r);
	self[r] = '\0';
	snprintf(bin, sizeof(bin), "%s/bin/task_isolation", dirname(self));
	ASSERT_EQ(0, access(bin, X_OK)) {
		TH_LOG("%s missing: copy <O>/samples/task_isolation/task_isolation there (CONFIG_SAMPLE_TASK_ISOLATION=y)",
		       bin);
	}

	/* run it where it is meant to run: the last isolated CPU, if any */
	for (cpu = 63; cpu >= 0; cpu--)
		if (iso & (1UL << cpu))
			break;
	on_isolated = cpu >= 0 && cpu < online_cpus();
	if (on_isolated)
		ASSERT_EQ(0, pin_to_cpu(cpu));

	ASSERT_EQ(0, pipe(pfd));
	traced = !access(TRACEFS "/set_ftrace_filter", W_OK) &&
		 !trace_function_start(ISOL_EXIT_HOOK);
	/*
	 * Earlier children's munlocks, applied by the sample's mlock(), made
	 * 13 of its 17 pages (isolated): drain them here and fold what that
	 * put in the CPU's differentials (stat_refresh) before the reading.
	 */
	ASSERT_EQ(0, drain_cpu_batches());
	ASSERT_EQ(0, write_file("/proc/sys/vm/stat_refresh", "1"));
	mlocked = vmstat_value("nr_mlock");
	ASSERT_LE(0, mlocked);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	usleep(SAMPLE_PEEK_US);
	mlocked = vmstat_value("nr_mlock") - mlocked;
	while ((n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(pfd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (traced) {
		write_file(TRACEFS "/tracing_on", "0");
		hooks = trace_count_pid(ISOL_EXIT_HOOK, pid);
		trace_function_off();
	}
	print_output(out, cpu);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(out, "task isolation sample:"));
	ksft_print_msg("metric: sample_nr_mlock_delta=%ld\n", mlocked);
	/* a sample whose return did not fold leaves them in the CPU's diffs */
	if (on_isolated)
		EXPECT_LE(SAMPLE_MLOCK_PAGES, mlocked);
	if (!traced) {
		ksft_print_msg("the sample's hook calls were not counted (no function tracer: the debug variant counts them)\n");
		return;
	}
	ksft_print_msg("metric: sample_hook_calls=%d\n", hooks);
	/* a sample that ran while quiescing did nothing fails here */
	EXPECT_LE(SAMPLE_MIN_HOOK_CALLS, hooks);
}

TEST_HARNESS_MAIN
