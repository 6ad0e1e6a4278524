// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/switch: server -> worker switch, worker yield, worker -> worker
 * switch and WAKE_ONLY, checking the state words at every step (item 3).
 */
#include "umcg_test.h"

#include <sys/prctl.h>

struct ctx {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w[2];
	uint32_t		seen_state[2][4];
	uint32_t		seen_next[2][4];
	uint32_t		seen_srv[2][4];
	int			steps[2];
};

static struct ctx *c;

static void note(int i)
{
	int n = c->steps[i]++;

	c->seen_state[i][n] = umcg_task_state(&c->w[i].task);
	c->seen_next[i][n] = c->w[i].task.next_tid;
	c->seen_srv[i][n] = umcg_task_state(&c->s.task);
}

static void *yield_worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w[0], &c->g, NULL))
		return (void *)1;
	note(0);			/* first run */
	umcg_worker_yield(&c->w[0]);
	note(0);			/* second run */
	umcg_worker_unregister(&c->w[0], &c->g);
	return NULL;
}

static int wait_idle_list(struct umcg_group *g, int n)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) + 10000000000ULL;
	int cnt;

	do {
		struct umcg_worker *w =
			(void *)(uintptr_t)__atomic_load_n(&g->idle_workers,
							   __ATOMIC_SEQ_CST);
		for (cnt = 0; w; w = umcg_idle_next(w))
			cnt++;
		if (cnt >= n)
			return cnt;
		usleep(1000);
	} while (umcg_now_ns(CLOCK_MONOTONIC) < end);
	return cnt;
}

TEST(server_worker_switch_and_yield)
{
	pthread_t t;
	struct umcg_worker *w;
	pid_t me = umcg_gettid();

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(c);
	ASSERT_EQ(UMCG_TASK_RUNNING, umcg_task_state(&c->s.task));

	ASSERT_EQ(0, pthread_create(&t, NULL, yield_worker, NULL));
	/* The registering worker is IDLE on the idle list. */
	ASSERT_EQ(1, wait_idle_list(&c->g, 1));
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w[0], w);
	EXPECT_EQ(NULL, umcg_idle_next(w));
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task));
	EXPECT_EQ(0, w->task.next_tid);

	/* server -> worker; the worker yields back */
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	EXPECT_EQ(UMCG_TASK_RUNNING, umcg_task_state(&c->s.task));
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF,
		  umcg_task_state(&w->task));
	ASSERT_EQ(1, c->steps[0]);
	EXPECT_EQ(UMCG_TASK_RUNNING, c->seen_state[0][0]);
	EXPECT_EQ((uint32_t)me, c->seen_next[0][0]);
	EXPECT_EQ(UMCG_TASK_IDLE, c->seen_srv[0][0]);
	/* nothing was pushed onto the idle list by a yield */
	EXPECT_EQ(0, c->g.idle_workers);

	/* run it again; it unregisters: NONE, and the server wakes */
	EXPECT_TRUE(umcg_server_settle(&c->s));
	w = umcg_rq_pop(&c->s);
	ASSERT_EQ(&c->w[0], w);
	/* still claimed for the server by its yield */
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF,
		  umcg_task_state(&w->task));
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	ASSERT_EQ(2, c->steps[0]);
	EXPECT_EQ(UMCG_TASK_RUNNING, c->seen_state[0][1]);
	EXPECT_EQ(UMCG_TASK_IDLE, c->seen_srv[0][1]);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	EXPECT_EQ(UMCG_TASK_RUNNING, umcg_task_state(&c->s.task));
	pthread_join(t, NULL);
	EXPECT_EQ(0, umcg_unregister());
}

static void *swap_worker(void *arg)
{
	int i = (int)(uintptr_t)arg;

	if (umcg_worker_register(&c->w[i], &c->g, NULL))
		return (void *)1;
	note(i);
	if (i == 0) {
		/* A: switch to B, which is IDLE and owned by the server */
		umcg_worker_switch(&c->w[0], &c->w[1]);
		note(0);
	} else {
		/* B: runs in A's place; give the server back */
		umcg_worker_yield(&c->w[1]);
		note(1);
	}
	umcg_worker_unregister(&c->w[i], &c->g);
	return NULL;
}

