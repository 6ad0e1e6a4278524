// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/preempt: a worker spinning in userspace is preempted with
 * RUNNING|PREEMPTED + a signal, or + umcg_wait(UMCG_WAIT_PREEMPT) when it
 * blocks or ignores signals; its server regains the CPU within a bound
 * and the worker is parked IDLE|PREEMPTED until it is run again.
 */
#include <sys/epoll.h>

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

	UMCG_REQUIRE();
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	UMCG_TEST_SERVER(c);
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	umcg_wait_idle_list(&c->g, 5000);
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

/*
 * A preemption request that finds the worker not RUNNING (any more) does
 * nothing: libumcg refuses it, and in the kernel a request whose worker
 * blocked or yielded before the signal arrived is void - the worker is not
 * parked as preempted, and the late signal's handler waits until a server
 * runs the worker again.  (The previous version of this test only called
 * libumcg with fake workers and never reached the kernel.)
 */
static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			pipefd[2];
	int			phase;		/* preempter -> worker */
	int			step;		/* worker progress */
	int			handled_at_step[4];
} *n;

static void *late_worker(void *arg)
{
	char ch;

	(void)arg;
	if (umcg_worker_register(&n->w, &n->g, NULL))
		return (void *)1;
	/* B: block once the preemption request is in */
	while (__atomic_load_n(&n->phase, __ATOMIC_SEQ_CST) < 1)
		;
	n->step = 1;
	if (read(n->pipefd[0], &ch, 1) != -1 || errno != EINTR)
		return (void *)2;
	n->handled_at_step[2] = __atomic_load_n(&handled, __ATOMIC_SEQ_CST);
	n->step = 2;
	/* C: yield once the next preemption request is in */
	while (__atomic_load_n(&n->phase, __ATOMIC_SEQ_CST) < 2)
		;
	umcg_worker_yield(&n->w);
	n->handled_at_step[3] = __atomic_load_n(&handled, __ATOMIC_SEQ_CST);
	n->step = 3;
	umcg_worker_unregister(&n->w, &n->g);
	return NULL;
}

/*
 * The preempter's half: RUNNING -> RUNNING|PREEMPTED, no signal yet.
 * Returns NULL, or a description of what went wrong.
 */
static void *request_preemption(int phase)
{
	if (!umcg_poll_eq(&n->w.task.state, ~0U, UMCG_TASK_RUNNING, 10000))
		return "worker not RUNNING";
	if (!umcg_cas(&n->w.task.state, UMCG_TASK_RUNNING,
		      UMCG_TASK_RUNNING | UMCG_TF_PREEMPTED))
		return "CAS to RUNNING|PREEMPTED failed";
	__atomic_store_n(&n->phase, phase, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *preempter_b(void *arg)
{
	(void)arg;
	return request_preemption(1);
}

static void *preempter_c(void *arg)
{
	(void)arg;
	/* once the worker ran again after B and spins at step 2 */
	while (__atomic_load_n(&n->step, __ATOMIC_SEQ_CST) < 2)
		usleep(1000);
	return request_preemption(2);
}

TEST(preempt_not_running)
{
	struct sigaction sa = { .sa_handler = handler };	/* no SA_RESTART */
	struct umcg_worker fake, *w;
	pthread_t t, p;
	void *perr;
	int i;

	UMCG_REQUIRE();
	/* libumcg: not RUNNING, no request */
	memset(&fake, 0, sizeof(fake));
	fake.task.state = UMCG_TASK_IDLE;
	EXPECT_EQ(-EAGAIN, umcg_preempt_worker(&fake, SIGUSR1));
	fake.task.state = UMCG_TASK_BLOCKED;
	EXPECT_EQ(-EAGAIN, umcg_preempt_worker(&fake, SIGUSR1));

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	handled = 0;
	n = umcg_test_zalloc(sizeof(*n));
	ASSERT_NE(NULL, n);
	ASSERT_EQ(0, pipe(n->pipefd));
	umcg_group_init(&n->g);
	ASSERT_EQ(0, umcg_server_register(&n->s, &n->g));
	ASSERT_EQ(0, pthread_create(&t, NULL, late_worker, NULL));
	for (i = 0; i < 10000 && !(w = umcg_take_idle(&n->g)); i++)
		usleep(1000);
	ASSERT_EQ(&n->w, w);

	/* B: the request is in, the worker blocks before the signal. */
	ASSERT_EQ(0, pthread_create(&p, NULL, preempter_b, NULL));
	ASSERT_EQ(0, umcg_run_worker(&n->s, w, umcg_deadline(20000000000ULL)));
	pthread_join(p, &perr);
	ASSERT_EQ(NULL, perr) TH_LOG("%s", (char *)perr);
	ASSERT_EQ(1, n->step);
	EXPECT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&w->task))
		TH_LOG("a worker that blocks is BLOCKED, its preemption void");
	EXPECT_TRUE(umcg_server_settle(&n->s));
	/* The late signal wakes it: queued as a plain IDLE worker. */
	ASSERT_EQ(0, syscall(SYS_tgkill, getpid(), w->tid, SIGUSR1));
	for (i = 0; i < 10000 && !(w = umcg_take_idle(&n->g)); i++)
		usleep(1000);
	ASSERT_EQ(&n->w, w);
	ASSERT_TRUE(umcg_wait_signal_taken(w->tid, 10000));
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task));
	EXPECT_EQ(0, __atomic_load_n(&handled, __ATOMIC_SEQ_CST));

	/*
	 * C: run it; once it is back in user code, the next request comes
	 * in and the worker yields before the signal.
	 */
	ASSERT_EQ(0, pthread_create(&p, NULL, preempter_c, NULL));
	ASSERT_EQ(0, umcg_run_worker(&n->s, w, umcg_deadline(20000000000ULL)));
	while (umcg_still_running(&n->s, w))
		umcg_server_wait_current(&n->s, umcg_deadline(20000000000ULL));
	pthread_join(p, &perr);
	ASSERT_EQ(NULL, perr) TH_LOG("%s", (char *)perr);
	ASSERT_EQ(2, n->step);
	EXPECT_EQ(1, n->handled_at_step[2]);	/* once it ran */
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK);
	EXPECT_TRUE(umcg_server_settle(&n->s));
	ASSERT_EQ(0, syscall(SYS_tgkill, getpid(), w->tid, SIGUSR1));
	/* It waits in its yield: the signal stays pending, blocked. */
	ASSERT_TRUE(umcg_wait_signal_held(w->tid, 10000));
	EXPECT_EQ(1, __atomic_load_n(&handled, __ATOMIC_SEQ_CST))
		TH_LOG("the late signal's handler ran while the worker was IDLE");
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK);
	EXPECT_EQ(2, n->step);
	/* Run it: the handler, then its yield returns, then it leaves. */
	ASSERT_EQ(w, umcg_rq_pop(&n->s));
	ASSERT_EQ(0, umcg_run_worker(&n->s, w, umcg_deadline(20000000000ULL)));
	while (umcg_still_running(&n->s, w))
		umcg_server_wait_current(&n->s, umcg_deadline(20000000000ULL));
	pthread_join(t, NULL);
	EXPECT_EQ(3, n->step);
	EXPECT_EQ(2, n->handled_at_step[3]);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK);
	EXPECT_EQ(0, umcg_unregister());
}

