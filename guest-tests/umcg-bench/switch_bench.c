// SPDX-License-Identifier: GPL-2.0
/*
 * umcg-bench/switch_bench: the cost of a UMCG server -> worker -> server
 * round trip against a futex wake/wait ping-pong and a pipe ping-pong, in
 * the same guest and run, in four cases:
 *
 *   1cpu     server and worker pinned to one CPU;
 *   2cpu     server and worker pinned to two different CPUs (every wakeup
 *            crosses CPUs, whatever the mechanism);
 *   shared   both free to run on every CPU the test may use: the case the
 *            FUTEX_SWAP posting targeted.  A futex wakeup may put the
 *            wakee on another, idle CPU; UMCG wakes it on the waker's;
 *   shared8  one server and 8 workers, all free to run everywhere, the
 *            server running them round-robin (futex and pipe: one word or
 *            pipe pair per worker, woken in the same order).
 *
 * Each mechanism runs UMCG_BENCH_REPS times (default 5) per case, the
 * mechanisms interleaved so that a drift in the machine's speed hits all
 * of them alike, after one shorter warm-up run each.  Prints, as
 * "# metric: name=value" lines, the median ns per switch of each mechanism
 * with its spread ((max - min) / median, in per cent) and the UMCG/futex
 * and UMCG/pipe ratios: the median of the per-repetition ratios, with
 * their smallest and largest.  A benchmark: it asserts nothing about
 * speed, and suite.conf declares it one, so when every measurement ran to
 * the end its result is "bench", not a pass; a UMCG measurement that
 * failed (registration, a switch, a worker that did not do all its round
 * trips) fails the test instead of printing a ratio.
 * UMCG_BENCH_ITERS sets the round trips per measurement (default 5000,
 * rounded down to a multiple of the number of workers).
 * UMCG_BENCH_INJECT=umcg|pipe makes worker 0 of that mechanism leave after
 * its first round trip, as a worker whose switch failed does: the run must
 * then end with that worker's reason, never wait for the suite's timeout
 * (bench_errors.c checks it).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>

#include "../umcg/umcg_test.h"
#include "insn_profile.h"

#define MAX_WORKERS	8
#define MAX_REPS	15

enum placement { ONE_CPU, TWO_CPUS, SHARED };

/* One futex word per worker, each on its own cache line. */
struct word {
	uint32_t	v;
} __attribute__((aligned(64)));

struct bench;

/* What a worker thread is started with: its benchmark and its index. */
struct warg {
	struct bench	*b;
	int		i;
};

struct bench {
	enum placement	where;
	int		nw;		/* workers */
	long		per;		/* round trips per worker */
	int		ready;		/* workers that set themselves up */
	struct word	word[MAX_WORKERS];
	int		p1[MAX_WORKERS][2], p2[MAX_WORKERS][2];
	pthread_t	t[MAX_WORKERS];
	/*
	 * Not on the stack of the run_*() that starts them: after a failure
	 * the workers are not joined, and one still running would read the
	 * frame of a function that returned.
	 */
	struct warg	arg[MAX_WORKERS];
	/* UMCG */
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w[MAX_WORKERS];
	/* The errno of the first worker that left early (any mechanism). */
	int			w_err;
	long			w_yields[MAX_WORKERS];
};

static long iters = 5000;
static int reps = 5;
/* UMCG_BENCH_INJECT: the mechanism whose worker 0 leaves early, or none. */
static const char *inject = "";
/* The CPUs the test may use, as it started: "shared" spreads over them. */
static cpu_set_t all_cpus;
/*
 * The instruction profiler's window (guest-tests/lib/insn_profile.h) the
 * run about to start counts into: measure() sets it, 0 for a warm-up
 * (not counted).  Each run's timed loop is one window.
 */
static unsigned int profile_window;

