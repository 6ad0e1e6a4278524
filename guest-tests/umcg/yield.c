// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/yield: the documented worker-yield protocol does not lose the
 * server's wakeup when another server tries to claim the yielding worker
 * (review finding 1).
 *
 * umcg_wait() wakes the task in the caller's next_tid.  If a yielding
 * worker W were claimable (plain IDLE) between making itself IDLE and
 * calling umcg_wait(), a second server S2 could claim it and overwrite
 * W.next_tid: W's umcg_wait() would wake S2, and W's own server S would
 * sleep on with its state already RUNNING.  So W makes itself
 * IDLE | UMCG_TF_LOCKED: its own claim, which a claiming server's
 * compare-and-exchange (IDLE -> IDLE | LOCKED) cannot take.  S, woken,
 * owns W and clears the flag when it runs W again.
 *
 * The test forces the interleaving: S2 tries its claim exactly between
 * W's steps 1 and 2.  YIELD_STEP1_FLAGS 0 is the protocol as first
 * documented, which fails here: S sleeps until its deadline.
 */
#include "umcg_test.h"

#ifndef YIELD_STEP1_FLAGS
#define YIELD_STEP1_FLAGS	UMCG_TF_LOCKED
#endif

static struct {
	struct umcg_task	s, s2, w;
	uint64_t		head;
	pid_t			s_tid, s2_tid, w_tid;
	int			step1_done, s2_done, s2_claimed;
	int			w_ret, w_done;
} *y;