/*
 * A worker that blocks every signal, or ignores the one a preempter would
 * send, cannot be preempted with a signal: the request sits in its state
 * word while it spins on.  umcg_wait(UMCG_WAIT_PREEMPT) brings it into the
 * kernel without one.  Run by its server S; a second server K preempts.
 */
enum kick_mode { KICK_BLOCKED, KICK_IGNORED };

static struct {
	struct umcg_group	g;
	struct umcg_server	s, k;
	struct umcg_worker	w;
	enum kick_mode		mode;
	uint64_t		spins;
	int			stop;
	int			kick_ret;
	uint32_t		state_after_signal;	/* K's view */
	uint64_t		spins_after_signal[2];
	char			err[96];
} *kc;

static void *kick_worker_fn(void *arg)
{
	sigset_t all;

	(void)arg;
	if (kc->mode == KICK_BLOCKED) {
		sigfillset(&all);
		if (pthread_sigmask(SIG_BLOCK, &all, NULL))
			return (void *)1;
	}
	if (umcg_worker_register(&kc->w, &kc->g, NULL))
		return (void *)2;
	while (!__atomic_load_n(&kc->stop, __ATOMIC_SEQ_CST))
		__atomic_add_fetch(&kc->spins, 1, __ATOMIC_RELAXED);
	umcg_worker_unregister(&kc->w, &kc->g);
	return NULL;
}

static void *kicker(void *arg)
{
	(void)arg;
	if (umcg_server_register(&kc->k, &kc->g)) {
		snprintf(kc->err, sizeof(kc->err), "K: register: %s", strerror(errno));
		return kc->err;
	}
	while (__atomic_load_n(&kc->spins, __ATOMIC_RELAXED) < 100000)
		usleep(1000);
	/* The signal way first: the request stays, the worker spins on. */
	if (umcg_preempt_worker(&kc->w, SIGUSR1)) {
		snprintf(kc->err, sizeof(kc->err), "signal request failed");
		return kc->err;
	}
	kc->spins_after_signal[0] = __atomic_load_n(&kc->spins, __ATOMIC_SEQ_CST);
	usleep(300000);
	kc->spins_after_signal[1] = __atomic_load_n(&kc->spins, __ATOMIC_SEQ_CST);
	kc->state_after_signal = umcg_task_state(&kc->w.task);
	/* Withdraw it (RUNNING again), then the kick. */
	if (!umcg_cas(&kc->w.task.state, UMCG_TASK_RUNNING | UMCG_TF_PREEMPTED,
		      UMCG_TASK_RUNNING)) {
		snprintf(kc->err, sizeof(kc->err), "state 0x%x after the signal",
			 umcg_task_state(&kc->w.task));
		return kc->err;
	}
	kc->kick_ret = umcg_kick_worker(&kc->k, &kc->w);
	umcg_unregister();
	return NULL;
}

