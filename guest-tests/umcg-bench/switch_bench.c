// SPDX-License-Identifier: GPL-2.0
/*
 * umcg-bench/switch_bench: context-switch cost of a UMCG server -> worker
 * -> server round trip against a futex wake/wait ping-pong and a pipe
 * ping-pong, in the same guest and run, with both threads pinned to one
 * CPU and spread over two CPUs.  Prints ns per switch and the UMCG/futex
 * ratio as "# metric: name=value" lines.  A benchmark: it passes when every
 * measurement ran to the end; a UMCG measurement that failed (registration,
 * a switch, a worker that did not do all its round trips) fails the test
 * instead of printing a ratio of 0.  UMCG_BENCH_ITERS overrides the round
 * trips per measurement.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>

#include "../umcg/umcg_test.h"

static long iters = 20000;

struct pair {
	int		cpu_a, cpu_b;
	uint32_t	word;
	int		p1[2], p2[2];
	/* UMCG */
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			w_err;		/* worker: registration errno */
	long			w_yields;	/* worker: yields that returned */
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* futex: A sets 1 and wakes, B sets 0 and wakes: two switches a round. */
static void *futex_b(void *arg)
{
	struct pair *p = arg;
	long i;

	pin(p->cpu_b);
	for (i = 0; i < iters; i++) {
		while (__atomic_load_n(&p->word, __ATOMIC_ACQUIRE) == 0)
			futex(&p->word, FUTEX_WAIT_PRIVATE, 0);
		__atomic_store_n(&p->word, 0, __ATOMIC_RELEASE);
		futex(&p->word, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

static uint64_t run_futex(struct pair *p)
{
	pthread_t t;
	uint64_t t0;
	long i;

	p->word = 0;
	pin(p->cpu_a);
	pthread_create(&t, NULL, futex_b, p);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < iters; i++) {
		__atomic_store_n(&p->word, 1, __ATOMIC_RELEASE);
		futex(&p->word, FUTEX_WAKE_PRIVATE, 1);
		while (__atomic_load_n(&p->word, __ATOMIC_ACQUIRE) == 1)
			futex(&p->word, FUTEX_WAIT_PRIVATE, 1);
	}
	t0 = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	pthread_join(t, NULL);
	return t0;
}

static void *pipe_b(void *arg)
{
	struct pair *p = arg;
	char c;
	long i;

	pin(p->cpu_b);
	for (i = 0; i < iters; i++) {
		if (read(p->p1[0], &c, 1) != 1 || write(p->p2[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static uint64_t run_pipe(struct pair *p)
{
	pthread_t t;
	uint64_t t0;
	char c = 'x';
	long i;

	if (pipe(p->p1) || pipe(p->p2))
		return 0;
	pin(p->cpu_a);
	pthread_create(&t, NULL, pipe_b, p);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < iters; i++) {
		if (write(p->p1[1], &c, 1) != 1 || read(p->p2[0], &c, 1) != 1)
			break;
	}
	t0 = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	pthread_join(t, NULL);
	close(p->p1[0]);
	close(p->p1[1]);
	close(p->p2[0]);
	close(p->p2[1]);
	return t0;
}

/* UMCG: the worker yields back to its server every time it is run. */
static void *umcg_worker_fn(void *arg)
{
	struct pair *p = arg;
	long i;
	int ret;

	pin(p->cpu_b);
	ret = umcg_worker_register(&p->w, &p->g, NULL);
	if (ret) {
		p->w_err = -ret;
		return NULL;
	}
	for (i = 0; i < iters; i++) {
		if (umcg_worker_yield(&p->w))
			break;
		p->w_yields++;
	}
	umcg_worker_unregister(&p->w, &p->g);
	return NULL;
}

/*
 * One UMCG measurement: iters server -> worker -> server round trips.
 * Returns 0 with the time in *@ns, or a negative errno with @why set.
 */
static int run_umcg(struct pair *p, uint64_t *ns, const char **why)
{
	struct umcg_worker *w = NULL;
	pthread_t t;
	uint64_t t0 = 0;
	long i;
	int ret;

	pin(p->cpu_a);
	memset(&p->g, 0, sizeof(p->g));
	umcg_group_init(&p->g);
	p->w_err = 0;
	p->w_yields = 0;
	ret = umcg_server_register(&p->s, &p->g);
	if (ret) {
		*why = "server registration";
		return ret;
	}
	if (pthread_create(&t, NULL, umcg_worker_fn, p)) {
		umcg_unregister();
		*why = "pthread_create";
		return -EAGAIN;
	}
	for (i = 0; i < 20000 && !(w = umcg_take_idle(&p->g)) && !p->w_err; i++)
		usleep(1000);
	if (!w) {
		pthread_join(t, NULL);
		umcg_unregister();
		*why = "worker registration";
		return p->w_err ? -p->w_err : -ETIMEDOUT;
	}
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	/* iters round trips, then one more run in which it unregisters */
	for (i = 0; i <= iters; i++) {
		if (i == iters)
			*ns = umcg_now_ns(CLOCK_MONOTONIC) - t0;
		do {
			ret = umcg_run_worker(&p->s, w, 0);
		} while (ret == -EINTR);
		if (ret) {
			*why = "server -> worker switch";
			break;
		}
		while (!umcg_server_settle(&p->s))
			umcg_server_wait_current(&p->s, 0);
		w = umcg_rq_pop(&p->s);
		if (!w && i < iters) {
			*why = "the worker did not come back";
			ret = -EPROTO;
			break;
		}
	}
	if (ret) {
		/* let a worker still waiting for a server go */
		if (w && umcg_task_state(&w->task) != UMCG_TASK_NONE)
			umcg_run_worker(&p->s, w, umcg_deadline(1000000000ULL));
	}
	pthread_join(t, NULL);
	umcg_unregister();
	if (!ret && p->w_yields != iters) {
		*why = "the worker's yields failed";
		ret = -EPROTO;
	}
	return ret;
}

static double ns_per_switch(uint64_t total)
{
	return (double)total / (2.0 * iters);
}

static void measure(struct __test_metadata *_metadata, int cpu_a, int cpu_b,
		    const char *tag, bool umcg)
{
	struct pair *p = umcg_test_zalloc(sizeof(*p));
	double f, pp, u = 0;

	ASSERT_NE(NULL, p);
	p->cpu_a = cpu_a;
	p->cpu_b = cpu_b;

	/* warm up, then measure each mechanism */
	run_futex(p);
	f = ns_per_switch(run_futex(p));
	pp = ns_per_switch(run_pipe(p));
	ksft_print_msg("metric: futex_%s_ns_per_switch=%.0f\n", tag, f);
	ksft_print_msg("metric: pipe_%s_ns_per_switch=%.0f\n", tag, pp);
	if (umcg) {
		const char *why = "";
		uint64_t ns = 0;
		int ret;

		/* warm-up and measurement: either failing fails the test */
		ret = run_umcg(p, &ns, &why);
		ASSERT_EQ(0, ret) TH_LOG("UMCG %s warm-up failed: %s: %s", tag,
					 why, strerror(-ret));
		ret = run_umcg(p, &ns, &why);
		ASSERT_EQ(0, ret) TH_LOG("UMCG %s measurement failed: %s: %s",
					 tag, why, strerror(-ret));
		ASSERT_LT(0, ns);
		ASSERT_LT(0, f);
		u = ns_per_switch(ns);
		ksft_print_msg("metric: umcg_%s_ns_per_switch=%.0f\n", tag, u);
		ksft_print_msg("metric: umcg_futex_ratio_%s=%.3f\n", tag, u / f);
		ksft_print_msg("metric: umcg_pipe_ratio_%s=%.3f\n", tag,
			       pp > 0 ? u / pp : 0);
	}
	munmap(p, sizeof(*p));
}

FIXTURE(bench) {
	int unused;
};

FIXTURE_SETUP(bench)
{
}

FIXTURE_TEARDOWN(bench)
{
}

/* Slow under TCG, and much slower in a KASAN/lockdep guest. */
TEST_F_TIMEOUT(bench, switch_latency, 550)
{
	const char *env = getenv("UMCG_BENCH_ITERS");
	bool umcg = umcg_supported();
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (env && atol(env) > 0)
		iters = atol(env);
	ksft_print_msg("metric: bench_round_trips=%ld\n", iters);
	ksft_print_msg("metric: online_cpus=%ld\n", ncpu);
	if (!umcg)
		TH_LOG("UMCG not available (ENOSYS): futex and pipe only");

	measure(_metadata, 0, 0, "1cpu", umcg);
	if (ncpu >= 2)
		measure(_metadata, 0, 1, "2cpu", umcg);
	else
		TH_LOG("one CPU online: no cross-CPU measurement");
	if (!umcg)
		SKIP(return, "CONFIG_UMCG not set: UMCG part not measured");
}

TEST_HARNESS_MAIN
