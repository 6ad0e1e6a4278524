// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/wake_fault: a worker that faults in its own wake path (issue 9,
 * item 1).  After pushing itself onto the idle list, a worker reads and
 * exchanges the idle-server word; that access can fault and sleep.  If a
 * server has meanwhile taken the worker and made it RUNNING, the sleep must
 * not count as the worker blocking: otherwise it is marked BLOCKED, parks
 * waiting for RUNNING, and its server waits for it on the idle list - both
 * forever.
 *
 * The fault is made deterministic with userfaultfd: the idle-server word
 * lives on a write-protected page, so the kernel's compare-and-exchange
 * faults and the worker sleeps until this test says so.  The first fault
 * happens while the worker is IDLE; the server then runs it, the test wakes
 * the fault without resolving it, so the worker faults again - now RUNNING -
 * and only then is the page made writable.  That is the wake of a worker
 * that blocked in read().  At registration the kernel checks the word
 * writable before it queues the worker (a registration that fails must
 * not leave the worker on the list, review finding 5), so there the fault
 * happens while the worker is not queued yet, and is resolved.
 */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>

#include "umcg_test.h"

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			pipefd[2];
	int			progress;	/* worker: 1 ran, 2 read() done */
	int			uffd;
	uint32_t		*word;		/* idle-server word, own page */
	int			faults;		/* uffd messages seen */
	int			handler_err;
	uint32_t		state_at_fault2;
	uint64_t		listed_at_fault1;	/* list head then */
} *c;

static long uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int uffd_wp(int fd, void *addr, bool on)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (uintptr_t)addr, .len = 4096 },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(fd, UFFDIO_WRITEPROTECT, &wp) ? -errno : 0;
}

/* Read one fault message within @ms; 0, or -ETIMEDOUT / -errno. */
static int uffd_read_fault(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, ms) != 1)
		return -ETIMEDOUT;
	if (read(fd, &msg, sizeof(msg)) != sizeof(msg))
		return -errno;
	if (msg.event != UFFD_EVENT_PAGEFAULT ||
	    !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP))
		return -EPROTO;
	__atomic_add_fetch(&c->faults, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * The fault handler: fault 1 (worker IDLE, on the idle list), wait until
 * the server made the worker RUNNING, wake the fault unresolved, fault 2
 * (worker RUNNING), then make the page writable.
 */
static void *handler(void *arg)
{
	struct uffdio_range range = { .start = (uintptr_t)c->word, .len = 4096 };
	int ret;

	(void)arg;
	ret = uffd_read_fault(c->uffd, 20000);
	if (ret)
		goto out;
	ret = -ETIME;
	if (!umcg_poll_eq(&c->w.task.state, UMCG_TASK_STATE_MASK,
			  UMCG_TASK_RUNNING, 20000))
		goto out;
	ret = ioctl(c->uffd, UFFDIO_WAKE, &range) ? -errno : 0;
	if (ret)
		goto out;
	ret = uffd_read_fault(c->uffd, 20000);
	if (ret)
		goto out;
	/* The worker sleeps in the fault while RUNNING; let it sleep a bit. */
	usleep(100000);
	c->state_at_fault2 = umcg_task_state(&c->w.task);
	ret = uffd_wp(c->uffd, c->word, false);
out:
	c->handler_err = ret;
	return NULL;
}

/* Registration: one fault, before the worker is on the list; resolve it. */
static void *precheck_handler(void *arg)
{
	int ret;

	(void)arg;
	ret = uffd_read_fault(c->uffd, 20000);
	if (!ret) {
		/* The worker sleeps in the fault; is it on the list? */
		usleep(100000);
		c->listed_at_fault1 = __atomic_load_n(&c->g.idle_workers,
						      __ATOMIC_SEQ_CST);
		ret = uffd_wp(c->uffd, c->word, false);
	}
	c->handler_err = ret;
	return NULL;
}

static void *worker(void *arg)
{
	char ch;

	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	__atomic_store_n(&c->progress, 1, __ATOMIC_SEQ_CST);
	if (read(c->pipefd[0], &ch, 1) != 1)
		return (void *)2;
	__atomic_store_n(&c->progress, 2, __ATOMIC_SEQ_CST);
	umcg_worker_unregister(&c->w, &c->g);
	return NULL;
}

/* Take the one worker off the idle list, waiting for it up to @ms. */
static struct umcg_worker *take_worker(int ms)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) + ms * 1000000ULL;
	struct umcg_worker *w;

	while (!(w = umcg_take_idle(&c->g))) {
		if (umcg_now_ns(CLOCK_MONOTONIC) > end)
			return NULL;
		usleep(1000);
	}
	return w;
}

/*
 * Run @w and wait until it is not RUNNING any more (blocked, left), with a
 * deadline: on the broken kernel nothing would ever wake the server.
 */
static int run_until_settled(struct umcg_worker *w, int ms)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) + ms * 1000000ULL;
	int ret = umcg_run_worker(&c->s, w, umcg_deadline(ms * 1000000ULL));

	if (ret && ret != -EINTR && ret != -ETIMEDOUT)
		return ret;
	while (umcg_still_running(&c->s, w)) {
		if (umcg_now_ns(CLOCK_MONOTONIC) > end)
			return -ETIMEDOUT;
		umcg_server_wait_current(&c->s, umcg_deadline(100000000ULL));
	}
	c->s.current = NULL;
	return 0;
}