TEST(worker_worker_switch)
{
	pthread_t t[2];
	struct umcg_worker *w, *a = NULL;
	pid_t me = umcg_gettid();

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(c);
	ASSERT_EQ(0, pthread_create(&t[0], NULL, swap_worker, (void *)0));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, swap_worker, (void *)1));
	ASSERT_EQ(2, wait_idle_list(&c->g, 2));
	for (w = umcg_take_idle(&c->g); w; w = umcg_idle_next(w))
		if (w == &c->w[0])
			a = w;
	ASSERT_EQ(&c->w[0], a);

	/* run A; A switches to B; B yields: the server wakes with B */
	ASSERT_EQ(0, umcg_run_worker(&c->s, a, 0));
	EXPECT_EQ(&c->w[1], c->s.current);
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF,
		  umcg_task_state(&c->w[1].task));
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&c->w[0].task));
	EXPECT_EQ((uint32_t)c->w[1].tid, c->w[0].task.next_tid);
	ASSERT_EQ(1, c->steps[1]);
	EXPECT_EQ(UMCG_TASK_RUNNING, c->seen_state[1][0]);
	EXPECT_EQ((uint32_t)me, c->seen_next[1][0]);
	/* the server slept through the worker -> worker switch */
	EXPECT_EQ(UMCG_TASK_IDLE, c->seen_srv[1][0]);
	EXPECT_EQ(1, c->steps[0]);

	/* the server's queue now holds A (pushed by A), then B */
	EXPECT_TRUE(umcg_server_settle(&c->s));
	w = umcg_rq_pop(&c->s);
	ASSERT_EQ(&c->w[0], w);
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	EXPECT_EQ(2, c->steps[0]);
	EXPECT_EQ(UMCG_TASK_RUNNING, c->seen_state[0][1]);
	EXPECT_EQ((uint32_t)me, c->seen_next[0][1]);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&c->w[0].task));
	EXPECT_TRUE(umcg_server_settle(&c->s));
	w = umcg_rq_pop(&c->s);
	ASSERT_EQ(&c->w[1], w);
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	EXPECT_EQ(2, c->steps[1]);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&c->w[1].task));
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	EXPECT_EQ(0, umcg_unregister());
}

static struct umcg_task *wk_task;
static uint32_t wk_ret = 99, wk_state, wk_tid;

static void *wake_only_sleeper(void *arg)
{
	long ret;

	(void)arg;
	wk_task->state = UMCG_TASK_RUNNING;
	if (umcg_ctl(UMCG_CTL_REGISTER, wk_task))
		return (void *)1;
	__atomic_store_n(&wk_tid, umcg_gettid(), __ATOMIC_SEQ_CST);
	__atomic_store_n(&wk_task->state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	ret = umcg_wait(0, 0);
	wk_ret = ret ? errno : 0;
	wk_state = umcg_task_state(wk_task);
	umcg_ctl(UMCG_CTL_UNREGISTER, NULL);
	return NULL;
}

TEST(wake_only)
{
	struct umcg_task *me;
	pthread_t t;
	int flags;

	UMCG_REQUIRE();
	me = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, me);
	wk_task = (void *)((char *)me + 2048);
	me->state = UMCG_TASK_RUNNING;
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, me));

	for (flags = 0; flags < 2; flags++) {
		memset(wk_task, 0, sizeof(*wk_task));
		wk_ret = 99;
		wk_tid = 0;
		ASSERT_EQ(0, pthread_create(&t, NULL, wake_only_sleeper, NULL));
		ASSERT_TRUE(umcg_poll_eq(&wk_task->state, ~0U, UMCG_TASK_IDLE,
					 5000));
		usleep(50000);
		/* asleep in umcg_wait() */
		EXPECT_EQ(99, wk_ret);

		/* a WAKE_ONLY while it is still IDLE: it sleeps on */
		me->next_tid = wk_tid;
		ASSERT_EQ(0, umcg_wait(UMCG_WAIT_WAKE_ONLY, 0));
		usleep(50000);
		EXPECT_EQ(99, wk_ret);
		EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(wk_task));

		/* the waker makes it RUNNING (the initiator writes), wakes it */
		__atomic_store_n(&wk_task->state, UMCG_TASK_RUNNING,
				 __ATOMIC_SEQ_CST);
		ASSERT_EQ(0, umcg_wait(UMCG_WAIT_WAKE_ONLY |
				       (flags ? UMCG_WAIT_WF_CURRENT_CPU : 0), 0));
		/* WAKE_ONLY did not put the caller to sleep or change it */
		EXPECT_EQ(UMCG_TASK_RUNNING, umcg_task_state(me));
		pthread_join(t, NULL);
		EXPECT_EQ(0, wk_ret);
		EXPECT_EQ(UMCG_TASK_RUNNING, wk_state);
	}
	EXPECT_EQ(0, umcg_unregister());
}

#define PINGS	300

static void *ping_worker(void *arg)
{
	int i;

	(void)arg;
	if (umcg_worker_register(&c->w[1], &c->g, NULL))
		return (void *)1;
	for (i = 0; i < PINGS; i++)
		if (umcg_worker_yield(&c->w[1]))
			return (void *)2;
	umcg_worker_unregister(&c->w[1], &c->g);
	return NULL;
}