static void kick_test(struct __test_metadata *_metadata, enum kick_mode mode)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct umcg_worker *w;
	uint64_t s1, s2;
	pthread_t t, p;
	void *perr;

	UMCG_REQUIRE();
	if (mode == KICK_IGNORED)
		ASSERT_EQ(0, sigaction(SIGUSR1, &ign, NULL));
	UMCG_TEST_SERVER(kc);
	kc->mode = mode;
	ASSERT_EQ(0, pthread_create(&t, NULL, kick_worker_fn, NULL));
	umcg_wait_idle_list(&kc->g, 5000);
	w = umcg_take_idle(&kc->g);
	ASSERT_EQ(&kc->w, w);

	ASSERT_EQ(0, pthread_create(&p, NULL, kicker, NULL));
	ASSERT_EQ(0, umcg_run_until_back(&kc->s, w, 20000000000ULL));
	pthread_join(p, &perr);
	ASSERT_EQ(NULL, perr) TH_LOG("%s", (char *)perr);
	TH_LOG("after the signal: state 0x%x, %llu spins in 300 ms; kick: %s",
	       kc->state_after_signal,
	       (unsigned long long)(kc->spins_after_signal[1] -
				    kc->spins_after_signal[0]),
	       kc->kick_ret ? strerror(-kc->kick_ret) : "ok");
	/* The signal did not preempt it. */
	EXPECT_EQ(UMCG_TASK_RUNNING | UMCG_TF_PREEMPTED, kc->state_after_signal);
	EXPECT_LT(kc->spins_after_signal[0], kc->spins_after_signal[1]);
	/* The kick did. */
	ASSERT_EQ(0, kc->kick_ret);
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_PREEMPTED, umcg_task_state(&w->task));
	EXPECT_EQ(0, kc->g.idle_workers);
	s1 = __atomic_load_n(&kc->spins, __ATOMIC_SEQ_CST);
	usleep(200000);
	s2 = __atomic_load_n(&kc->spins, __ATOMIC_SEQ_CST);
	EXPECT_EQ(s1, s2) TH_LOG("a preempted worker is parked");

	EXPECT_TRUE(umcg_server_settle(&kc->s));
	w = umcg_rq_pop(&kc->s);
	ASSERT_EQ(&kc->w, w);
	__atomic_store_n(&kc->stop, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, umcg_run_until_back(&kc->s, w, 20000000000ULL));
	pthread_join(t, NULL);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK);
	EXPECT_EQ(0, umcg_unregister());
}

TEST(preempt_without_signal_all_signals_blocked)
{
	kick_test(_metadata, KICK_BLOCKED);
}

TEST(preempt_without_signal_signal_ignored)
{
	kick_test(_metadata, KICK_IGNORED);
}

/* The kick's argument checks: not a worker, other flags, a deadline. */
TEST(preempt_without_signal_errors)
{
	struct umcg_server *s;
	uint32_t self;

	UMCG_REQUIRE();
	s = umcg_test_zalloc(sizeof(*s) + sizeof(struct umcg_group));
	ASSERT_NE(NULL, s);
	umcg_group_init((struct umcg_group *)(s + 1));
	ASSERT_EQ(0, umcg_server_register(s, (struct umcg_group *)(s + 1)));
	self = s->task.next_tid;
	s->task.next_tid = 0;
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_PREEMPT, 0));
	EXPECT_EQ(EINVAL, errno) TH_LOG("no next_tid");
	s->task.next_tid = umcg_gettid();	/* a server, not a worker */
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_PREEMPT, 0));
	EXPECT_EQ(ESRCH, errno);
	s->task.next_tid = getppid();		/* not in this process */
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_PREEMPT, 0));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_PREEMPT | UMCG_WAIT_WAKE_ONLY, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, umcg_wait(UMCG_WAIT_PREEMPT, umcg_deadline(1000000)));
	EXPECT_EQ(EINVAL, errno);
	s->task.next_tid = self;
	EXPECT_EQ(0, umcg_unregister());
}

/*
 * UMCG_WAIT_PREEMPT is for servers: a worker's next_tid names its server,
 * not a worker to preempt.  A worker gets EINVAL whatever its next_tid
 * names: its server (which a kick would answer ESRCH, not a worker) or a
 * worker (itself here, which a kick would accept).
 */
