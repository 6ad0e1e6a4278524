// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/exit: a worker that exits while RUNNING, and one killed by a
 * signal, wake their server (item 8).  One killed while BLOCKED wakes its
 * server too; one killed while IDLE on the idle list stays there, marked
 * NONE; the userspace bits 24-31 of the state survive the exit (issue 9,
 * item 5).
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
	int			pipefd[2];
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
		/* (userspace's bits 24-31 survive the exit) */
		if ((umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK) ==
		    UMCG_TASK_NONE)
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

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(c);
	ASSERT_EQ(0, pthread_create(&t, NULL, exiting_worker, NULL));
	umcg_wait_idle_list(&c->g, 5000);
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
	int status;

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(c);
	c->child = clone(vm_child, c->stack + sizeof(c->stack),
			 CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD, NULL);
	ASSERT_GT(c->child, 0);
	umcg_wait_idle_list(&c->g, 5000);
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

/* Userspace bits the tests put into the state word. */
#define USER_BITS	(1U << 30 | 1U << 29)

static void *exiting_worker_with_bits(void *arg)
{
	uint32_t st;

	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	do {
		st = umcg_task_state(&c->w.task);
	} while (!umcg_cas(&c->w.task.state, st, st | USER_BITS));
	return NULL;	/* exit while RUNNING */
}

TEST(user_bits_survive_exit)
{
	struct umcg_worker *w;
	pthread_t t;

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(c);
	ASSERT_EQ(0, pthread_create(&t, NULL, exiting_worker_with_bits, NULL));
	umcg_wait_idle_list(&c->g, 5000);
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w, w);
	EXPECT_EQ(0, run_until_gone(w, 5000000000ULL));
	pthread_join(t, NULL);
	EXPECT_EQ(UMCG_TASK_NONE | USER_BITS, umcg_task_state(&w->task))
		TH_LOG("bits 24-31 are userspace's: the kernel must keep them");
	EXPECT_EQ(0, umcg_unregister());
}

/* CLONE_VM child worker: blocks in read() once it runs. */
static int blocking_vm_child(void *arg)
{
	char ch;

	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return 1;
	if (read(c->pipefd[0], &ch, 1) != 1)
		return 2;
	return 3;	/* never: it is killed while blocked */
}

static void *kill_when_server_sleeps(void *arg)
{
	(void)arg;
	while (umcg_task_state(&c->s.task) != UMCG_TASK_IDLE ||
	       !strchr("S", umcg_task_state_letter(c->s.tid)))
		usleep(1000);
	usleep(20000);
	kill(c->child, SIGKILL);
	return NULL;
}

TEST(worker_killed_while_blocked)
{
	struct umcg_worker *w;
	pthread_t k;
	int status;
	long ret;

	UMCG_REQUIRE();
	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, pipe(c->pipefd));
	umcg_group_init(&c->g);
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));
	c->child = clone(blocking_vm_child, c->stack + sizeof(c->stack),
			 CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD, NULL);
	ASSERT_GT(c->child, 0);
	umcg_wait_idle_list(&c->g, 5000);
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w, w);
	/* Run it: it blocks in read(), the server is woken. */
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, umcg_deadline(10000000000ULL)));
	ASSERT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&w->task));
	EXPECT_TRUE(umcg_server_settle(&c->s));

	/* Wait for an event; the worker is killed while BLOCKED. */
	ASSERT_EQ(0, pthread_create(&k, NULL, kill_when_server_sleeps, NULL));
	__atomic_store_n(&c->s.task.state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	ret = umcg_wait(0, umcg_deadline(5000000000ULL)) ? errno : 0;
	umcg_server_set_running(&c->s);
	pthread_join(k, NULL);
	ASSERT_EQ(c->child, waitpid(c->child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, ret) TH_LOG("the server was not told that its BLOCKED worker died (%s)",
				 strerror((int)ret));
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	/* It never woke up: it is not on the idle list. */
	EXPECT_EQ(0, c->g.idle_workers);
	EXPECT_EQ(0, umcg_unregister());
}

/* CLONE_VM child worker with userspace bits set: parks on registration. */
static int idle_vm_child(void *arg)
{
	(void)arg;
	memset(&c->w, 0, sizeof(c->w));
	c->w.task.state = UMCG_TASK_IDLE | USER_BITS;
	c->w.task.idle_workers_ptr = (uint64_t)(uintptr_t)&c->g.idle_workers;
	c->w.task.idle_server_tid_ptr = (uint64_t)(uintptr_t)c->g.idle_server;
	c->w.tid = umcg_gettid();
	if (umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, &c->w.task))
		return 1;
	return 2;	/* never: it is killed before it runs */
}

TEST(worker_killed_while_queued)
{
	int i, status;

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(c);
	c->child = clone(idle_vm_child, c->stack + sizeof(c->stack),
			 CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD, NULL);
	ASSERT_GT(c->child, 0);
	umcg_wait_idle_list(&c->g, 5000);
	ASSERT_EQ((uint64_t)(uintptr_t)&c->w.task, c->g.idle_workers);
	for (i = 0; i < 5000; i++) {
		char st[64];

		if (umcg_task_status(c->child, c->child, "State", st, sizeof(st)) &&
		    strchr("SDI", st[0]))
			break;
		usleep(1000);
	}
	ASSERT_EQ(0, kill(c->child, SIGKILL));
	ASSERT_EQ(c->child, waitpid(c->child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	/*
	 * Documented: the entry stays on the idle list (only userspace takes
	 * entries off), marked NONE with its userspace bits; the memory must
	 * stay valid until a server has taken it off.
	 */
	EXPECT_EQ((uint64_t)(uintptr_t)&c->w.task, c->g.idle_workers);
	EXPECT_EQ(UMCG_TASK_NONE | USER_BITS, umcg_task_state(&c->w.task));
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