static int place(struct bench *b, bool server)
{
	cpu_set_t set;
	int cpu;

	if (b->where == SHARED)
		return sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
	CPU_ZERO(&set);
	cpu = b->where == TWO_CPUS && !server ? 1 : 0;
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/*
 * Should worker @i of mechanism @mech leave now, after @k round trips?
 * Only when UMCG_BENCH_INJECT names @mech: the error path on demand.
 */
static bool injected(const char *mech, int i, long k)
{
	return i == 0 && k == 1 && !strcmp(inject, mech);
}

/* A worker leaves early with @err: the first reason is kept. */
static void worker_failed(struct bench *b, int err)
{
	int none = 0;

	__atomic_compare_exchange_n(&b->w_err, &none, err, false,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static void wait_ready(struct bench *b)
{
	while (__atomic_load_n(&b->ready, __ATOMIC_ACQUIRE) < b->nw)
		sched_yield();
}

/* futex: the server sets 1 and wakes, worker i sets 0 and wakes. */
static void *futex_worker(void *arg)
{
	struct warg *a = arg;
	struct bench *b = a->b;
	uint32_t *word = &b->word[a->i].v;
	long k;

	place(b, false);
	__atomic_add_fetch(&b->ready, 1, __ATOMIC_RELEASE);
	for (k = 0; k < b->per; k++) {
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == 0)
			futex(word, FUTEX_WAIT_PRIVATE, 0);
		__atomic_store_n(word, 0, __ATOMIC_RELEASE);
		futex(word, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

static void *pipe_worker(void *arg)
{
	struct warg *a = arg;
	struct bench *b = a->b;
	char c;
	long k;

	place(b, false);
	__atomic_add_fetch(&b->ready, 1, __ATOMIC_RELEASE);
	for (k = 0; k < b->per; k++) {
		if (injected("pipe", a->i, k)) {
			errno = ECANCELED;
			goto out;
		}
		if (read(b->p1[a->i][0], &c, 1) != 1 ||
		    write(b->p2[a->i][1], &c, 1) != 1)
			goto out;
	}
	return NULL;
out:
	/*
	 * The server would wait in read() for ever: the pipes belong to the
	 * whole process, so only closing our write end gives it EOF.
	 */
	worker_failed(b, errno ? errno : EPIPE);
	close(b->p2[a->i][1]);
	b->p2[a->i][1] = -1;
	return NULL;
}

/* UMCG: each worker yields back to its server every time it is run. */
static void *umcg_worker(void *arg)
{
	struct warg *a = arg;
	struct bench *b = a->b;
	struct umcg_worker *w = &b->w[a->i];
	long k;
	int ret;

	place(b, false);
	ret = umcg_worker_register(w, &b->g, NULL);
	if (ret) {
		worker_failed(b, -ret);
		return NULL;
	}
	for (k = 0; k < b->per; k++) {
		if (injected("umcg", a->i, k)) {
			/*
			 * Leave RUNNING: unregistering wakes the server, which
			 * must find the reason already there.
			 */
			worker_failed(b, ECANCELED);
			break;
		}
		ret = umcg_worker_yield(w);
		if (ret) {
			/*
			 * The yield made the server RUNNING but its wait failed,
			 * maybe before it woke the server: wake it, or it
			 * sleeps for ever.
			 */
			worker_failed(b, -ret);
			__atomic_store_n(&w->task.next_tid, w->server->tid,
					 __ATOMIC_SEQ_CST);
			umcg_wait(UMCG_WAIT_WAKE_ONLY, 0);
			break;
		}
		b->w_yields[a->i]++;
	}
	umcg_worker_unregister(w, &b->g);
	return NULL;
}

static int start_workers(struct bench *b, void *(*fn)(void *))
{
	int i;

	b->ready = 0;
	for (i = 0; i < b->nw; i++) {
		b->arg[i].b = b;
		b->arg[i].i = i;
		if (pthread_create(&b->t[i], NULL, fn, &b->arg[i]))
			return -EAGAIN;
	}
	return 0;
}

/*
 * What every measurement does first: @rounds split over the workers, the
 * server placed, the workers started with @fn.  0, or a negative errno
 * with @why set.
 */
static int setup(struct bench *b, long rounds, void *(*fn)(void *),
		 const char **why)
{
	b->per = rounds / b->nw;
	if (place(b, true)) {
		*why = "sched_setaffinity";
		return -errno;
	}
	if (start_workers(b, fn)) {
		*why = "pthread_create";
		return -EAGAIN;
	}
	return 0;
}

static void join_workers(struct bench *b)
{
	int i;

	for (i = 0; i < b->nw; i++)
		pthread_join(b->t[i], NULL);
}

/*
 * One measurement of @rounds round trips (a multiple of b->nw), the server
 * visiting the workers in turn.  Returns 0 with the time in *@ns, or a
 * negative errno with @why set.  After a failure the workers are not
 * joined: the test fails and its process exits, which ends them.
 */
static int run_futex(struct bench *b, long rounds, uint64_t *ns,
		     const char **why)
{
	uint64_t t0;
	long r;
	int ret;

	memset(b->word, 0, sizeof(b->word));
	b->w_err = 0;
	ret = setup(b, rounds, futex_worker, why);
	if (ret)
		return ret;
	wait_ready(b);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	insn_profile_open();
	for (r = 0; r < rounds; r++) {
		uint32_t *word = &b->word[r % b->nw].v;

		__atomic_store_n(word, 1, __ATOMIC_RELEASE);
		futex(word, FUTEX_WAKE_PRIVATE, 1);
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == 1)
			futex(word, FUTEX_WAIT_PRIVATE, 1);
	}
	*ns = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	insn_profile_close(profile_window, rounds);
	join_workers(b);
	return 0;
}

static void close_pipes(struct bench *b, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		close(b->p1[i][0]);
		close(b->p1[i][1]);
		close(b->p2[i][0]);
		close(b->p2[i][1]);
	}
}

static int run_pipe(struct bench *b, long rounds, uint64_t *ns,
		    const char **why)
{
	uint64_t t0;
	char c = 'x';
	long r;
	int i, ret;

	for (i = 0; i < b->nw; i++) {
		if (pipe(b->p1[i]))
			goto fail;
		if (pipe(b->p2[i])) {
			close(b->p1[i][0]);
			close(b->p1[i][1]);
			goto fail;
		}
	}
	b->w_err = 0;
	ret = setup(b, rounds, pipe_worker, why);
	if (ret)
		return ret;
	wait_ready(b);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	insn_profile_open();
	for (r = 0; r < rounds; r++) {
		i = r % b->nw;
		if (write(b->p1[i][1], &c, 1) != 1 ||
		    read(b->p2[i][0], &c, 1) != 1) {
			ret = __atomic_load_n(&b->w_err, __ATOMIC_ACQUIRE);
			*why = ret ? "a worker left" : "a pipe round trip";
			return ret ? -ret : -EIO;
		}
	}
	*ns = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	insn_profile_close(profile_window, rounds);
	join_workers(b);
	close_pipes(b, b->nw);
	return 0;
fail:
	close_pipes(b, i);
	*why = "pipe";
	return -errno;
}

/*
 * Take every worker off the group's idle list into the server's queue, in
 * the order they registered.  Returns how many were found.
 */
static int collect_idle(struct bench *b)
{
	struct umcg_worker *w, *list = NULL;
	int n = 0;

	/* The kernel pushes: the list is newest first.  Reverse it. */
	for (w = umcg_take_idle(&b->g); w; ) {
		struct umcg_worker *next = umcg_idle_next(w);

		w->next = list;
		list = w;
		w = next;
	}
	while (list) {
		w = list;
		list = w->next;
		umcg_rq_push(&b->s, w);
		n++;
	}
	return n;
}

static int run_umcg(struct bench *b, long rounds, uint64_t *ns,
		    const char **why)
{
	struct umcg_worker *w;
	long r, yields = 0;
	uint64_t t0 = 0;
	int i, n = 0, ret;

	umcg_group_init(&b->g);
	b->w_err = 0;
	memset(b->w_yields, 0, sizeof(b->w_yields));
	ret = umcg_server_register(&b->s, &b->g);
	if (ret) {
		*why = "server registration";
		return ret;
	}
	ret = setup(b, rounds, umcg_worker, why);
	if (ret)
		return ret;
	for (i = 0; i < 20000 && n < b->nw &&
	     !__atomic_load_n(&b->w_err, __ATOMIC_ACQUIRE); i++) {
		n += collect_idle(b);
		if (n < b->nw)
			usleep(1000);
	}
	if (n < b->nw) {
		*why = "worker registration";
		return b->w_err ? -b->w_err : -ETIMEDOUT;
	}
	/*
	 * @rounds round trips, then one more run of each worker, in which it
	 * unregisters (and is not queued again).
	 */
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	insn_profile_open();
	for (r = 0; ; r++) {
		if (r == rounds) {
			*ns = umcg_now_ns(CLOCK_MONOTONIC) - t0;
			insn_profile_close(profile_window, rounds);
		}
		w = umcg_rq_pop(&b->s);
		if (!w)
			break;
		do {
			ret = umcg_run_worker(&b->s, w, 0);
		} while (ret == -EINTR);
		if (ret) {
			*why = "server -> worker switch";
			return ret;
		}
		while (!umcg_server_settle(&b->s)) {
			if (__atomic_load_n(&b->w_err, __ATOMIC_ACQUIRE))
				break;
			ret = umcg_server_wait_current(&b->s, 0);
			if (ret && ret != -EINTR) {
				*why = "the server's wait for its worker";
				return ret;
			}
		}
		ret = __atomic_load_n(&b->w_err, __ATOMIC_ACQUIRE);
		if (ret) {
			*why = "a worker left";
			return -ret;
		}
	}
	ret = __atomic_load_n(&b->w_err, __ATOMIC_ACQUIRE);
	if (ret) {
		*why = "a worker left";
		return -ret;
	}
	if (r < rounds + b->nw) {
		*why = "a worker did not come back";
		return -EPROTO;
	}
	join_workers(b);
	umcg_unregister();
	for (i = 0; i < b->nw; i++)
		yields += b->w_yields[i];
	if (yields != rounds) {
		*why = "the workers' yields failed";
		return -EPROTO;
	}
	return 0;
}

typedef int (*runner)(struct bench *b, long rounds, uint64_t *ns,
		      const char **why);

enum { FUTEX, PIPE, UMCG, NR_MECHS };

static const struct mech {
	const char	*name;
	runner		run;
} mechs[NR_MECHS] = {
	[FUTEX]	= { "futex", run_futex },
	[PIPE]	= { "pipe", run_pipe },
	[UMCG]	= { "umcg", run_umcg },
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct summary {
	double	median, min, max;
};

static struct summary summary_of(const double *v, int n)
{
	double s[MAX_REPS];
	struct summary st;

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	st.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	st.min = s[0];
	st.max = s[n - 1];
	return st;
}

static double spread_pct(struct summary st)
{
	return st.median > 0 ? 100.0 * (st.max - st.min) / st.median : 0;
}

static void measure(struct __test_metadata *_metadata, const char *tag,
		    enum placement where, int nw, bool umcg)
{
	struct bench *b = umcg_test_zalloc(sizeof(*b));
	double v[NR_MECHS][MAX_REPS], ratio[2][MAX_REPS];
	struct summary st[NR_MECHS], rs[2];
	long rounds = iters / nw * nw;
	long warm = rounds / 4 / nw * nw;
	int m, k;

	ASSERT_NE(NULL, b);
	ASSERT_LT(0, warm) TH_LOG("UMCG_BENCH_ITERS=%ld is too small for %d workers",
				  iters, nw);
	b->where = where;
	b->nw = nw;
	for (k = -1; k < reps; k++) {
		for (m = 0; m < NR_MECHS; m++) {
			const char *why = "";
			uint64_t ns = 0;
			int ret;

			if (m == UMCG && !umcg)
				continue;
			/*
			 * k == -1: the warm-up run, not counted.  Windows
			 * 1 + case * NR_MECHS + mechanism, the cases in
			 * placement order with shared8 last
			 * (tools/insn-profile/insn-profile-table).
			 */
			profile_window = k < 0 ? 0 :
				1 + (nw > 1 ? 3 : where) * NR_MECHS + m;
			ret = mechs[m].run(b, k < 0 ? warm : rounds, &ns, &why);
			ASSERT_EQ(0, ret) TH_LOG("%s %s %s failed: %s: %s",
						 mechs[m].name, tag,
						 k < 0 ? "warm-up" : "measurement",
						 why, strerror(-ret));
			ASSERT_LT(0, ns);
			if (k >= 0)
				v[m][k] = (double)ns / (2.0 * rounds);
		}
		if (k >= 0 && umcg) {
			ratio[0][k] = v[UMCG][k] / v[FUTEX][k];
			ratio[1][k] = v[UMCG][k] / v[PIPE][k];
		}
	}
	for (m = 0; m < NR_MECHS; m++) {
		if (m == UMCG && !umcg)
			continue;
		st[m] = summary_of(v[m], reps);
		ksft_print_msg("metric: %s_%s_ns_per_switch=%.0f\n",
			       mechs[m].name, tag, st[m].median);
		ksft_print_msg("metric: %s_%s_spread_pct=%.1f\n",
			       mechs[m].name, tag, spread_pct(st[m]));
	}
	if (umcg) {
		rs[0] = summary_of(ratio[0], reps);
		rs[1] = summary_of(ratio[1], reps);
		ksft_print_msg("metric: umcg_futex_ratio_%s=%.3f\n", tag, rs[0].median);
		ksft_print_msg("metric: umcg_futex_ratio_%s_min=%.3f\n", tag, rs[0].min);
		ksft_print_msg("metric: umcg_futex_ratio_%s_max=%.3f\n", tag, rs[0].max);
		ksft_print_msg("metric: umcg_pipe_ratio_%s=%.3f\n", tag, rs[1].median);
		ksft_print_msg("%s: ns per switch, median [min-max] of %d: futex %.0f [%.0f-%.0f], pipe %.0f [%.0f-%.0f], umcg %.0f [%.0f-%.0f]; umcg/futex %.3f [%.3f-%.3f]\n",
			       tag, reps, st[FUTEX].median, st[FUTEX].min, st[FUTEX].max,
			       st[PIPE].median, st[PIPE].min, st[PIPE].max,
			       st[UMCG].median, st[UMCG].min, st[UMCG].max,
			       rs[0].median, rs[0].min, rs[0].max);
	}
	munmap(b, sizeof(*b));
}

/*
 * What the parts of a switch cost, one CPU: the mean ns of @n calls of
 * @fn.  Under -icount (variant bench-icount) an ns is an instruction, so
 * these split a round trip's instructions into the system call itself
 * (getppid), the UMCG lookup of next_tid without a wakeup (WAKE_ONLY to a
 * task that is not waiting), a futex wake that finds nobody, and a
 * schedule() that finds nothing else to run (sched_yield).  Whatever a
 * switch costs beyond those is the wakeup and the context switch, the part
 * a fused switch in the scheduler could shorten.
 */
static double ns_per_call(long (*fn)(void *), void *arg, long n)
{
	uint64_t t0;
	long i;

	for (i = 0; i < n / 10; i++)	/* warm-up */
		fn(arg);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		fn(arg);
	return (double)(umcg_now_ns(CLOCK_MONOTONIC) - t0) / n;
}

static long call_getppid(void *arg)
{
	(void)arg;
	return syscall(SYS_getppid);
}

static long call_sched_yield(void *arg)
{
	(void)arg;
	return sched_yield();
}

static long call_futex_wake(void *arg)
{
	return futex(arg, FUTEX_WAKE_PRIVATE, 1);
}

static long call_umcg_wake_only(void *arg)
{
	(void)arg;
	return umcg_wait(UMCG_WAIT_WAKE_ONLY | UMCG_WAIT_WF_CURRENT_CPU, 0);
}

static void parts(struct __test_metadata *_metadata, bool umcg)
{
	struct bench *b = umcg_test_zalloc(sizeof(*b));
	long n = iters * 2;

	ASSERT_NE(NULL, b);
	b->where = ONE_CPU;
	ASSERT_EQ(0, place(b, true));
	ksft_print_msg("metric: part_syscall_ns=%.0f\n",
		       ns_per_call(call_getppid, NULL, n));
	ksft_print_msg("metric: part_sched_yield_alone_ns=%.0f\n",
		       ns_per_call(call_sched_yield, NULL, n));
	ksft_print_msg("metric: part_futex_wake_nobody_ns=%.0f\n",
		       ns_per_call(call_futex_wake, &b->word[0].v, n));
	if (umcg) {
		ASSERT_EQ(0, umcg_server_register(&b->s, &b->g));
		/* next_tid is this server, which is not waiting: no wakeup */
		b->s.task.next_tid = b->s.tid;
		ASSERT_EQ(0, call_umcg_wake_only(NULL))
			TH_LOG("umcg_wait(WAKE_ONLY) to itself: %s", strerror(errno));
		ksft_print_msg("metric: part_umcg_lookup_nowake_ns=%.0f\n",
			       ns_per_call(call_umcg_wake_only, NULL, n));
		ASSERT_EQ(0, umcg_unregister());
	}
	munmap(b, sizeof(*b));
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
	long ncpu;

	if (env && atol(env) > 0)
		iters = atol(env);
	env = getenv("UMCG_BENCH_INJECT");
	if (env)
		inject = env;
	env = getenv("UMCG_BENCH_REPS");
	if (env && atoi(env) > 0)
		reps = atoi(env) < MAX_REPS ? atoi(env) : MAX_REPS;
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all_cpus), &all_cpus));
	ncpu = CPU_COUNT(&all_cpus);
	ksft_print_msg("metric: bench_round_trips=%ld\n", iters);
	ksft_print_msg("metric: bench_repetitions=%d\n", reps);
	ksft_print_msg("metric: online_cpus=%ld\n", ncpu);
	if (!umcg)
		TH_LOG("UMCG not available (ENOSYS): futex and pipe only");

	parts(_metadata, umcg);
	measure(_metadata, "1cpu", ONE_CPU, 1, umcg);
	if (ncpu >= 2 && CPU_ISSET(0, &all_cpus) && CPU_ISSET(1, &all_cpus))
		measure(_metadata, "2cpu", TWO_CPUS, 1, umcg);
	else
		TH_LOG("CPUs 0 and 1 not both usable: no 2cpu case");
	if (ncpu >= 2) {
		measure(_metadata, "shared", SHARED, 1, umcg);
		measure(_metadata, "shared8", SHARED, MAX_WORKERS, umcg);
	} else {
		TH_LOG("one CPU usable: no shared cases");
	}
	if (!umcg)
		SKIP(return, "CONFIG_UMCG not set: UMCG part not measured");
}

TEST_HARNESS_MAIN
