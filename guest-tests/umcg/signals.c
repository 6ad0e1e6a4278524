// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/signals: signals sent to a task waiting in UMCG are delivered, not
 * lost (item 10).  A server in umcg_wait() gets -EINTR and runs its handler;
 * a worker waiting to be run keeps the signal pending and runs its handler
 * once a server runs it (a worker never runs without a server).
 */
#include "umcg_test.h"

static int handled;

static void handler(int sig)
{
	(void)sig;
	__atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

static struct umcg_task *st;
static pid_t st_tid;
static int st_ret = 99, st_handled_at_return;

static void *waiting_server(void *arg)
{
	(void)arg;
	st->state = UMCG_TASK_RUNNING;
	if (umcg_ctl(UMCG_CTL_REGISTER, st))
		return (void *)1;
	__atomic_store_n(&st_tid, umcg_gettid(), __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	st_ret = umcg_wait(0, 0) ? errno : 0;
	st_handled_at_return = __atomic_load_n(&handled, __ATOMIC_SEQ_CST);
	umcg_ctl(UMCG_CTL_UNREGISTER, NULL);
	return NULL;
}

TEST(signal_to_waiting_server)
{
	struct sigaction sa = { .sa_handler = handler };
	pthread_t t;

	UMCG_REQUIRE();
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	handled = 0;
	st = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, st);
	ASSERT_EQ(0, pthread_create(&t, NULL, waiting_server, NULL));
	ASSERT_TRUE(umcg_poll_eq(&st->state, ~0U, UMCG_TASK_IDLE, 5000));
	usleep(100000);
	EXPECT_EQ(99, st_ret);
	ASSERT_EQ(0, syscall(SYS_tgkill, getpid(), st_tid, SIGUSR1));
	pthread_join(t, NULL);
	EXPECT_EQ(EINTR, st_ret);
	/* the handler ran before umcg_wait() returned to the caller */
	EXPECT_EQ(1, st_handled_at_return);
	EXPECT_EQ(1, handled);
}

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			handled_at_run;
	int			ran;
} *c;

static void *worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	c->handled_at_run = __atomic_load_n(&handled, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->ran, 1, __ATOMIC_SEQ_CST);
	umcg_worker_unregister(&c->w, &c->g);
	return NULL;
}

TEST(signal_to_waiting_worker)
{
	struct sigaction sa = { .sa_handler = handler };
	struct umcg_worker *w;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	handled = 0;
	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	umcg_group_init(&c->g);
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	for (i = 0; i < 5000 && !c->g.idle_workers; i++)
		usleep(1000);
	ASSERT_NE(0, c->g.idle_workers);
	/* the worker waits in umcg_ctl() to be run: signal it twice */
	ASSERT_EQ(0, syscall(SYS_tgkill, getpid(), c->w.tid, SIGUSR1));
	usleep(200000);
	EXPECT_EQ(0, __atomic_load_n(&handled, __ATOMIC_SEQ_CST));
	EXPECT_EQ(0, c->ran);
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&c->w.task));
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w, w);
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(1, c->ran);
	/* delivered once it ran, before its code continued */
	EXPECT_EQ(1, c->handled_at_run);
	EXPECT_EQ(1, handled);
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
