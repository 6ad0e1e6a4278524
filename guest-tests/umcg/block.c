// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/block: a worker that blocks in nanosleep() or in read() on a pipe
 * makes its server run; when it unblocks it is IDLE on the idle-worker list
 * and makes no progress until a server runs it again (item 4).
 */
#include "umcg_test.h"

/*
 * How long the worker sleeps in nanosleep(): the margin within which the
 * server must be back while the worker is still BLOCKED.  Generous, as a
 * loaded TCG guest may take a long time to run the server again.
 */
#define SLEEP_S 2

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			pipefd[2];
	int			progress;
} *c;

static void *worker(void *arg)
{
	struct timespec ts = { .tv_sec = SLEEP_S };
	char ch;

	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	__atomic_store_n(&c->progress, 1, __ATOMIC_SEQ_CST);
	nanosleep(&ts, NULL);
	__atomic_store_n(&c->progress, 2, __ATOMIC_SEQ_CST);
	if (read(c->pipefd[0], &ch, 1) != 1)
		return (void *)2;
	__atomic_store_n(&c->progress, 3, __ATOMIC_SEQ_CST);
	umcg_worker_unregister(&c->w, &c->g);
	return NULL;
}

static int progress(void)
{
	return __atomic_load_n(&c->progress, __ATOMIC_SEQ_CST);
}

/* How long the server waits for any one event before the test gives up. */
#define WAIT_NS 10000000000ULL

/*
 * Sleep as the idle server until a worker is on the idle list.  One
 * deadline for the whole wait, well past the worker's sleep: a wait that
 * timed out just as the worker woke would leave the kernel's event for the
 * next wait (documented), and count no wake-up.
 */
static struct umcg_worker *wait_for_idle_worker(struct __test_metadata *_metadata,
						int *woken)
{
	uint64_t deadline = umcg_deadline(WAIT_NS);
	struct umcg_worker *w;

	*woken = 0;
	while (!__atomic_load_n(&c->g.idle_workers, __ATOMIC_SEQ_CST)) {
		int ret = umcg_server_idle(&c->s, deadline);

		if (!ret)
			(*woken)++;
		else if (ret == -ETIMEDOUT)
			break;
	}
	EXPECT_EQ(UMCG_TASK_RUNNING, umcg_task_state(&c->s.task));
	w = (void *)(uintptr_t)__atomic_load_n(&c->g.idle_workers,
					       __ATOMIC_SEQ_CST);
	return w;
}

/*
 * Run @w and come back when it is no longer RUNNING for us
 * (umcg_run_until_back()).  The first return of umcg_wait() can be an
 * event posted while the server was not waiting; the documented rule is
 * to look at the worker and wait again.  A server that no event brings
 * back times out, and the test fails.
 */
static int run_until_back(struct umcg_worker *w)
{
	return umcg_run_until_back(&c->s, w, WAIT_NS);
}

TEST(block_in_nanosleep_and_read)
{
	struct umcg_worker *w;
	uint64_t t0, t1;
	int woken;
	pthread_t t;

	UMCG_REQUIRE();
	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, pipe(c->pipefd));
	umcg_group_init(&c->g);
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));

	w = wait_for_idle_worker(_metadata, &woken);
	ASSERT_EQ(&c->w, w);
	ASSERT_EQ(w, umcg_take_idle(&c->g));

	/* run it: it blocks in nanosleep(), and the server runs again */
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, run_until_back(w));
	t1 = umcg_now_ns(CLOCK_MONOTONIC);
	/*
	 * The server is back while the worker still sleeps: BLOCKED, not yet
	 * IDLE.  A server woken only when the sleep ends (no event for the
	 * block) would find it IDLE on the idle list.  The time is for people,
	 * not a verdict.
	 */
	TH_LOG("server woke %llu us after running the worker (sleep %d s)",
	       (unsigned long long)(t1 - t0) / 1000, SLEEP_S);
	EXPECT_EQ(1, progress());
	EXPECT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&w->task));
	EXPECT_EQ(0, c->g.idle_workers);
	EXPECT_EQ(UMCG_TASK_RUNNING, umcg_task_state(&c->s.task));
	EXPECT_TRUE(umcg_server_settle(&c->s));
	EXPECT_EQ(NULL, c->s.rq_head);

	/* it wakes up: IDLE on the idle list, the idle server is woken */
	w = wait_for_idle_worker(_metadata, &woken);
	ASSERT_EQ(&c->w, w);
	EXPECT_GE(woken, 1);
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task));
	EXPECT_EQ(0, c->g.idle_server_tid);
	usleep(200000);
	EXPECT_EQ(1, progress());	/* no progress without a server */
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task));
	ASSERT_EQ(w, umcg_take_idle(&c->g));
	EXPECT_EQ(NULL, umcg_idle_next(w));

	/* run it: nanosleep() returns, it blocks in read() */
	ASSERT_EQ(0, run_until_back(w));
	EXPECT_EQ(2, progress());
	EXPECT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&w->task));
	EXPECT_TRUE(umcg_server_settle(&c->s));

	usleep(100000);
	EXPECT_EQ(0, c->g.idle_workers);	/* still blocked */
	ASSERT_EQ(1, write(c->pipefd[1], "x", 1));
	w = wait_for_idle_worker(_metadata, &woken);
	ASSERT_EQ(&c->w, w);
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task));
	usleep(200000);
	EXPECT_EQ(2, progress());
	ASSERT_EQ(w, umcg_take_idle(&c->g));

	/* last run: read() returns, the worker unregisters */
	ASSERT_EQ(0, run_until_back(w));
	EXPECT_EQ(3, progress());
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	pthread_join(t, NULL);
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
