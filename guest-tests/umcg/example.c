// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/example: the minimal libumcg example of the README, as a test:
 * one server runs one worker that blocks, yields and leaves.
 */
#include "umcg_test.h"

static struct umcg_group g;
static struct umcg_server srv;
static struct umcg_worker wrk;
static int steps;

static void *worker(void *arg)
{
	(void)arg;
	umcg_worker_register(&wrk, &g, NULL);	/* returns once a server runs us */
	steps++;
	usleep(1000);				/* blocks: the server gets the CPU */
	steps++;
	umcg_worker_yield(&wrk);		/* back to the server ... */
	steps++;				/* ... until it runs us again */
	umcg_worker_unregister(&wrk, &g);	/* the server wakes up */
	return NULL;
}

TEST(minimal_example)
{
	pthread_t t;

	UMCG_REQUIRE();
	umcg_group_init(&g);
	ASSERT_EQ(0, umcg_server_register(&srv, &g));
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	/* umcg_server_loop() returns when the group has no workers left */
	while (!__atomic_load_n(&g.nr_workers, __ATOMIC_SEQ_CST))
		usleep(1000);
	ASSERT_EQ(0, umcg_server_loop(&srv, NULL));
	pthread_join(t, NULL);
	EXPECT_EQ(3, steps);
	EXPECT_GE(srv.switches, 3);
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