static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	long			ret[2];
	int			err[2];
} *pw;

static void *preempting_worker(void *arg)
{
	uint32_t server;

	(void)arg;
	if (umcg_worker_register(&pw->w, &pw->g, NULL))
		return (void *)1;
	server = pw->w.task.next_tid;
	pw->ret[0] = umcg_wait(UMCG_WAIT_PREEMPT, 0);
	pw->err[0] = errno;
	pw->w.task.next_tid = umcg_gettid();
	pw->ret[1] = umcg_wait(UMCG_WAIT_PREEMPT, 0);
	pw->err[1] = errno;
	pw->w.task.next_tid = server;
	umcg_worker_unregister(&pw->w, &pw->g);
	return NULL;
}

TEST(preempt_without_signal_from_a_worker)
{
	struct umcg_worker *w;
	pthread_t t;
	void *ret;

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(pw);
	ASSERT_EQ(0, pthread_create(&t, NULL, preempting_worker, NULL));
	ASSERT_TRUE(umcg_wait_idle_list(&pw->g, 10000));
	w = umcg_take_idle(&pw->g);
	ASSERT_EQ(&pw->w, w);
	ASSERT_EQ(0, umcg_run_until_back(&pw->s, w, 20000000000ULL));
	ASSERT_EQ(0, pthread_join(t, &ret));
	ASSERT_EQ(NULL, ret);
	EXPECT_EQ(-1, pw->ret[0]);
	EXPECT_EQ(EINVAL, pw->err[0]) TH_LOG("next_tid = its server: %s",
					     strerror(pw->err[0]));
	EXPECT_EQ(-1, pw->ret[1]);
	EXPECT_EQ(EINVAL, pw->err[1]) TH_LOG("next_tid = itself: %s",
					     strerror(pw->err[1]));
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK);
	EXPECT_EQ(0, umcg_unregister());
}

/*
 * UMCG_WAIT_PREEMPT interrupts nothing: a worker that blocks every signal
 * and sleeps in epoll_wait() (BLOCKED) when the kick comes sleeps its
 * full timeout and gets 0, not EINTR.  (A kick through TIF_NOTIFY_SIGNAL
 * would end every interruptible sleep of the worker.)
 */
#define SLEEP_MS	500

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			epfd;
	int			ret, err;
	uint64_t		slept_ns;
} *ks;

static void *epoll_worker(void *arg)
{
	struct epoll_event ev;
	sigset_t all;
	uint64_t t0;

	(void)arg;
	sigfillset(&all);
	if (pthread_sigmask(SIG_BLOCK, &all, NULL))
		return (void *)1;
	if (umcg_worker_register(&ks->w, &ks->g, NULL))
		return (void *)2;
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	ks->ret = epoll_wait(ks->epfd, &ev, 1, SLEEP_MS);
	ks->err = errno;
	ks->slept_ns = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	umcg_worker_unregister(&ks->w, &ks->g);
	return NULL;
}

TEST(preempt_without_signal_leaves_sleeping_worker_alone)
{
	struct umcg_worker *w;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(ks);
	ks->epfd = epoll_create1(0);
	ASSERT_LE(0, ks->epfd);
	ASSERT_EQ(0, pthread_create(&t, NULL, epoll_worker, NULL));
	umcg_wait_idle_list(&ks->g, 5000);
	w = umcg_take_idle(&ks->g);
	ASSERT_EQ(&ks->w, w);
	/* Run it: it blocks in epoll_wait(), and the server gets it back. */
	ASSERT_EQ(0, umcg_run_until_back(&ks->s, w, 20000000000ULL));
	ASSERT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK);
	ASSERT_TRUE(umcg_server_settle(&ks->s));
	/* The kick, from this server, while the worker sleeps. */
	ks->s.task.next_tid = w->tid;
	EXPECT_EQ(0, umcg_wait(UMCG_WAIT_PREEMPT, 0));
	ks->s.task.next_tid = 0;
	/* It wakes after its timeout, queued IDLE; run it to the end. */
	for (i = 0; i < 10000 && !(w = umcg_take_idle(&ks->g)); i++)
		usleep(1000);
	ASSERT_EQ(&ks->w, w);
	ASSERT_EQ(0, umcg_run_until_back(&ks->s, w, 20000000000ULL));
	pthread_join(t, NULL);
	TH_LOG("epoll_wait: %d (%s) after %llu ms", ks->ret,
	       ks->ret < 0 ? strerror(ks->err) : "no error",
	       (unsigned long long)ks->slept_ns / 1000000);
	EXPECT_EQ(0, ks->ret);
	EXPECT_LE((uint64_t)(SLEEP_MS - 50) * 1000000, ks->slept_ns);
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
