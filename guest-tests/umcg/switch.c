// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/switch: server -> worker switch, worker yield, worker -> worker
 * switch and WAKE_ONLY, checking the state words at every step (item 3).
 */
#include "umcg_test.h"

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

/*
 * umcg_switch_to() (patch 10) wakes the worker itself, under this CPU's
 * runqueue lock, or falls back to try_to_wake_up(): counted per caller.
 */
#define SWITCH_FN	"umcg_switch_to"
#define FALLBACK_FN	"try_to_wake_up"

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
	int traced, switches = -1, fallbacks = -1;
	struct umcg_worker *w;
	pid_t me = umcg_gettid();
	cpu_set_t one;
	void *ret;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	UMCG_TEST_SERVER(c);
	/* the worker inherits the server's one CPU */
	ASSERT_EQ(0, pthread_create(&t, NULL, ping_worker, NULL));
	ASSERT_EQ(1, wait_idle_list(&c->g, 1));
	w = umcg_take_idle(&c->g);
	ASSERT_EQ(&c->w[1], w);

	/* With the function tracer (debug) it must work: a typo is no skip. */
	traced = kconfig_enabled("CONFIG_FUNCTION_TRACER") == 1;
	if (traced)
		ASSERT_EQ(0, umcg_ftrace_start(SWITCH_FN " " FALLBACK_FN));
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
	if (traced) {
		switches = umcg_ftrace_count(SWITCH_FN, me);
		fallbacks = umcg_ftrace_count(FALLBACK_FN, me);
		umcg_ftrace_off();
	}
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
	if (!traced) {
		TH_LOG("no function tracer: the fused wake is not counted here");
		return;
	}
	TH_LOG("%d runs: %d umcg_switch_to(), %d try_to_wake_up() by the server",
	       PINGS, switches, fallbacks);
	ksft_print_msg("metric: umcg_fused_wakes_per_run=%.2f\n",
		       (double)(switches - fallbacks) / PINGS);
	/*
	 * Every run goes through umcg_switch_to(), and none falls back to
	 * try_to_wake_up() (0 of 300 in debug): a fast path that silently
	 * falls back counts one per run.  Half leaves room for the odd
	 * wakeup of something else.
	 */
	EXPECT_LE(PINGS, switches);
	EXPECT_GT(PINGS / 2, fallbacks);
}

TEST_HARNESS_MAIN
