// SPDX-License-Identifier: GPL-2.0
/*
 * umcg-bench/bench_errors: a benchmark whose measurement breaks must end
 * at once with the reason, not wait for the suite's timeout and not print
 * a ratio.  Runs ./switch_bench with UMCG_BENCH_INJECT, which makes worker
 * 0 of one mechanism leave after its first round trip (as a worker whose
 * switch failed does), and checks that it fails within LIMIT_S seconds
 * naming the worker that left.  Its output is shown as "#   |" lines: the
 * child's own KTAP lines must not be read as this program's results.
 *
 * The error path races with the worker that left, which may still run
 * while the server gives up: one run in several hundred crashed (SIGSEGV,
 * the worker reading its arguments from the stack frame of a function
 * that had returned), so each case runs RUNS times and stops at the first
 * run that did not end as it should.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "../umcg/umcg_test.h"

/*
 * switch_bench with 200 round trips and one repetition, when nothing
 * breaks, takes ~1 s under TCG; broken, ~20 ms: RUNS runs take 4 s.
 */
#define LIMIT_S		20
#define RUNS		200

struct outcome {
	bool	ended;		/* exited within LIMIT_S */
	int	status;		/* its wait status, when it ended */
	char	out[16384];	/* the start of its output */
};

/* Keep the child's output while there is room. */
static void take(struct outcome *o, size_t *len, const char *buf, ssize_t n)
{
	ssize_t i;

	for (i = 0; i < n && *len + 1 < sizeof(o->out); i++)
		o->out[(*len)++] = buf[i];
	o->out[*len] = '\0';
}

/* Show what it printed, line by line, as diagnostics of this test. */
static void show(const char *out)
{
	const char *nl;

	for (; *out; out = nl ? nl + 1 : out + strlen(out)) {
		nl = strchr(out, '\n');
		ksft_print_msg("  | %.*s\n",
			       (int)(nl ? nl - out : (long)strlen(out)), out);
	}
}

/* Run ./switch_bench with @inject in its own process group. */
static void run_injected(struct __test_metadata *_metadata, const char *inject,
			 struct outcome *o)
{
	struct timespec t0, t;
	bool timed_out = false;
	size_t len = 0;
	char buf[512];
	int fd[2], rc;
	pid_t pid;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	ASSERT_EQ(0, pipe(fd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		setpgid(0, 0);
		dup2(fd[1], STDOUT_FILENO);
		dup2(fd[1], STDERR_FILENO);
		close(fd[0]);
		close(fd[1]);
		setenv("UMCG_BENCH_INJECT", inject, 1);
		setenv("UMCG_BENCH_ITERS", "200", 1);
		setenv("UMCG_BENCH_REPS", "1", 1);
		execl("./switch_bench", "switch_bench", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(fd[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Until EOF: every process of the group has closed the pipe. */
	for (;;) {
		struct pollfd p = { .fd = fd[0], .events = POLLIN };

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= LIMIT_S) {
			timed_out = true;
			break;
		}
		rc = poll(&p, 1, 1000);
		if (rc < 0 && errno != EINTR) {
			kill(-pid, SIGKILL);
			waitpid(pid, NULL, 0);
			ASSERT_TRUE(false) TH_LOG("poll: %s", strerror(errno));
		}
		if (rc <= 0)
			continue;
		n = read(fd[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		take(o, &len, buf, n);
	}
	close(fd[0]);
	/* Whatever still runs of it (the hang this test is about) goes. */
	if (timed_out)
		kill(-pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &o->status, 0));
	kill(-pid, SIGKILL);
	o->ended = !timed_out;
}

/*
 * What kselftest_harness.h says of a test killed by a signal it did not
 * expect: a crash after the reason was printed still reads as reported.
 */
#define CRASHED		"Test terminated unexpectedly by signal"

/* What expect_reported() checks, as one answer. */
static bool reported(const struct outcome *o)
{
	return o->ended && WIFEXITED(o->status) && WEXITSTATUS(o->status) &&
	       strstr(o->out, "a worker left") && !strstr(o->out, "futex_ratio") &&
	       !strstr(o->out, CRASHED);
}

/* Ended within the limit, failed, and said why. */
static void expect_reported(struct __test_metadata *_metadata,
			    const char *inject, const struct outcome *o)
{
	ASSERT_TRUE(o->ended)
		TH_LOG("switch_bench with a %s worker leaving still ran after %d s",
		       inject, LIMIT_S);
	ASSERT_TRUE(WIFEXITED(o->status))
		TH_LOG("switch_bench ended by signal %d", WTERMSIG(o->status));
	EXPECT_NE(0, WEXITSTATUS(o->status))
		TH_LOG("switch_bench passed although a %s worker left", inject);
	EXPECT_NE(NULL, strstr(o->out, "a worker left"))
		TH_LOG("switch_bench did not name the worker that left");
	EXPECT_EQ(NULL, strstr(o->out, "futex_ratio"))
		TH_LOG("switch_bench printed a ratio from a broken measurement");
	EXPECT_EQ(NULL, strstr(o->out, CRASHED))
		TH_LOG("switch_bench crashed on its way out");
}

/*
 * RUNS runs with @inject's worker leaving; the output of the first that
 * went wrong (or of the last) is shown, and checked.
 */
static void run_all(struct __test_metadata *_metadata, const char *inject)
{
	struct outcome *o = umcg_test_zalloc(sizeof(*o));
	int run;

	ASSERT_NE(NULL, o);
	for (run = 1; run <= RUNS; run++) {
		run_injected(_metadata, inject, o);
		if (!reported(o))
			break;
	}
	show(o->out);
	if (run <= RUNS)
		TH_LOG("run %d of %d did not end as it should:", run, RUNS);
	expect_reported(_metadata, inject, o);
	munmap(o, sizeof(*o));
}

TEST(pipe_worker_leaving_ends_the_run)
{
	run_all(_metadata, "pipe");
}

TEST(umcg_worker_leaving_ends_the_run)
{
	if (!umcg_supported())
		SKIP(return, "CONFIG_UMCG not set: no UMCG worker to break");
	run_all(_metadata, "umcg");
}

TEST_HARNESS_MAIN
