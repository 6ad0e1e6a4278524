// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/exit: a worker that exits while RUNNING, and one killed by a
 * signal, wake their server (item 8).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/wait.h>

#include "umcg_test.h"

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			go_exit;
	pid_t			child;
	char			stack[256 * 1024] __attribute__((aligned(16)));
} *c;

/* Run @w until it is NONE (it may block on its way out). */
static int run_until_gone(struct umcg_worker *w, uint64_t timeout_ns)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) + timeout_ns;
	struct umcg_worker *x;

	for (;;) {
		int ret = umcg_run_worker(&c->s, w, umcg_deadline(timeout_ns));

		if (ret && ret != -EAGAIN && ret != -EINTR)
			return ret;
		while ((umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK) ==
		       UMCG_TASK_RUNNING) {
			if (umcg_now_ns(CLOCK_MONOTONIC) > end)
				return -ETIMEDOUT;
			umcg_server_wait_current(&c->s, umcg_deadline(100000000));
		}
		if (umcg_task_state(&w->task) == UMCG_TASK_NONE)
			return 0;
		/* blocked on the way out: wait for it on the idle list */
		while (!(x = umcg_take_idle(&c->g))) {
			if (umcg_now_ns(CLOCK_MONOTONIC) > end)
				return -ETIMEDOUT;
			umcg_server_idle(&c->s, umcg_deadline(100000000));
		}
		if (x != w)
			return -EINVAL;
		w->task.state &= ~LIBUMCG_TF_HANDOFF;
	}
}

static void *exiting_worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	/* RUNNING: leave without unregistering */
	return NULL;
}

TEST(worker_exits_while_running)
{
	struct umcg_worker *w;
	uint64_t t0;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	umcg_group_init(&c->g);
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));
	ASSERT_EQ(0, pthread_create(&t, NULL, exiting_worker, NULL));
	for (i = 0; i < 5000 && !c->g.idle_workers; i++)
		usleep(1000);
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w, w);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	EXPECT_EQ(0, run_until_gone(w, 5000000000ULL));
	TH_LOG("server woke %llu us after running the exiting worker",
	       (unsigned long long)(umcg_now_ns(CLOCK_MONOTONIC) - t0) / 1000);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	EXPECT_EQ(UMCG_TASK_RUNNING, umcg_task_state(&c->s.task));
	pthread_join(t, NULL);
	EXPECT_EQ(0, umcg_unregister());
}

/* A CLONE_VM child: same mm (a worker of ours), its own thread group. */
static int vm_child(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return 1;
	for (;;)
		__atomic_add_fetch(&c->go_exit, 1, __ATOMIC_RELAXED);
	return 0;
}

static void *killer(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&c->go_exit, __ATOMIC_RELAXED) < 1000)
		usleep(1000);
	kill(c->child, SIGKILL);
	return NULL;
}

TEST(worker_killed_by_signal)
{
	struct umcg_worker *w;
	pthread_t k;
	int i, status;

	UMCG_REQUIRE();
	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	umcg_group_init(&c->g);
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));
	c->child = clone(vm_child, c->stack + sizeof(c->stack),
			 CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD, NULL);
	ASSERT_GT(c->child, 0);
	for (i = 0; i < 5000 && !c->g.idle_workers; i++)
		usleep(1000);
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w, w);
	ASSERT_EQ(0, pthread_create(&k, NULL, killer, NULL));
	EXPECT_EQ(0, run_until_gone(w, 10000000000ULL));
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	pthread_join(k, NULL);
	ASSERT_EQ(c->child, waitpid(c->child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