static void *yielding_worker(void *arg)
{
	uint32_t st;

	(void)arg;
	y->w.state = UMCG_TASK_IDLE;
	y->w.idle_workers_ptr = (uint64_t)(uintptr_t)&y->head;
	y->w_tid = umcg_gettid();
	if (umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, &y->w)) {
		y->w_ret = errno;
		return NULL;
	}
	/* Run by S.  Step 1: IDLE, claimed by itself. */
	st = umcg_task_state(&y->w);
	if (!umcg_cas(&y->w.state, st, (st & ~UMCG_TASK_STATE_MASK) |
		      UMCG_TASK_IDLE | YIELD_STEP1_FLAGS))
		y->w_ret = -1;
	__atomic_store_n(&y->step1_done, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&y->s2_done, __ATOMIC_SEQ_CST))
		usleep(1000);
	/* Step 2: the server RUNNING.  Step 3: wake next_tid and sleep. */
	__atomic_store_n(&y->s.state, UMCG_TASK_RUNNING, __ATOMIC_SEQ_CST);
	if (umcg_wait(0, umcg_deadline(5000000000ULL)))
		y->w_ret = errno;
	umcg_ctl(UMCG_CTL_UNREGISTER, NULL);
	__atomic_store_n(&y->w_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* S2: a server that claims any IDLE worker it sees, as servers do. */
static void *claiming_server(void *arg)
{
	(void)arg;
	y->s2.state = UMCG_TASK_RUNNING;
	y->s2_tid = umcg_gettid();
	if (umcg_ctl(UMCG_CTL_REGISTER, &y->s2))
		return NULL;
	while (!__atomic_load_n(&y->step1_done, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (umcg_cas(&y->w.state, UMCG_TASK_IDLE,
		     UMCG_TASK_IDLE | UMCG_TF_LOCKED)) {
		y->s2_claimed = 1;
		y->w.next_tid = y->s2_tid;
		__atomic_store_n(&y->w.state, UMCG_TASK_RUNNING,
				 __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&y->s2_done, 1, __ATOMIC_SEQ_CST);
	/* Stay registered: W may wake this server in its umcg_wait(). */
	while (!__atomic_load_n(&y->w_done, __ATOMIC_SEQ_CST))
		usleep(1000);
	umcg_ctl(UMCG_CTL_UNREGISTER, NULL);
	return NULL;
}

TEST(yield_with_competing_claim)
{
	pthread_t tw, ts2;
	uint64_t addr, t0, waited;
	uint32_t st;
	int i, ret;

	UMCG_REQUIRE();
	y = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, y);
	y->s.state = UMCG_TASK_RUNNING;
	y->s_tid = umcg_gettid();
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, &y->s));
	ASSERT_EQ(0, pthread_create(&ts2, NULL, claiming_server, NULL));
	ASSERT_EQ(0, pthread_create(&tw, NULL, yielding_worker, NULL));
	for (i = 0; i < 5000 && !__atomic_load_n(&y->head, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	addr = __atomic_exchange_n(&y->head, 0, __ATOMIC_SEQ_CST);
	ASSERT_EQ((uint64_t)(uintptr_t)&y->w, addr);

	/* S runs W: claim, next_tid, RUNNING; then sleep until an event. */
	ASSERT_TRUE(umcg_cas(&y->w.state, UMCG_TASK_IDLE,
			     UMCG_TASK_IDLE | UMCG_TF_LOCKED));
	y->w.next_tid = y->s_tid;
	__atomic_store_n(&y->w.state, UMCG_TASK_RUNNING, __ATOMIC_SEQ_CST);
	__atomic_store_n(&y->s.state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	y->s.next_tid = y->w_tid;
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	ret = umcg_wait(0, umcg_deadline(2000000000ULL)) ? errno : 0;
	waited = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	y->s.next_tid = 0;
	st = umcg_task_state(&y->w);
	TH_LOG("S: umcg_wait() %s after %llu ms; W state 0x%x; S2 %s W",
	       strerror(ret), (unsigned long long)waited / 1000000, st,
	       y->s2_claimed ? "claimed" : "could not claim");
	/*
	 * At its deadline S finds its state RUNNING (W's step 2) and returns
	 * 0 as well: only the time tells a lost wakeup.
	 */
	EXPECT_EQ(0, ret);
	EXPECT_GT(1500000000ULL, waited)
		TH_LOG("the server slept through its worker's yield");
	EXPECT_EQ(0, y->s2_claimed);

	/* S owns the yielded worker: it runs it again, to let it finish. */
	if ((st & UMCG_TASK_STATE_MASK) == UMCG_TASK_IDLE) {
		y->w.next_tid = y->s_tid;
		__atomic_store_n(&y->w.state, (st & ~(UMCG_TASK_STATE_MASK |
						      UMCG_TF_LOCKED)) |
				 UMCG_TASK_RUNNING, __ATOMIC_SEQ_CST);
		y->s.next_tid = y->w_tid;
		umcg_wait(UMCG_WAIT_WAKE_ONLY, 0);
		y->s.next_tid = 0;
	}
	for (i = 0; i < 5000 && !__atomic_load_n(&y->w_done, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	EXPECT_EQ(1, y->w_done);
	EXPECT_EQ(0, y->w_ret);
	pthread_join(tw, NULL);
	pthread_join(ts2, NULL);
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
}

/*
 * The same rule for libumcg's umcg_worker_yield(): the yielded worker stays
 * claimed (IDLE | LOCKED | HANDOFF) from its step 1 until its own server
 * runs it again, so another server's umcg_run_worker() cannot take it.
 * Here S2 tries after the yield (W asleep in umcg_wait(), S woken):
 * deterministic, and the same claim S2 would make inside the window.
 */
static struct {
	struct umcg_group	g;
	struct umcg_server	s, s2;
	struct umcg_worker	w;
	pid_t			resumed_by;
	int			s2_go, s2_ret, s2_done, w_done;
} *ly;

static void *lib_yield_worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&ly->w, &ly->g, NULL))
		return NULL;
	umcg_worker_yield(&ly->w);
	/* The server that ran it again pointed next_tid at itself. */
	ly->resumed_by = (pid_t)__atomic_load_n(&ly->w.task.next_tid,
						__ATOMIC_SEQ_CST);
	umcg_worker_unregister(&ly->w, &ly->g);
	__atomic_store_n(&ly->w_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* S2: another server of the group that tries to run W. */
static void *lib_second_server(void *arg)
{
	(void)arg;
	ly->s2_ret = umcg_server_register(&ly->s2, &ly->g);
	if (!ly->s2_ret) {
		while (!__atomic_load_n(&ly->s2_go, __ATOMIC_SEQ_CST))
			usleep(1000);
		ly->s2_ret = umcg_run_worker(&ly->s2, &ly->w,
					     umcg_deadline(5000000000ULL));
		/* It got W: wait until W left (it unregisters). */
		while (!ly->s2_ret && umcg_still_running(&ly->s2, &ly->w))
			umcg_server_wait_current(&ly->s2,
						 umcg_deadline(100000000ULL));
		umcg_unregister();
	}
	__atomic_store_n(&ly->s2_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(libumcg_yield_stays_with_its_server)
{
	struct umcg_worker *w = NULL;
	pthread_t tw, ts2;
	uint32_t st;
	int i;

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(ly);
	ASSERT_EQ(0, pthread_create(&ts2, NULL, lib_second_server, NULL));
	ASSERT_EQ(0, pthread_create(&tw, NULL, lib_yield_worker, NULL));
	for (i = 0; i < 5000 && !(w = umcg_take_idle(&ly->g)); i++)
		usleep(1000);
	ASSERT_EQ(&ly->w, w);

	/* S runs W; W yields back to S. */
	ASSERT_EQ(0, umcg_run_worker(&ly->s, w, umcg_deadline(5000000000ULL)));
	st = umcg_task_state(&w->task);
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF, st)
		TH_LOG("a yielded worker is state %#x: not claimed for its server",
		       st);
	EXPECT_TRUE(umcg_server_settle(&ly->s));

	/* S2 tries to run the yielded worker. */
	__atomic_store_n(&ly->s2_go, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < 10000 && !__atomic_load_n(&ly->s2_done, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, ly->s2_done);
	EXPECT_EQ(-EAGAIN, ly->s2_ret)
		TH_LOG("a second server ran the worker that yielded to S");

	/* S runs its worker again; W returns from its yield and leaves. */
	ASSERT_EQ(w, umcg_rq_pop(&ly->s));
	EXPECT_EQ(0, umcg_run_worker(&ly->s, w, umcg_deadline(5000000000ULL)));
	for (i = 0; i < 5000 && !__atomic_load_n(&ly->w_done, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, ly->w_done);
	EXPECT_EQ(ly->s.tid, ly->resumed_by)
		TH_LOG("W's yield returned on S2 (tid %d), not on S (tid %d)",
		       ly->resumed_by, ly->s.tid);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	pthread_join(tw, NULL);
	pthread_join(ts2, NULL);
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
