// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/signals: signals sent to a task waiting in UMCG are delivered, not
 * lost (item 10).  A server in umcg_wait() gets -EINTR and runs its handler;
 * a worker waiting to be run keeps the signal pending and runs its handler
 * once a server runs it (a worker never runs without a server).
 */
#include <sys/wait.h>

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

	UMCG_REQUIRE();
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	handled = 0;
	UMCG_TEST_SERVER(c);
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	umcg_wait_idle_list(&c->g, 5000);
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

/*
 * A signal sent to the process must not be taken by a parked worker: it
 * would set up the handler there and park again, so the handler runs only
 * when userspace next runs that worker (review finding 2).  Here the main
 * thread blocks SIGUSR1 while the signal is sent, so on a kernel that lets
 * parked workers take it the worker is the only thread that wants it;
 * once the main thread unblocks it, the handler must run there.
 */
static pid_t handler_tid;

static void tid_handler(int sig)
{
	(void)sig;
	__atomic_store_n(&handler_tid, umcg_gettid(), __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

TEST(process_signal_not_taken_by_parked_worker)
{
	struct sigaction sa = { .sa_handler = tid_handler };
	sigset_t usr1, old;
	struct umcg_worker *w;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	handled = 0;
	handler_tid = 0;
	UMCG_TEST_SERVER(c);
	/* The worker must not inherit the blocked SIGUSR1: block it after. */
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	umcg_wait_idle_list(&c->g, 5000);
	ASSERT_NE(0, c->g.idle_workers);
	usleep(50000);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &usr1, &old));
	ASSERT_EQ(0, kill(getpid(), SIGUSR1));
	usleep(200000);
	/* The handler runs here, as the mask is restored. */
	ASSERT_EQ(0, pthread_sigmask(SIG_SETMASK, &old, NULL));
	for (i = 0; i < 1000 && !__atomic_load_n(&handled, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	EXPECT_EQ(1, __atomic_load_n(&handled, __ATOMIC_SEQ_CST));
	EXPECT_EQ(umcg_gettid(), __atomic_load_n(&handler_tid, __ATOMIC_SEQ_CST))
		TH_LOG("the handler ran in thread %d (worker %d), or not at all",
		       handler_tid, c->w.tid);
	EXPECT_EQ(0, c->ran);
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w, w);
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(1, c->ran);
	EXPECT_EQ(0, umcg_unregister());
}

/*
 * A group stop (SIGSTOP, SIGCONT) runs no handler, so it must not end a
 * server's umcg_wait() with EINTR: the call restarts and keeps its
 * deadline (review finding 3).  In a child, as the stop takes the whole
 * process.
 */
TEST(group_stop_does_not_end_server_wait)
{
	struct umcg_waiting_server *res;
	pid_t pid;
	int st, i;

	UMCG_REQUIRE();
	res = umcg_test_shared(sizeof(*res));
	ASSERT_NE(NULL, res);
	res->ret = 99;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(umcg_waiting_server_child(res, 1000000000ULL));
	for (i = 0; i < 5000 && !__atomic_load_n(&res->ready, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, res->ready);
	usleep(100000);
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	ASSERT_EQ(pid, waitpid(pid, &st, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(st));
	ASSERT_EQ(0, kill(pid, SIGCONT));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	TH_LOG("umcg_wait(): %s after %llu ms", strerror(res->ret),
	       (unsigned long long)res->waited_ns / 1000000);
	EXPECT_EQ(ETIMEDOUT, res->ret)
		TH_LOG("a stop and continue, with no handler, ended the wait");
	EXPECT_LE(900000000ULL, res->waited_ns);
}

TEST_HARNESS_MAIN