static long ctxt_switches(pid_t tid, const char *key)
{
	char buf[64];

	if (!umcg_task_status(getpid(), tid, key, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/* One CPU for the caller (and the threads it creates); its number. */
static int pin_here(void)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? -1 : cpu;
}

static int pin_tid(pid_t tid, int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(tid, sizeof(one), &one);
}

/*
 * umcg_switch_to() (patch 10) wakes the worker itself, under this CPU's
 * runqueue lock, or falls back to try_to_wake_up(): counted per caller.
 */
#define SWITCH_FN	"umcg_switch_to"
#define FALLBACK_FN	"try_to_wake_up"

/*
 * With the function tracer (debug): the server's calls of umcg_switch_to()
 * and of try_to_wake_up() while a test's runs go on, and of @extra_fn if
 * it is given.
 */
struct path_count {
	int		traced, switches, fallbacks, extra;
	int		switch_fallbacks;	/* try_to_wake_up <-umcg_switch_to */
	const char	*extra_fn;
};

static int path_count_start(struct path_count *pc, const char *extra_fn)
{
	char fns[128];

	pc->traced = kconfig_enabled("CONFIG_FUNCTION_TRACER") == 1;
	pc->switches = pc->fallbacks = pc->extra = -1;
	pc->extra_fn = extra_fn;
	snprintf(fns, sizeof(fns), SWITCH_FN " " FALLBACK_FN " %s",
		 extra_fn ? extra_fn : "");
	/* With the function tracer it must work: a typo is no skip. */
	return pc->traced ? umcg_ftrace_start(fns) : 0;
}

static void path_count_stop(struct path_count *pc, pid_t server)
{
	if (!pc->traced)
		return;
	pc->switches = umcg_ftrace_count(SWITCH_FN, server);
	pc->fallbacks = umcg_ftrace_count(FALLBACK_FN, server);
	pc->switch_fallbacks = umcg_ftrace_count_from(FALLBACK_FN, SWITCH_FN,
						      server);
	if (pc->extra_fn)
		pc->extra = umcg_ftrace_count(pc->extra_fn, server);
	umcg_ftrace_off();
}

/*
 * A server that runs a worker on its own CPU switches to it: the worker is
 * woken and run in one step, and the server blocks (a voluntary context
 * switch).  With a plain wakeup followed by a sleep, a preemptible kernel
 * (debug) let the woken worker preempt the server first, an involuntary
 * switch for every run.  Only the server and its worker share the CPU, so
 * nothing else preempts the server either.
 */
TEST(switch_on_one_cpu_is_voluntary)
{
	long v0, v1, iv0, iv1;
	struct path_count pc;
	struct umcg_worker *w;
	pid_t me = umcg_gettid();
	void *ret;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	ASSERT_LE(0, pin_here());
	UMCG_TEST_SERVER(c);
	/* the worker inherits the server's one CPU */
	ASSERT_EQ(0, pthread_create(&t, NULL, ping_worker, NULL));
	ASSERT_EQ(1, wait_idle_list(&c->g, 1));
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w[1], w);

	ASSERT_EQ(0, path_count_start(&pc, NULL));
	v0 = ctxt_switches(me, "voluntary_ctxt_switches");
	iv0 = ctxt_switches(me, "nonvoluntary_ctxt_switches");
	ASSERT_LE(0, v0);
	ASSERT_LE(0, iv0);
	for (i = 0; i < PINGS; i++) {
		ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
		ASSERT_TRUE(umcg_server_settle(&c->s));
		w = umcg_rq_pop(&c->s);
		ASSERT_EQ(&c->w[1], w);
	}
	v1 = ctxt_switches(me, "voluntary_ctxt_switches");
	iv1 = ctxt_switches(me, "nonvoluntary_ctxt_switches");
	path_count_stop(&pc, me);
	/* the last run: the worker unregisters */
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	ASSERT_EQ(0, pthread_join(t, &ret));
	EXPECT_EQ(NULL, ret);
	EXPECT_EQ(0, umcg_unregister());
	TH_LOG("%d runs: %ld voluntary, %ld involuntary context switches of the server",
	       PINGS, v1 - v0, iv1 - iv0);
	/* the server blocked for each run... */
	EXPECT_LE(PINGS, v1 - v0);
	/* ...and was not preempted by the worker it woke (a tick may) */
	EXPECT_GT(PINGS / 20, iv1 - iv0);
	/*
	 * ...through the fused wake: on a kernel without PREEMPT a plain
	 * wakeup and schedule() pass the two checks above as well, so count
	 * the fused path (with the function tracer, in debug).
	 */
	if (!pc.traced) {
		TH_LOG("no function tracer: the fused wake is not counted here");
		return;
	}
	TH_LOG("%d runs: %d umcg_switch_to(), %d try_to_wake_up() by the server, %d of them from umcg_switch_to()",
	       PINGS, pc.switches, pc.fallbacks, pc.switch_fallbacks);
	ksft_print_msg("metric: umcg_fused_wakes_per_run=%.2f\n",
		       (double)(pc.switches - pc.switch_fallbacks) / PINGS);
	/*
	 * Every run goes through umcg_switch_to(), and here, where the
	 * fast path's conditions hold (the worker sleeps on this CPU, in
	 * the fair class, allowed here), none falls back: each path is
	 * counted by its caller, so the server's other wakeups (a timer's
	 * work, say) count for neither.
	 */
	EXPECT_LE(PINGS, pc.switches);
	EXPECT_EQ(0, pc.switch_fallbacks);
}

/*
 * Patch 10's fallback, its delayed-dequeue branch and races with it.  A
 * worker that records the CPU and policy it runs with (run i in slot
 * i % RUNS) and, before each yield, spins for fc->spin_ns (so that it has
 * used more than its share when it sleeps), until it is told to leave.
 */
#define RUNS	200

static struct {
	struct umcg_group	g;
	struct umcg_server	s, k;	/* k: the storm's second server */
	struct umcg_worker	w;
	uint64_t		spin_ns;
	int			policy[RUNS];
	int			cpu[RUNS];
	int			hog_stop;
	int			quit;		/* leave at the next run */
	int			storm_stop, storm_cpu;
	long			wakes, kills;
} *fc;

static void *cpu_worker(void *arg)
{
	int i;

	(void)arg;
	if (umcg_worker_register(&fc->w, &fc->g, NULL))
		return (void *)1;
	for (i = 0; ; i++) {
		fc->cpu[i % RUNS] = sched_getcpu();
		fc->policy[i % RUNS] = sched_getscheduler(0);
		umcg_spin_ns(fc->spin_ns);
		if (__atomic_load_n(&fc->quit, __ATOMIC_SEQ_CST))
			break;
		if (umcg_worker_yield(&fc->w))
			return (void *)2;
	}
	umcg_worker_unregister(&fc->w, &fc->g);
	return NULL;
}

/* Run fc->w once, to its next yield; 0 or a negative errno. */
static int run_once(struct umcg_worker **w)
{
	int ret = umcg_run_worker(&fc->s, *w, umcg_deadline(20000000000ULL));

	if (ret)
		return ret;
	while (!umcg_server_settle(&fc->s)) {
		ret = umcg_server_wait_current(&fc->s,
					       umcg_deadline(20000000000ULL));
		if (ret)
			return ret;
	}
	*w = umcg_rq_pop(&fc->s);
	return *w == &fc->w ? 0 : -EPROTO;
}

/* Start fc's worker on the caller's CPUs and take it off the idle list. */
static struct umcg_worker *start_cpu_worker(pthread_t *t)
{
	if (pthread_create(t, NULL, cpu_worker, NULL) ||
	    !umcg_wait_idle_list(&fc->g, 10000))
		return NULL;
	return umcg_take_idle(&fc->g);
}

/* The last run: the worker leaves (also before its RUNS runs). */
static void *finish_cpu_worker(struct umcg_worker *w, pthread_t t)
{
	void *ret = (void *)-1;

	__atomic_store_n(&fc->quit, 1, __ATOMIC_SEQ_CST);
	if (!umcg_run_worker(&fc->s, w, umcg_deadline(20000000000ULL)))
		pthread_join(t, &ret);
	return ret;
}

/*
 * The worker leaves; every run switched, and at least @fell_back of them
 * fell back to try_to_wake_up().
 */
static void finish_fallback_runs(struct __test_metadata *_metadata,
				 struct umcg_worker *w, pthread_t t,
				 struct path_count *pc, int fell_back)
{
	EXPECT_EQ(NULL, finish_cpu_worker(w, t));
	EXPECT_EQ(0, umcg_unregister());
	if (!pc->traced)
		return;
	TH_LOG("%d runs: %d umcg_switch_to(), %d try_to_wake_up() by the server",
	       RUNS, pc->switches, pc->fallbacks);
	EXPECT_LE(RUNS, pc->switches);
	EXPECT_LE(fell_back, pc->fallbacks);
}

/*
 * A worker that last ran on the server's CPU but may no longer run there
 * (its affinity changed while it slept) must not be woken there:
 * umcg_wake_here() leaves it to try_to_wake_up(), which moves it.  The
 * runs alternate between the other CPU (the worker's last CPU is the
 * server's, not allowed) and the server's (the worker's last CPU is the
 * other one): the worker always runs where its affinity says, and every
 * run to the other CPU falls back.  (A run to the server's CPU need not:
 * the worker may be on the server's CPU already when it is woken, and
 * may run there; 191 fallbacks in 200 runs were seen in debug.)
 */
TEST(fallback_for_a_worker_that_may_not_run_here)
{
	pid_t me = umcg_gettid();
	struct path_count pc;
	int here, there;
	struct umcg_worker *w;
	pthread_t t;
	int i, target;

	UMCG_REQUIRE();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: no other CPU to move the worker to");
	here = pin_here();
	ASSERT_LE(0, here);
	there = here ? 0 : 1;
	UMCG_TEST_SERVER(fc);
	w = start_cpu_worker(&t);
	ASSERT_EQ(&fc->w, w);

	ASSERT_EQ(0, path_count_start(&pc, NULL));
	for (i = 0; i < RUNS; i++) {
		target = i % 2 ? here : there;
		ASSERT_EQ(0, pin_tid(w->tid, target));
		ASSERT_EQ(0, run_once(&w));
		ASSERT_EQ(target, fc->cpu[i]) TH_LOG("run %d: on CPU %d, allowed only %d",
						   i, fc->cpu[i], target);
	}
	path_count_stop(&pc, me);
	finish_fallback_runs(_metadata, w, t, &pc, RUNS / 2);
}

/*
 * A SCHED_FIFO worker is not woken by umcg_wake_here() (fair class only:
 * an RT wakee may have to be pushed to another CPU): it falls back to
 * try_to_wake_up(), and runs, as SCHED_FIFO, each time.
 */
TEST(fallback_for_a_realtime_worker)
{
	struct sched_param fifo = { .sched_priority = 1 };
	pid_t me = umcg_gettid();
	struct path_count pc;
	struct umcg_worker *w;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	ASSERT_LE(0, pin_here());
	UMCG_TEST_SERVER(fc);
	w = start_cpu_worker(&t);
	ASSERT_EQ(&fc->w, w);
	ASSERT_EQ(0, sched_setscheduler(w->tid, SCHED_FIFO, &fifo))
		TH_LOG("sched_setscheduler: %s", strerror(errno));

	ASSERT_EQ(0, path_count_start(&pc, NULL));
	for (i = 0; i < RUNS; i++) {
		ASSERT_EQ(0, run_once(&w));
		ASSERT_EQ(SCHED_FIFO, fc->policy[i]);
	}
	path_count_stop(&pc, me);
	/* never the fast path: every run falls back */
	finish_fallback_runs(_metadata, w, t, &pc, RUNS);
}

static void *hog(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&fc->hog_stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* umcg_wake_here()'s delayed-dequeue branch, counted by the tracer. */
#define REQUEUE_FN	"requeue_delayed_entity"

static void runs_beside_a_hog(struct __test_metadata *_metadata, bool core)
{
	unsigned long long cookie = 0;
	struct path_count pc;
	pid_t me = umcg_gettid();
	struct umcg_worker *w;
	pthread_t t, h;
	int i;

	UMCG_REQUIRE();
	ASSERT_LE(0, pin_here());
	if (core && prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0,
			  PR_SCHED_CORE_SCOPE_THREAD_GROUP, 0)) {
		if (errno == ENODEV)
			SKIP(return, "no SMT siblings: core scheduling does not start (debug boots on two SMT threads)");
		ASSERT_EQ(EINVAL, errno) TH_LOG("PR_SCHED_CORE_CREATE: %s",
						strerror(errno));
		SKIP(return, "no core scheduling in this kernel (CONFIG_SCHED_CORE not set)");
	}
	UMCG_TEST_SERVER(fc);
	fc->spin_ns = 2000000;
	w = start_cpu_worker(&t);
	ASSERT_EQ(&fc->w, w);
	ASSERT_EQ(0, pthread_create(&h, NULL, hog, NULL));
	/*
	 * The threads created since share the process's cookie (fork copies
	 * it).  The cookie's value is not checked: PR_SCHED_CORE_GET gives a
	 * hash of it, which reads 0 until the kernel's pointer-hashing key is
	 * ready, and a guest without a random device may never get there.
	 */
	if (core)
		ASSERT_EQ(0, prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, w->tid,
				   PR_SCHED_CORE_SCOPE_THREAD, &cookie));

	ASSERT_EQ(0, path_count_start(&pc, REQUEUE_FN));
	for (i = 0; i < RUNS; i++)
		ASSERT_EQ(0, run_once(&w)) TH_LOG("run %d", i);
	path_count_stop(&pc, me);
	__atomic_store_n(&fc->hog_stop, 1, __ATOMIC_RELAXED);
	pthread_join(h, NULL);
	EXPECT_EQ(NULL, finish_cpu_worker(w, t));
	EXPECT_EQ(0, umcg_unregister());
	if (!pc.traced)
		return;
	TH_LOG("%d runs beside a hog%s: %d switches, %d of them requeued a delayed worker, %d try_to_wake_up() by the server",
	       RUNS, core ? ", core scheduling on" : "", pc.switches, pc.extra,
	       pc.fallbacks);
	if (!core)
		ksft_print_msg("metric: umcg_delayed_requeues=%d\n", pc.extra);
	EXPECT_LE(RUNS, pc.switches);
	/*
	 * The requeues were umcg_wake_here()'s: try_to_wake_up() requeues a
	 * delayed task too (ttwu_runnable()), so it must not have run them.
	 */
	EXPECT_LT(0, pc.extra) TH_LOG("the delayed-dequeue branch never ran");
	EXPECT_GT(RUNS / 2, pc.fallbacks);
	/* (each fallback requeues at most once) */
	EXPECT_GT(pc.extra, pc.fallbacks);
}

