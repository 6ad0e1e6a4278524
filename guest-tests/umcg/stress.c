// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/stress: 2 servers, 64 workers, 100000 switches with random
 * blocking: every worker completes, the counts add up, no worker is lost
 * or run twice at the same time (item 5).
 *
 * No step polls: idle servers sleep until the kernel (a worker on the idle
 * list) or another server wakes them (libumcg's umcg_server_loop()), so a
 * lost wakeup hangs the test instead of only slowing it down.  And the rate
 * of server -> worker runs must reach MIN_RATIO of the rate of futex
 * wake/wait round trips measured in the same run (issue 9).
 */
#include <linux/futex.h>

#include "umcg_test.h"

#define NR_SERVERS	2
#define NR_WORKERS	64
#define NR_SWITCHES	100000

struct wdata {
	int		id;
	int		running;	/* 1 while it runs: never 2 */
	uint64_t	iters;
	uint32_t	seed;
	int		done;
};

static struct {
	struct umcg_group	g;
	struct umcg_server	s[NR_SERVERS];
	struct umcg_worker	w[NR_WORKERS];
	struct wdata		d[NR_WORKERS];
	int			active;		/* workers running now */
	int			max_active;
	int			double_run;
	uint64_t		blocks;
	int			srv_ret[NR_SERVERS];
} *c;

static uint64_t per_worker;

/*
 * Server -> worker runs per second over futex round trips per second.  A
 * UMCG run is a round trip too (server -> worker -> server); this one also
 * pays for the idle list, blocking workers and two servers sharing one
 * list, so it need not match futex (0.6-0.9 measured under TCG), but it
 * must be of the same order.  A wakeup found only late costs milliseconds
 * instead of microseconds: had each of the ~6300 block/wake cycles of a
 * run been found by a 20 ms poll (the old libumcg idle loop), the run would
 * take about 130 s, some 800 runs/s against ~16000 futex round trips/s, a
 * ratio near 0.05.
 */
#define MIN_RATIO	0.1
#define FUTEX_ROUNDS	20000

static uint32_t fword;

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

static void *futex_peer(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < FUTEX_ROUNDS; i++) {
		while (__atomic_load_n(&fword, __ATOMIC_ACQUIRE) == 0)
			futex(&fword, FUTEX_WAIT_PRIVATE, 0);
		__atomic_store_n(&fword, 0, __ATOMIC_RELEASE);
		futex(&fword, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

/* Futex wake/wait round trips per second, two unpinned threads. */
static double futex_round_trips_per_s(void)
{
	pthread_t t;
	uint64_t t0;
	long i;

	fword = 0;
	if (pthread_create(&t, NULL, futex_peer, NULL))
		return 0;
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < FUTEX_ROUNDS; i++) {
		__atomic_store_n(&fword, 1, __ATOMIC_RELEASE);
		futex(&fword, FUTEX_WAKE_PRIVATE, 1);
		while (__atomic_load_n(&fword, __ATOMIC_ACQUIRE) == 1)
			futex(&fword, FUTEX_WAIT_PRIVATE, 1);
	}
	t0 = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	pthread_join(t, NULL);
	return FUTEX_ROUNDS * 1e9 / (double)t0;
}

static void on_cpu(struct wdata *d)
{
	int a = __atomic_add_fetch(&c->active, 1, __ATOMIC_SEQ_CST);
	int m = __atomic_load_n(&c->max_active, __ATOMIC_SEQ_CST);

	while (a > m && !__atomic_compare_exchange_n(&c->max_active, &m, a,
						      false, __ATOMIC_SEQ_CST,
						      __ATOMIC_SEQ_CST))
		;
	if (__atomic_exchange_n(&d->running, 1, __ATOMIC_SEQ_CST))
		__atomic_add_fetch(&c->double_run, 1, __ATOMIC_SEQ_CST);
}

static void off_cpu(struct wdata *d)
{
	__atomic_store_n(&d->running, 0, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&c->active, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg)
{
	struct wdata *d = arg;
	struct umcg_worker *w = &c->w[d->id];

	if (umcg_worker_register(w, &c->g, d))
		return (void *)1;
	on_cpu(d);
	while (d->iters < per_worker) {
		uint32_t r;

		d->iters++;
		d->seed = d->seed * 1103515245u + 12345u;
		r = (d->seed >> 16) & 15;
		off_cpu(d);
		if (r == 0) {
			struct timespec ts = { .tv_nsec = 20000 };

			__atomic_add_fetch(&c->blocks, 1, __ATOMIC_RELAXED);
			nanosleep(&ts, NULL);
		} else if (r == 1) {
			/* a system call that does not block */
			if (getppid() < 0)
				return (void *)2;
			umcg_worker_yield(w);
		} else {
			umcg_worker_yield(w);
		}
		on_cpu(d);
	}
	d->done = 1;
	off_cpu(d);
	umcg_worker_unregister(w, &c->g);
	return NULL;
}

static void *server(void *arg)
{
	int i = (int)(uintptr_t)arg;

	if (umcg_server_register(&c->s[i], &c->g)) {
		c->srv_ret[i] = -errno;
		return NULL;
	}
	c->srv_ret[i] = umcg_server_loop(&c->s[i], NULL);
	umcg_unregister();
	return NULL;
}

static void dump_state(void)
{
	int i, n;

	for (i = 0; i < NR_SERVERS; i++) {
		struct umcg_server *s = &c->s[i];
		struct umcg_worker *w;

		for (n = 0, w = s->rq_head; w; w = w->next)
			n++;
		ksft_print_msg("server %d tid %d phase %d state %#x next %u current %d (%#x next %u) rq %d ret %d switches %llu\n",
			       i, s->tid, s->phase, s->task.state, s->task.next_tid,
			       s->current ? s->current->tid : 0,
			       s->current ? s->current->task.state : 0,
			       s->current ? s->current->task.next_tid : 0, n,
			       c->srv_ret[i], (unsigned long long)s->switches);
	}
	for (i = 0; i < NR_WORKERS; i++) {
		struct umcg_worker *w = &c->w[i];

		if (w->task.state == UMCG_TASK_NONE)
			continue;
		ksft_print_msg("worker %d tid %d state %#x next %u link %#llx iters %llu\n",
			       i, w->tid, w->task.state, w->task.next_tid,
			       (unsigned long long)w->task.idle_workers_ptr,
			       (unsigned long long)c->d[i].iters);
	}
}

/*
 * Nothing polls, so a lost wakeup stops all progress: after STALL_S
 * seconds without a single worker iteration, report the state and fail
 * at once instead of waiting for the test's timeout.
 */
#define STALL_S		60

static void *watchdog(void *arg)
{
	int *stop = arg;
	uint64_t last = 0;
	int sec = 0, still = 0;

	while (!__atomic_load_n(stop, __ATOMIC_SEQ_CST)) {
		uint64_t total = 0;
		int i;

		sleep(1);
		sec++;
		for (i = 0; i < NR_WORKERS; i++)
			total += __atomic_load_n(&c->d[i].iters, __ATOMIC_RELAXED);
		still = total == last ? still + 1 : 0;
		last = total;
		if (still == STALL_S) {
			ksft_print_msg("no worker ran for %d s: a lost wakeup (%llu iterations done)\n",
				       STALL_S, (unsigned long long)total);
			dump_state();
			abort();
		}
		if (sec % 10)
			continue;
		ksft_print_msg("%ds: %llu iterations, %d workers left, idle server %u, list %s\n",
			       sec, (unsigned long long)total,
			       __atomic_load_n(&c->g.nr_workers, __ATOMIC_SEQ_CST),
			       c->g.idle_server_tid,
			       c->g.idle_workers ? "non-empty" : "empty");
		if (sec % 30 == 0)
			dump_state();
	}
	return NULL;
}

FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

/* 100000 switches take a while under TCG, and much longer with KASAN. */
TEST_F_TIMEOUT(stress, two_servers_64_workers, 800)
{
	pthread_t wd;
	int wd_stop = 0;
	pthread_t st[NR_SERVERS], wt[NR_WORKERS];
	uint64_t total = 0, sw = 0, t0, el;
	double futex_rate, umcg_rate;
	int i, done = 0;

	UMCG_REQUIRE();
	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	umcg_group_init(&c->g);
	per_worker = NR_SWITCHES / NR_WORKERS + 1;
	futex_round_trips_per_s();		/* warm-up */
	futex_rate = futex_round_trips_per_s();
	ASSERT_LT(0, futex_rate);
	ASSERT_EQ(0, pthread_create(&wd, NULL, watchdog, &wd_stop));
	/* workers first: they wait on the idle list until servers come */
	for (i = 0; i < NR_WORKERS; i++) {
		c->d[i].id = i;
		c->d[i].seed = 12345u + i;
		ASSERT_EQ(0, pthread_create(&wt[i], NULL, worker, &c->d[i]));
	}
	while (__atomic_load_n(&c->g.nr_workers, __ATOMIC_SEQ_CST) < NR_WORKERS)
		usleep(1000);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < NR_SERVERS; i++)
		ASSERT_EQ(0, pthread_create(&st[i], NULL, server,
					    (void *)(uintptr_t)i));
	for (i = 0; i < NR_WORKERS; i++) {
		void *r;

		pthread_join(wt[i], &r);
		EXPECT_EQ(NULL, r);
	}
	for (i = 0; i < NR_SERVERS; i++) {
		pthread_join(st[i], NULL);
		EXPECT_EQ(0, c->srv_ret[i]);
		sw += c->s[i].switches;
	}
	el = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	__atomic_store_n(&wd_stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(wd, NULL);
	for (i = 0; i < NR_WORKERS; i++) {
		total += c->d[i].iters;
		done += c->d[i].done;
		EXPECT_EQ(per_worker, c->d[i].iters);
		EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&c->w[i].task));
	}
	EXPECT_EQ(NR_WORKERS, done);
	EXPECT_EQ((uint64_t)NR_WORKERS * per_worker, total);
	EXPECT_EQ(0, c->double_run);
	EXPECT_LE(c->max_active, NR_SERVERS);
	/* every iteration ends in a yield or a (possible) block */
	EXPECT_GE(total, (uint64_t)NR_SWITCHES);
	EXPECT_EQ(0, c->g.nr_workers);
	ksft_print_msg("metric: umcg_stress_switches=%llu\n",
		       (unsigned long long)total);
	ksft_print_msg("metric: umcg_stress_server_runs=%llu\n",
		       (unsigned long long)sw);
	ksft_print_msg("metric: umcg_stress_blocks=%llu\n",
		       (unsigned long long)c->blocks);
	ksft_print_msg("metric: umcg_stress_ns_per_switch=%llu\n",
		       (unsigned long long)(el / (sw ? sw : 1)));
	umcg_rate = sw * 1e9 / (double)el;
	ksft_print_msg("metric: umcg_stress_runs_per_s=%.0f\n", umcg_rate);
	ksft_print_msg("metric: futex_round_trips_per_s=%.0f\n", futex_rate);
	ksft_print_msg("metric: umcg_stress_futex_ratio=%.3f\n",
		       umcg_rate / futex_rate);
	EXPECT_GE(umcg_rate / futex_rate, MIN_RATIO)
		TH_LOG("UMCG ran %.0f workers/s, futex did %.0f round trips/s",
		       umcg_rate, futex_rate);
}

TEST_HARNESS_MAIN