static void setup(struct __test_metadata *_metadata, bool protect_now)
{
	long fd;

	c = umcg_test_zalloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, pipe(c->pipefd));
	c->word = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, c->word);
	umcg_group_init(&c->g);
	c->g.idle_server = c->word;
	ASSERT_EQ(0, umcg_server_register(&c->s, &c->g));

	fd = uffd_open();
	if (fd == -ENOSYS || fd == -EPERM)
		SKIP(return, "no userfaultfd (CONFIG_USERFAULTFD not set?): %s",
		     strerror((int)-fd));
	ASSERT_LE(0, fd);
	c->uffd = (int)fd;
	{
		struct uffdio_register reg = {
			.range = { .start = (uintptr_t)c->word, .len = 4096 },
			.mode = UFFDIO_REGISTER_MODE_WP,
		};

		ASSERT_EQ(0, ioctl(c->uffd, UFFDIO_REGISTER, &reg))
			TH_LOG("UFFDIO_REGISTER WP: %s", strerror(errno));
	}
	if (protect_now) {
		/* This server is the published idle server. */
		__atomic_store_n(c->word, (uint32_t)c->s.tid, __ATOMIC_SEQ_CST);
		ASSERT_EQ(0, uffd_wp(c->uffd, c->word, true));
	}
}

/* Fault 1 has happened (worker IDLE on the list): run it into fault 2. */
static void run_through_faults(struct __test_metadata *_metadata, pthread_t h)
{
	struct umcg_worker *w;
	int i, ret;

	for (i = 0; i < 20000 && !__atomic_load_n(&c->faults, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, c->faults) TH_LOG("the worker never faulted on the idle-server word");
	w = take_worker(5000);
	ASSERT_EQ(&c->w, w);
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK);

	/* Run it; the handler lets it fault again, RUNNING, then resolves. */
	ret = run_until_settled(w, 15000);
	pthread_join(h, NULL);
	ASSERT_EQ(0, c->handler_err);
	EXPECT_EQ(2, c->faults);
	TH_LOG("worker state while it slept in the second fault: %#x, after: %#x, server woke %llu times",
	       c->state_at_fault2, umcg_task_state(&w->task),
	       (unsigned long long)c->s.wakeups);
	/* The fault was not blocking: the worker stayed RUNNING in it. */
	EXPECT_EQ(0, ret);
	EXPECT_EQ(UMCG_TASK_RUNNING, c->state_at_fault2 & UMCG_TASK_STATE_MASK)
		TH_LOG("the fault in the wake path was reported as blocking");
	/* The idle-server word was consumed by the kernel. */
	EXPECT_EQ(0, __atomic_load_n(c->word, __ATOMIC_SEQ_CST));
}

TEST(fault_in_register_wake)
{
	struct umcg_worker *w;
	pthread_t t, h;

	UMCG_REQUIRE();
	setup(_metadata, true);
	ASSERT_EQ(0, pthread_create(&h, NULL, precheck_handler, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	pthread_join(h, NULL);
	ASSERT_EQ(0, c->handler_err);
	EXPECT_EQ(1, c->faults);
	EXPECT_EQ(0, c->listed_at_fault1)
		TH_LOG("the registration faulted after it queued the worker");
	w = take_worker(10000);
	ASSERT_EQ(&c->w, w);
	/* The idle-server word was consumed by the kernel's wake. */
	EXPECT_EQ(0, __atomic_load_n(c->word, __ATOMIC_SEQ_CST));
	ASSERT_EQ(0, run_until_settled(w, 10000));
	/* It ran its code after registering, then blocked in read(). */
	ASSERT_EQ(1, __atomic_load_n(&c->progress, __ATOMIC_SEQ_CST))
		TH_LOG("the worker never returned from umcg_ctl()");
	EXPECT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&c->w.task) & UMCG_TASK_STATE_MASK);

	/* Finish: it wakes, queues itself (no idle server now), leaves. */
	ASSERT_EQ(1, write(c->pipefd[1], "x", 1));
	ASSERT_EQ(&c->w, take_worker(10000));
	ASSERT_EQ(0, run_until_settled(&c->w, 10000));
	ASSERT_EQ(2, c->progress);
	ASSERT_EQ(UMCG_TASK_NONE, umcg_task_state(&c->w.task) & UMCG_TASK_STATE_MASK);
	pthread_join(t, NULL);
	EXPECT_EQ(0, umcg_unregister());
}

TEST(fault_in_wake_after_block)
{
	pthread_t t, h;

	UMCG_REQUIRE();
	setup(_metadata, false);
	ASSERT_EQ(0, pthread_create(&t, NULL, worker, NULL));
	ASSERT_EQ(&c->w, take_worker(10000));
	/* Run it: it blocks in read(). */
	ASSERT_EQ(0, run_until_settled(&c->w, 10000));
	ASSERT_EQ(1, c->progress);
	ASSERT_EQ(UMCG_TASK_BLOCKED, umcg_task_state(&c->w.task) & UMCG_TASK_STATE_MASK);

	/* Publish this server as the idle server, on the protected page. */
	__atomic_store_n(c->word, (uint32_t)c->s.tid, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, uffd_wp(c->uffd, c->word, true));
	ASSERT_EQ(0, pthread_create(&h, NULL, handler, NULL));
	/* Unblock it: on its way out it queues itself and faults. */
	ASSERT_EQ(1, write(c->pipefd[1], "x", 1));
	run_through_faults(_metadata, h);
	/* read() returned and the worker left (else it is parked for good). */
	ASSERT_EQ(2, c->progress);
	ASSERT_EQ(UMCG_TASK_NONE, umcg_task_state(&c->w.task) & UMCG_TASK_STATE_MASK);
	pthread_join(t, NULL);
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
