// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/example: the minimal libumcg example of docs/series.md, as a test:
 * one server runs one worker that blocks, yields and leaves.
 *
 * The worker blocks in read() on a pipe that a plain (non-UMCG) thread
 * fills only once it has seen the worker BLOCKED.  A short sleep would
 * not do: nanosleep() whose timer expires before schedule() - a vCPU
 * stalled for a millisecond under TCG - never blocks, the server is not
 * woken, and it runs the worker twice instead of three times (CI saw
 * that on the debug variant).
 */
#include "umcg_test.h"

static struct umcg_group g;
static struct umcg_server srv;
static struct umcg_worker wrk;
static int steps, pipefd[2], seen_blocked;

static void *worker(void *arg)
{
	char c;

	(void)arg;
	umcg_worker_register(&wrk, &g, NULL);	/* returns once a server runs us */
	steps++;
	if (read(pipefd[0], &c, 1) == 1)	/* blocks: the server gets the CPU */
		steps++;
	umcg_worker_yield(&wrk);		/* back to the server ... */
	steps++;				/* ... until it runs us again */
	umcg_worker_unregister(&wrk, &g);	/* the server wakes up */
	return NULL;
}

/* Not a UMCG task: unblock the worker once it is BLOCKED (or after 10 s). */
static void *unblocker(void *arg)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) + 10000000000ULL;

	(void)arg;
	while (umcg_now_ns(CLOCK_MONOTONIC) < end) {
		if ((umcg_task_state(&wrk.task) & UMCG_TASK_STATE_MASK) ==
		    UMCG_TASK_BLOCKED) {
			seen_blocked = 1;
			break;
		}
		usleep(1000);
	}
	if (write(pipefd[1], "x", 1) != 1)
		return (void *)1;
	return NULL;
}

TEST(minimal_example)
{
	pthread_t t, u;
	void *unblocked;

	UMCG_REQUIRE();
	ASSERT_EQ(0, pipe(pipefd));
	umcg_group_init(&g);
	ASSERT_EQ(0, umcg_server_register(&srv, &g));
	ASSERT_EQ(0, pthread_create(&u, NULL, unblocker, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	/* umcg_server_loop() returns when the group has no workers left */
	while (!__atomic_load_n(&g.nr_workers, __ATOMIC_SEQ_CST))
		usleep(1000);
	ASSERT_EQ(0, umcg_server_loop(&srv, NULL));
	pthread_join(t, NULL);
	pthread_join(u, &unblocked);
	EXPECT_EQ(NULL, unblocked) TH_LOG("the unblocker's write() failed");
	EXPECT_EQ(1, seen_blocked) TH_LOG("the worker was never BLOCKED in read()");
	EXPECT_EQ(3, steps);
	EXPECT_GE(srv.switches, 3);
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
