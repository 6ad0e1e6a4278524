// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/preempt: a worker spinning in userspace is preempted with
 * RUNNING|PREEMPTED + a signal; its server regains the CPU within a bound
 * and the worker is parked IDLE|PREEMPTED until it is run again (item 7).
 */
#include "umcg_test.h"

static int handled;

static void handler(int sig)
{
	(void)sig;
	__atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	uint64_t		spins;
	int			stop;
	uint64_t		preempt_ns;
	int			preempt_ret;
	int			handled_after;
} *c;

static void *worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	while (!__atomic_load_n(&c->stop, __ATOMIC_SEQ_CST))
		__atomic_add_fetch(&c->spins, 1, __ATOMIC_RELAXED);
	c->handled_after = __atomic_load_n(&handled, __ATOMIC_SEQ_CST);
	umcg_worker_unregister(&c->w, &c->g);
	return NULL;
}

static void *preempter(void *arg)
{
	(void)arg;
	/* let the worker spin for a while first */
	while (__atomic_load_n(&c->spins, __ATOMIC_RELAXED) < 100000)
		usleep(1000);
	usleep(50000);
	c->preempt_ns = umcg_now_ns(CLOCK_MONOTONIC);
	c->preempt_ret = umcg_preempt_worker(&c->w, SIGUSR1);
	return NULL;
}

TEST(preempt_spinning_worker)
{
	struct sigaction sa = { .sa_handler = handler };
	struct umcg_worker *w;
	pthread_t t, p;
	uint64_t back, s1, s2;
	int i;

	UMCG_REQUIRE();
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	umcg_group_init(&c->g);
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	for (i = 0; i < 5000 && !c->g.idle_workers; i++)
		usleep(1000);
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w, w);

	ASSERT_EQ(0, pthread_create(&p, NULL, preempter, NULL));
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	back = umcg_now_ns(CLOCK_MONOTONIC);
	pthread_join(p, NULL);
	ASSERT_EQ(0, c->preempt_ret);
	TH_LOG("server regained the CPU %llu us after the preemption request",
	       (unsigned long long)(back - c->preempt_ns) / 1000);
	ksft_print_msg("metric: umcg_preempt_latency_us=%llu\n",
		       (unsigned long long)(back - c->preempt_ns) / 1000);
	EXPECT_LT(back - c->preempt_ns, 2000000000ULL);
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_PREEMPTED,
		  umcg_task_state(&w->task));
	EXPECT_EQ(UMCG_TASK_RUNNING, umcg_task_state(&c->s.task));
	/* not queued on the idle list: the server owns it */
	EXPECT_EQ(0, c->g.idle_workers);
	/* parked: no progress, and the handler has not run yet */
	s1 = __atomic_load_n(&c->spins, __ATOMIC_SEQ_CST);
	usleep(200000);
	s2 = __atomic_load_n(&c->spins, __ATOMIC_SEQ_CST);
	EXPECT_EQ(s1, s2);
	EXPECT_EQ(0, __atomic_load_n(&handled, __ATOMIC_SEQ_CST));

	/* the server takes it back and runs it again */
	EXPECT_TRUE(umcg_server_settle(&c->s));
	w = umcg_rq_pop(&c->s);
	ASSERT_EQ(&c->w, w);
	__atomic_store_n(&c->stop, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(1, c->handled_after);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	EXPECT_EQ(0, umcg_unregister());
}

TEST(preempt_not_running)
{
	struct umcg_worker w;

	UMCG_REQUIRE();
	memset(&w, 0, sizeof(w));
	w.task.state = UMCG_TASK_IDLE;
	EXPECT_EQ(-EAGAIN, umcg_preempt_worker(&w, SIGUSR1));
	w.task.state = UMCG_TASK_BLOCKED;
	EXPECT_EQ(-EAGAIN, umcg_preempt_worker(&w, SIGUSR1));
}

TEST_HARNESS_MAIN
