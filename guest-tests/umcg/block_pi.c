// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/block_pi: a worker that blocks on a priority-inheritance futex
 * (FUTEX_LOCK_PI, FUTEX_LOCK_PI2: what glibc's PTHREAD_PRIO_INHERIT mutexes
 * do when the mutex is taken) makes its server run, as any other block.
 * That sleep goes through rt_mutex_wait_proxy_lock(), not through
 * schedule()'s sched_submit_work(): a worker reported only there stayed
 * RUNNING, and its server slept while the CPU idled.
 *
 * The server owns the futex word; its worker calls FUTEX_LOCK_PI on it.
 * The server must be back with the worker BLOCKED while it still holds
 * the lock (its TID in the word, FUTEX_WAITERS set by the kernel for the
 * waiting worker); then it unlocks, and the worker comes back IDLE on the
 * idle-worker list, owning the lock once a server runs it.
 */
#include <linux/futex.h>
#include <sys/syscall.h>

#include "umcg_test.h"

/* How long the server waits for any one event before the test gives up. */
#define WAIT_NS 10000000000ULL

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	uint32_t		lock;		/* the PI futex word */
	int			op;		/* FUTEX_LOCK_PI or _PI2 */
	int			progress;
	long			lock_ret;
	int			lock_errno;
	uint32_t		word_after;	/* the word once locked */
	pid_t			tid;
} *c;

static long futex_pi(uint32_t *uaddr, int op)
{
	return syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, 0, NULL,
		       NULL, 0);
}

static void *worker(void *arg)
{
	(void)arg;
	c->tid = umcg_gettid();
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	__atomic_store_n(&c->progress, 1, __ATOMIC_SEQ_CST);
	c->lock_ret = futex_pi(&c->lock, c->op);
	c->lock_errno = errno;
	c->word_after = umcg_load(&c->lock);
	__atomic_store_n(&c->progress, 2, __ATOMIC_SEQ_CST);
	/* Ours now, no other waiter: unlock in userspace, as glibc does. */
	if (!c->lock_ret && !umcg_cas(&c->lock, c->tid, 0))
		futex_pi(&c->lock, FUTEX_UNLOCK_PI);
	umcg_worker_unregister(&c->w, &c->g);
	return NULL;
}

static int progress(void)
{
	return __atomic_load_n(&c->progress, __ATOMIC_SEQ_CST);
}

/* Sleep as the idle server until a worker is on the idle list. */
static struct umcg_worker *wait_for_idle_worker(void)
{
	uint64_t deadline = umcg_deadline(WAIT_NS);

	while (!__atomic_load_n(&c->g.idle_workers, __ATOMIC_SEQ_CST) &&
	       umcg_server_idle(&c->s, deadline) != -ETIMEDOUT)
		;
	return (void *)(uintptr_t)__atomic_load_n(&c->g.idle_workers,
						  __ATOMIC_SEQ_CST);
}

static void block_on_pi_futex(struct __test_metadata *_metadata, int op)
{
	pid_t self = umcg_gettid();
	struct umcg_worker *w;
	uint32_t word;
	pthread_t t;
	int ret;

	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	c->op = op;
	/* The server owns the lock: its TID in the word, no waiters yet. */
	c->lock = self;
	umcg_group_init(&c->g);
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));

	w = wait_for_idle_worker();
	ASSERT_EQ(&c->w, w);
	ASSERT_EQ(w, umcg_take_idle(&c->g));

	/*
	 * Run it: it blocks on the lock the server holds, and the server must
	 * be back with it BLOCKED.  A server that no event brings back times
	 * out here, and the worker sleeps on in the kernel, RUNNING for
	 * userspace, until the test ends.
	 */
	ret = umcg_run_until_back(&c->s, w, WAIT_NS);
	ASSERT_EQ(0, ret)
		TH_LOG("server not woken for a worker blocked on a PI futex: %s, worker %s",
		       strerror(-ret),
		       umcg_task_state(&w->task) == UMCG_TASK_RUNNING ?
		       "still RUNNING" : "not RUNNING");
	EXPECT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&w->task));
	EXPECT_EQ(1, progress());
	EXPECT_EQ(UMCG_TASK_RUNNING, umcg_task_state(&c->s.task));
	EXPECT_TRUE(umcg_server_settle(&c->s));

	/*
	 * And it is blocked on the lock: still the server's, the kernel set
	 * FUTEX_WAITERS for it (state, not time: "well before the release").
	 */
	ASSERT_TRUE(umcg_wait_asleep(getpid(), c->tid, 10000));
	word = umcg_load(&c->lock);
	EXPECT_EQ((uint32_t)self, word & FUTEX_TID_MASK);
	EXPECT_TRUE(word & FUTEX_WAITERS);
	EXPECT_EQ(0, c->g.idle_workers);

	/* Release it: the worker gets the lock, wakes IDLE on the list. */
	ASSERT_EQ(0, futex_pi(&c->lock, FUTEX_UNLOCK_PI));
	w = wait_for_idle_worker();
	ASSERT_EQ(&c->w, w);
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task));
	EXPECT_EQ(1, progress());	/* no progress without a server */
	ASSERT_EQ(w, umcg_take_idle(&c->g));

	/* Run it again: it returns from the lock owning it, unregisters. */
	ASSERT_EQ(0, umcg_run_until_back(&c->s, w, WAIT_NS));
	EXPECT_EQ(2, progress());
	EXPECT_EQ(0, c->lock_ret) TH_LOG("lock: %s", strerror(c->lock_errno));
	EXPECT_EQ((uint32_t)c->tid, c->word_after & FUTEX_TID_MASK);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	pthread_join(t, NULL);
	EXPECT_EQ(0, umcg_load(&c->lock));
	EXPECT_EQ(0, umcg_unregister());
}

TEST(block_in_futex_lock_pi)
{
	UMCG_REQUIRE();
	block_on_pi_futex(_metadata, FUTEX_LOCK_PI);
}

TEST(block_in_futex_lock_pi2)
{
	UMCG_REQUIRE();
	block_on_pi_futex(_metadata, FUTEX_LOCK_PI2);
}

TEST_HARNESS_MAIN