/*
 * A worker that yields after using more than its share of a CPU that a
 * hog shares with it is not eligible when it sleeps: EEVDF's delayed
 * dequeue leaves it queued (sched_delayed) until it is picked.  When its
 * server switches to it before that, umcg_wake_here() must requeue it
 * (ENQUEUE_DELAYED, as ttwu_runnable() does): woken without that, it
 * would be dequeued as it is picked, TASK_RUNNING but off the runqueue,
 * and never run again.  With the function tracer (debug) the branch is
 * counted (requeue_delayed_entity() by the server).
 */
TEST(switch_to_a_delayed_worker)
{
	runs_beside_a_hog(_metadata, false);
}

/*
 * The same with core scheduling turned on for the process
 * (PR_SCHED_CORE): every enqueue and dequeue of the wake path, the
 * delayed one too, also updates the core-wide tree of cookied tasks, and
 * the pick goes through the core-wide pick (debug has CONFIG_SCHED_CORE).
 */
TEST(switch_under_core_scheduling)
{
	runs_beside_a_hog(_metadata, true);
}

/*
 * The accounting of the wake path with everything debug has switched on:
 * the worker in a cgroup with the cpu controller (group scheduling's
 * hierarchy of entities), with utilization clamps (uclamp's per-rq
 * buckets, updated on every enqueue and dequeue), and schedstats enabled
 * (schedstats=enable: ttwu_stat() counts each wakeup of the worker as
 * local, whichever path woke it).
 */
#define CG_SW_ROOT	"/tmp/umcg-cgroup2-switch"
#define CG_SW		CG_SW_ROOT "/switch"

/* struct sched_attr (<linux/sched/types.h>) and its flags (<linux/sched.h>
 * clashes with glibc's <sched.h>). */
struct umcg_sched_attr {
	uint32_t	size, sched_policy;
	uint64_t	sched_flags;
	int32_t		sched_nice;
	uint32_t	sched_priority;
	uint64_t	sched_runtime, sched_deadline, sched_period;
	uint32_t	sched_util_min, sched_util_max;
};
#define UMCG_SCHED_FLAG_KEEP_ALL	0x18
#define UMCG_SCHED_FLAG_UTIL_CLAMP	0x60

/* A field of /proc/self/task/@tid/sched ("key   :   value"); -1 if absent. */
static long task_sched_field(pid_t tid, const char *key)
{
	char path[64], line[256];
	size_t len = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/sched", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && (line[len] == ' ' || line[len] == ':')) {
			v = atol(strchr(line, ':') + 1);
			break;
		}
	fclose(f);
	return v;
}

TEST(switch_accounted_with_uclamp_in_a_cpu_cgroup)
{
	struct umcg_sched_attr attr = {
		.size = sizeof(attr),
		.sched_flags = UMCG_SCHED_FLAG_KEEP_ALL | UMCG_SCHED_FLAG_UTIL_CLAMP,
		.sched_util_min = 256,
		.sched_util_max = 768,
	};
	long local0, local1, umin;
	char pid[32];
	struct umcg_worker *w;
	pthread_t t;
	int i, err;

	UMCG_REQUIRE();
	ASSERT_LE(0, pin_here());
	err = umcg_cgroup_mount(CG_SW_ROOT, CG_SW);
	if (err == ENODEV)
		SKIP(return, "no cgroup v2 in this kernel");
	ASSERT_EQ(0, err) TH_LOG("cgroup2 at " CG_SW ": %s", strerror(err));
	err = umcg_write_file(CG_SW_ROOT "/cgroup.subtree_control", "+cpu");
	if (err) {
		umcg_cgroup_umount(CG_SW_ROOT, CG_SW);
		ASSERT_EQ(-EINVAL, err) TH_LOG("+cpu: %s", strerror(-err));
		SKIP(return, "no cpu controller (CONFIG_CGROUP_SCHED not set)");
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	ASSERT_EQ(0, umcg_write_file(CG_SW "/cgroup.procs", pid));

	UMCG_TEST_SERVER(fc);
	w = start_cpu_worker(&t);
	ASSERT_EQ(&fc->w, w);
	if (syscall(SYS_sched_setattr, w->tid, &attr, 0)) {
		ASSERT_EQ(EOPNOTSUPP, errno) TH_LOG("sched_setattr: %s", strerror(errno));
		SKIP(goto out, "no utilization clamping (CONFIG_UCLAMP_TASK not set)");
	}
	umin = task_sched_field(w->tid, "uclamp.min");
	EXPECT_EQ(256, umin);
	local0 = task_sched_field(w->tid, "nr_wakeups_local");
	if (local0 < 0)
		SKIP(goto out, "no schedstats (CONFIG_SCHEDSTATS, schedstats=enable)");
	for (i = 0; i < RUNS; i++)
		ASSERT_EQ(0, run_once(&w)) TH_LOG("run %d", i);
	local1 = task_sched_field(w->tid, "nr_wakeups_local");
	TH_LOG("%d runs in a cpu cgroup, uclamp.min %ld: the worker's local wakeups %ld -> %ld",
	       RUNS, umin, local0, local1);
	/* every run woke it on this CPU */
	EXPECT_LE(RUNS, local1 - local0);
out:
	EXPECT_EQ(NULL, finish_cpu_worker(w, t));
	EXPECT_EQ(0, umcg_unregister());
	EXPECT_EQ(0, umcg_write_file(CG_SW_ROOT "/cgroup.procs", pid));
	EXPECT_EQ(0, umcg_write_file(CG_SW_ROOT "/cgroup.subtree_control", "-cpu"));
	EXPECT_EQ(0, umcg_cgroup_umount(CG_SW_ROOT, CG_SW));
}

/*
 * The wake window under fire: while the server switches to its worker on
 * one CPU, a second server on the other CPU keeps waking the worker with
 * UMCG_WAIT_WAKE_ONLY, and a third thread there sends it signals
 * (tgkill).  Those wakeups race umcg_wake_here(): a worker that such a
 * wakeup has made TASK_WAKING, or queued already, must be left to it - a
 * second activation would enqueue the worker twice (lockdep, KASAN and the
 * list debugging of debug report that; elsewhere it would hang or crash).
 * Every run must complete, the signals are handled (when the worker runs:
 * park.c tests that), and the kernel reports nothing.
 *
 * A signal races only if it wakes the waiting worker: until round 4 a
 * waiting worker blocked every catchable signal, so the tgkill half woke
 * nothing.  A worker now blocks them only once a signal interrupts its
 * wait, so the first signal of each wait wakes it: the sched_waking
 * events of the worker that the signalling thread causes are counted, and
 * there must be some.
 */
#define STORM_RUNS	500
#define WAKING_EV	"events/sched/sched_waking/"

static long storm_handled;

static void storm_handler(int sig)
{
	(void)sig;
	__atomic_add_fetch(&storm_handled, 1, __ATOMIC_RELAXED);
}

static void *stormer(void *arg)
{
	(void)arg;
	if (pin_tid(0, fc->storm_cpu) || umcg_server_register(&fc->k, &fc->g))
		return (void *)1;
	fc->k.task.next_tid = fc->w.tid;
	while (!__atomic_load_n(&fc->storm_stop, __ATOMIC_RELAXED))
		if (!umcg_wait(UMCG_WAIT_WAKE_ONLY, 0))
			fc->wakes++;
	fc->k.task.next_tid = 0;
	umcg_unregister();
	return NULL;
}

static void *killer(void *arg)
{
	__atomic_store_n((pid_t *)arg, umcg_gettid(), __ATOMIC_SEQ_CST);
	if (pin_tid(0, fc->storm_cpu))
		return (void *)1;
	while (!__atomic_load_n(&fc->storm_stop, __ATOMIC_RELAXED)) {
		if (!syscall(SYS_tgkill, getpid(), fc->w.tid, SIGUSR1))
			fc->kills++;
		sched_yield();
	}
	return NULL;
}

/* Trace the worker's wakeups that @waker causes; false if it cannot. */
static bool waking_watch_start(pid_t worker, pid_t waker)
{
	char filter[96];

	snprintf(filter, sizeof(filter), "pid == %d && common_pid == %d",
		 (int)worker, (int)waker);
	umcg_tracefs_put("tracing_on", "0", 0);
	return !umcg_tracefs_put(WAKING_EV "filter", filter, 1) &&
	       !umcg_tracefs_put("trace", "", 1) &&
	       !umcg_tracefs_put(WAKING_EV "enable", "1", 0) &&
	       !umcg_tracefs_put("tracing_on", "1", 0);
}

/* The sched_waking events traced so far, -1 on error; tracing goes on. */
static int waking_watch_count(void)
{
	char line[512];
	int n = 0;
	FILE *f;

	f = fopen(UMCG_TRACEFS "/trace", "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (line[0] != '#' && strstr(line, "sched_waking:"))
				n++;
		fclose(f);
	} else {
		n = -1;
	}
	return n;
}

/* The sched_waking events traced (tracing stops), -1 on error. */
static int waking_watch_stop(void)
{
	int n;

	umcg_tracefs_put("tracing_on", "0", 0);
	n = waking_watch_count();
	umcg_tracefs_put(WAKING_EV "enable", "0", 0);
	umcg_tracefs_put(WAKING_EV "filter", "0", 1);
	umcg_tracefs_put("trace", "", 1);
	return n;
}

/*
 * A signal wakes the waiting worker in only a few runs of 500 (about 5 in
 * one run of the suite): the storm goes on, 500 runs at a time, until the
 * signals woke the worker STORM_WAKEUPS times, or for STORM_CAP_S.
 */
#define STORM_WAKEUPS	3
#define STORM_CAP_S	60

TEST(switch_under_wake_and_signal_storm)
{
	struct sigaction sa = { .sa_handler = storm_handler };
	pid_t killer_tid = 0;
	struct umcg_worker *w;
	pthread_t t, k, s;
	void *ret;
	int here, i, runs = 0, signal_wakeups = 0;
	uint64_t t0;

	UMCG_REQUIRE();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: nothing races the switch");
	here = pin_here();
	ASSERT_LE(0, here);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	UMCG_TEST_SERVER(fc);
	fc->storm_cpu = here ? 0 : 1;
	w = start_cpu_worker(&t);
	ASSERT_EQ(&fc->w, w);
	ASSERT_EQ(0, pthread_create(&k, NULL, stormer, NULL));
	ASSERT_EQ(0, pthread_create(&s, NULL, killer, &killer_tid));
	for (i = 0; i < 20000 && !__atomic_load_n(&killer_tid, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_NE(0, killer_tid);
	/* The event and common_pid filters are in every variant's tracing. */
	ASSERT_TRUE(waking_watch_start(w->tid, killer_tid));

	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	do {
		for (i = 0; i < STORM_RUNS; i++, runs++)
			ASSERT_EQ(0, run_once(&w)) TH_LOG("run %d", runs);
		signal_wakeups = waking_watch_count();
		ASSERT_LE(0, signal_wakeups);
	} while (signal_wakeups < STORM_WAKEUPS &&
		 umcg_now_ns(CLOCK_MONOTONIC) - t0 < STORM_CAP_S * 1000000000ULL);
	signal_wakeups = waking_watch_stop();
	__atomic_store_n(&fc->storm_stop, 1, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(k, &ret));
	ASSERT_EQ(NULL, ret);
	ASSERT_EQ(0, pthread_join(s, &ret));
	ASSERT_EQ(NULL, ret);
	EXPECT_EQ(NULL, finish_cpu_worker(w, t));
	EXPECT_EQ(0, umcg_unregister());
	TH_LOG("%d runs in %llu ms under %ld WAKE_ONLY calls and %ld signals (%ld handled); the signals woke the waiting worker %d times (wanted %d, cap %d s)",
	       runs, (unsigned long long)((umcg_now_ns(CLOCK_MONOTONIC) - t0) / 1000000),
	       fc->wakes, fc->kills, storm_handled, signal_wakeups,
	       STORM_WAKEUPS, STORM_CAP_S);
	EXPECT_LT(0, fc->wakes);
	EXPECT_LT(0, storm_handled);
	EXPECT_LE(STORM_WAKEUPS, signal_wakeups)
		TH_LOG("the signals woke the waiting worker %d times in %d s: the tgkill half hardly raced",
		       signal_wakeups, STORM_CAP_S);
}

TEST_HARNESS_MAIN
