/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libumcg - a small header-only userspace library for UMCG
 * (User Managed Concurrency Groups, umcg_ctl(2)/umcg_wait(2)).
 *
 * It implements the protocols of Documentation/userspace-api/umcg.rst:
 * register a server or a worker, run a worker (server -> worker switch),
 * worker yield, worker -> worker switch, take the idle-worker list, publish
 * an idle server, and preempt a worker.  umcg_server_loop() is a complete
 * (FIFO) server built from these steps.
 *
 * Header-only (static inline) on purpose: in guest-tests every *.c file of
 * a suite folder is a test program and every lib .c file is linked into every
 * test of every suite, so a library .c file has no place to live.
 */
#ifndef GUEST_TESTS_LIBUMCG_H
#define GUEST_TESTS_LIBUMCG_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
# if __has_include(<linux/umcg.h>)
#  include <linux/umcg.h>
#  define LIBUMCG_HAVE_UAPI 1
# endif
#endif

#ifndef LIBUMCG_HAVE_UAPI
/* Headers of a kernel without the UMCG UAPI: same ABI, defined here. */
#include <linux/types.h>
#define UMCG_TASK_NONE			0
#define UMCG_TASK_RUNNING		1
#define UMCG_TASK_IDLE			2
#define UMCG_TASK_BLOCKED		3
#define UMCG_TASK_STATE_MASK		0xffU
#define UMCG_TF_LOCKED			(1U << 8)
#define UMCG_TF_PREEMPTED		(1U << 9)
#define UMCG_TASK_FLAGS_MASK		0xff00U
#define UMCG_TASK_RESERVED_MASK		0xff0000U
#define UMCG_TASK_USER_MASK		0xff000000U
#define UMCG_TASK_ALIGN			64
struct umcg_task {
	__u32	state;
	__u32	next_tid;
	__u64	idle_workers_ptr;
	__u64	idle_server_tid_ptr;
	__u64	__reserved[5];
} __attribute__((aligned(UMCG_TASK_ALIGN)));
enum umcg_ctl_flag {
	UMCG_CTL_REGISTER	= 0x00001,
	UMCG_CTL_UNREGISTER	= 0x00002,
	UMCG_CTL_WORKER		= 0x10000,
};
enum umcg_wait_flag {
	UMCG_WAIT_WAKE_ONLY		= 1,
	UMCG_WAIT_WF_CURRENT_CPU	= 2,
	UMCG_WAIT_PREEMPT		= 4,
};
#endif

/* Older UAPI headers left these to the reader. */
#ifndef UMCG_TASK_ALIGN
#define UMCG_TASK_ALIGN			64
#endif
#ifndef UMCG_TASK_USER_MASK
#define UMCG_TASK_USER_MASK		0xff000000U
#endif

#ifndef __NR_umcg_ctl
#define __NR_umcg_ctl	548
#endif
#ifndef __NR_umcg_wait
#define __NR_umcg_wait	549
#endif

/*
 * Bit 24 (a userspace bit of the state word): set by a worker that gives
 * its CPU back on purpose (yield, worker -> worker switch).  It tells the
 * server "this IDLE worker is yours to run again", as opposed to a worker
 * that blocked and woke up, which the kernel has put on the idle list.
 * A yielding worker sets it together with UMCG_TF_LOCKED, its claim on
 * itself for its server: IDLE | LOCKED | HANDOFF is a worker that only
 * w->server may run again, without a claim of its own.
 */
#define LIBUMCG_TF_HANDOFF	(1U << 24)

/*
 * Is this kernel's 548/549 UMCG?  The numbers are UMCG's only on
 * kernels that carry the UMCG patches; they are out of tree, right after
 * x32's range and above mainline's (earlier versions used 463/464,
 * setxattrat() and getxattrat() from Linux 6.13 on), but another out-of-tree series could use them too.
 * So libumcg probes once, before it issues any UMCG call, for answers only
 * UMCG gives (and that cannot change anything):
 *
 *  - umcg_ctl(REGISTER, self misaligned) is EINVAL, and with self 64-byte
 *    aligned but unmapped it is EFAULT: the alignment decides.
 *  - umcg_wait(WF_CURRENT_CPU without WAKE_ONLY) is EINVAL.
 *
 * The unused argument registers hold 16 as a sixth argument: the *xattrat()
 * calls then read a 16-byte struct xattr_args from NULL and fail with
 * EFAULT in all three cases, and calls that take no such argument do not
 * see it.  ENOSYS everywhere means the kernel has no UMCG.
 */
enum umcg_abi {
	UMCG_ABI_NONE,		/* both calls ENOSYS: no UMCG in this kernel */
	UMCG_ABI_OK,		/* the numbers answer like UMCG */
	UMCG_ABI_FOREIGN,	/* they are other system calls: refuse */
};

static inline enum umcg_abi umcg_abi_probe_nr(long nr_ctl, long nr_wait)
{
	long r;

	errno = 0;
	r = syscall(nr_ctl, UMCG_CTL_REGISTER,
		    (unsigned long)UMCG_TASK_ALIGN + 8, 0UL, 0UL, 0UL, 16UL);
	if (r == -1 && errno == ENOSYS) {
		r = syscall(nr_wait, UMCG_WAIT_WF_CURRENT_CPU, 0UL, 0UL, 0UL,
			    0UL, 16UL);
		return r == -1 && errno == ENOSYS ? UMCG_ABI_NONE :
						    UMCG_ABI_FOREIGN;
	}
	if (r != -1 || errno != EINVAL)
		return UMCG_ABI_FOREIGN;
	r = syscall(nr_ctl, UMCG_CTL_REGISTER, (unsigned long)UMCG_TASK_ALIGN,
		    0UL, 0UL, 0UL, 16UL);
	if (r != -1 || errno != EFAULT)
		return UMCG_ABI_FOREIGN;
	r = syscall(nr_wait, UMCG_WAIT_WF_CURRENT_CPU, 0UL, 0UL, 0UL, 0UL,
		    16UL);
	if (r != -1 || errno != EINVAL)
		return UMCG_ABI_FOREIGN;
	return UMCG_ABI_OK;
}

/* The probe of __NR_umcg_ctl/__NR_umcg_wait, done once per process. */
static inline enum umcg_abi umcg_abi(void)
{
	static int cached = -1;		/* benign race: the probe is idempotent */
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (v < 0) {
		int saved = errno;

		v = umcg_abi_probe_nr(__NR_umcg_ctl, __NR_umcg_wait);
		errno = saved;
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return (enum umcg_abi)v;
}

/* Both wrappers refuse (ENOSYS) unless the probe found UMCG. */
static inline long umcg_ctl(uint32_t flags, struct umcg_task *self)
{
	if (umcg_abi() != UMCG_ABI_OK) {
		errno = ENOSYS;
		return -1;
	}
	return syscall(__NR_umcg_ctl, flags, self);
}

static inline long umcg_wait(uint32_t flags, uint64_t abs_timeout)
{
	if (umcg_abi() != UMCG_ABI_OK) {
		errno = ENOSYS;
		return -1;
	}
	return syscall(__NR_umcg_wait, flags, abs_timeout);
}

static inline pid_t umcg_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline uint64_t umcg_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Absolute CLOCK_REALTIME deadline @ns from now, as umcg_wait() wants. */
static inline uint64_t umcg_deadline(uint64_t ns)
{
	return umcg_now_ns(CLOCK_REALTIME) + ns;
}

/* All shared words are updated with sequentially consistent atomics. */
static inline uint32_t umcg_load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static inline bool umcg_cas(uint32_t *p, uint32_t old, uint32_t new)
{
	return __atomic_compare_exchange_n(p, &old, new, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static inline uint32_t umcg_task_state(struct umcg_task *t)
{
	return umcg_load(&t->state);
}

/*
 * A group: the idle-worker list and the idle-server word its workers use,
 * and the servers that sleep while another one is the idle server.
 */
struct umcg_group {
	uint64_t	idle_workers;		/* list head, 8-byte aligned */
	uint32_t	idle_server_tid;	/* 0 or the TID of an idle server */
	uint32_t	nr_workers;		/* registered and not finished */
	uint32_t	*idle_server;		/* the idle-server word workers
						 * register with: &idle_server_tid
						 * unless the program moves it */
	pthread_mutex_t	lock;			/* parked, stopping */
	struct umcg_server *parked;		/* idle servers not published */
	struct umcg_server *published;		/* the server in *idle_server */
	int		stopping;		/* no workers left: servers quit */
};

struct umcg_server;

struct umcg_worker {
	struct umcg_task	task;		/* first: list entries point here */
	pid_t			tid;
	struct umcg_server	*server;	/* the server running it */
	struct umcg_worker	*next;		/* server's run queue link */
	void			*data;		/* for the application */
};

struct umcg_server {
	struct umcg_task	task;
	pid_t			tid;
	struct umcg_group	*group;
	struct umcg_worker	*current;	/* the worker it runs */
	struct umcg_worker	*rq_head, *rq_tail; /* private FIFO */
	struct umcg_server	*next_parked;	/* group->parked link */
	bool			parked;		/* on group->parked */
	uint64_t		switches;	/* workers run */
	uint64_t		wakeups;	/* umcg_wait() returns */
	int			phase;		/* where it waits, for debugging */
};

static inline void umcg_group_init(struct umcg_group *g)
{
	memset(g, 0, sizeof(*g));
	g->idle_server = &g->idle_server_tid;
	pthread_mutex_init(&g->lock, NULL);
}

/* Register the calling thread as a server of @g (state RUNNING). */
static inline int umcg_server_register(struct umcg_server *s,
				       struct umcg_group *g)
{
	memset(s, 0, sizeof(*s));
	s->task.state = UMCG_TASK_RUNNING;
	s->group = g;
	s->tid = umcg_gettid();
	return umcg_ctl(UMCG_CTL_REGISTER, &s->task) ? -errno : 0;
}

/*
 * Register the calling thread as a worker of @g.  The worker starts IDLE on
 * the group's idle list; this returns once a server runs it.
 */
static inline int umcg_worker_register(struct umcg_worker *w,
				       struct umcg_group *g, void *data)
{
	memset(w, 0, sizeof(*w));
	w->task.state = UMCG_TASK_IDLE;
	w->task.idle_workers_ptr = (uint64_t)(uintptr_t)&g->idle_workers;
	w->task.idle_server_tid_ptr = (uint64_t)(uintptr_t)g->idle_server;
	w->tid = umcg_gettid();
	w->data = data;
	__atomic_add_fetch(&g->nr_workers, 1, __ATOMIC_SEQ_CST);
	if (umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, &w->task)) {
		int err = -errno;

		__atomic_sub_fetch(&g->nr_workers, 1, __ATOMIC_SEQ_CST);
		return err;
	}
	return 0;
}

/*
 * Unregister a worker.  If it is RUNNING, the kernel sets its state to NONE
 * and wakes its server.
 */
static inline int umcg_worker_unregister(struct umcg_worker *w,
					 struct umcg_group *g)
{
	(void)w;
	__atomic_sub_fetch(&g->nr_workers, 1, __ATOMIC_SEQ_CST);
	return umcg_ctl(UMCG_CTL_UNREGISTER, NULL) ? -errno : 0;
}

static inline int umcg_unregister(void)
{
	return umcg_ctl(UMCG_CTL_UNREGISTER, NULL) ? -errno : 0;
}

/*
 * Take the whole idle-worker list (the kernel only pushes; taking it all
 * with one exchange avoids ABA).  Returns the first entry; ->task's
 * idle_workers_ptr links to the next.
 */
static inline struct umcg_worker *umcg_take_idle(struct umcg_group *g)
{
	return (struct umcg_worker *)(uintptr_t)
		__atomic_exchange_n(&g->idle_workers, 0, __ATOMIC_SEQ_CST);
}

static inline struct umcg_worker *umcg_idle_next(struct umcg_worker *w)
{
	return (struct umcg_worker *)(uintptr_t)
		__atomic_load_n(&w->task.idle_workers_ptr, __ATOMIC_SEQ_CST);
}

static inline void umcg_rq_push(struct umcg_server *s, struct umcg_worker *w)
{
	w->next = NULL;
	if (s->rq_tail)
		s->rq_tail->next = w;
	else
		s->rq_head = w;
	s->rq_tail = w;
}

static inline struct umcg_worker *umcg_rq_pop(struct umcg_server *s)
{
	struct umcg_worker *w = s->rq_head;

	if (w) {
		s->rq_head = w->next;
		if (!s->rq_head)
			s->rq_tail = NULL;
	}
	return w;
}

/* Make the server RUNNING again after umcg_wait() returned an error. */
static inline void umcg_server_set_running(struct umcg_server *s)
{
	umcg_cas(&s->task.state, UMCG_TASK_IDLE, UMCG_TASK_RUNNING);
}

/*
 * Did @w (state @st) yield to @s?  A yielding worker claims itself
 * (IDLE | LOCKED | HANDOFF) for the server in its next_tid: only that server
 * may run it again, and only that one queues it.
 */
static inline bool umcg_yielded_to(struct umcg_server *s,
				   struct umcg_worker *w, uint32_t st)
{
	return (st & (UMCG_TASK_STATE_MASK | UMCG_TF_LOCKED |
		      LIBUMCG_TF_HANDOFF)) ==
	       (UMCG_TASK_IDLE | UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF) &&
	       __atomic_load_n(&w->task.next_tid, __ATOMIC_SEQ_CST) ==
	       (uint32_t)s->tid;
}

/*
 * Server -> worker switch.  Claims @w (IDLE, possibly PREEMPTED) by setting
 * UMCG_TF_LOCKED (a worker that yielded to this server claimed itself for
 * it already), points its next_tid at this server, makes it RUNNING,
 * marks the server IDLE, and calls
 * umcg_wait() with next_tid = @w: the kernel wakes @w on this CPU and puts
 * the server to sleep until something makes it RUNNING again (the worker
 * blocked, yielded, switched, was preempted or left).
 *
 * Returns 0, -EAGAIN if @w was not IDLE, or umcg_wait()'s error.
 */
static inline int umcg_run_worker(struct umcg_server *s, struct umcg_worker *w,
				  uint64_t abs_timeout)
{
	uint32_t st = umcg_task_state(&w->task);
	long ret;

	if ((st & UMCG_TASK_STATE_MASK) != UMCG_TASK_IDLE)
		return -EAGAIN;
	/* Claim it (IDLE|LOCKED) before touching next_tid. */
	if (!umcg_yielded_to(s, w, st) &&
	    ((st & UMCG_TF_LOCKED) ||
	     !umcg_cas(&w->task.state, st, st | UMCG_TF_LOCKED)))
		return -EAGAIN;
	w->server = s;
	s->current = w;
	__atomic_store_n(&w->task.next_tid, s->tid, __ATOMIC_SEQ_CST);
	__atomic_store_n(&w->task.state, UMCG_TASK_RUNNING, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->task.state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->task.next_tid, w->tid, __ATOMIC_SEQ_CST);
	s->phase = 1;
	ret = umcg_wait(0, abs_timeout);
	s->phase = 0;
	s->task.next_tid = 0;
	s->switches++;
	s->wakeups++;
	if (ret) {
		ret = -errno;
		umcg_server_set_running(s);
	}
	return (int)ret;
}

/*
 * Is @w still RUNNING for server @s?  RUNNING alone is not enough: the
 * worker may have blocked, woken up and been taken by another server in
 * the meantime.  Another server points next_tid at itself before it makes
 * the worker RUNNING, so RUNNING with next_tid == @s is still ours.
 */
static inline bool umcg_still_running(struct umcg_server *s,
				      struct umcg_worker *w)
{
	uint32_t st = umcg_task_state(&w->task);

	return (st & UMCG_TASK_STATE_MASK) == UMCG_TASK_RUNNING &&
	       __atomic_load_n(&w->task.next_tid, __ATOMIC_SEQ_CST) ==
	       (uint32_t)s->tid;
}

/*
 * The server's worker is still RUNNING (umcg_wait() returned for an event
 * of another worker, a signal or a timeout): sleep until it is not.
 * Ordering: the server marks itself IDLE before it re-reads the worker's
 * state; a yielding worker marks itself IDLE before it makes the server
 * RUNNING.  So the server either sees the worker gone, or is woken.
 */
static inline int umcg_server_wait_current(struct umcg_server *s,
					   uint64_t abs_timeout)
{
	struct umcg_worker *w = s->current;
	long ret;

	__atomic_store_n(&s->task.state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	if (!umcg_still_running(s, w)) {
		umcg_server_set_running(s);
		return 0;
	}
	s->phase = 2;
	ret = umcg_wait(0, abs_timeout);
	s->phase = 0;
	s->wakeups++;
	if (ret) {
		ret = -errno;
		umcg_server_set_running(s);
	}
	return (int)ret;
}

/* Make @target (a server sleeping IDLE) RUNNING and wake it. */
static inline void umcg_server_wake(struct umcg_server *s,
				    struct umcg_server *target)
{
	/* The initiator writes the new state, then wakes. */
	__atomic_store_n(&target->task.state, UMCG_TASK_RUNNING,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->task.next_tid, target->tid, __ATOMIC_SEQ_CST);
	umcg_wait(UMCG_WAIT_WAKE_ONLY, 0);
	s->task.next_tid = 0;
}

/* Called with g->lock held: take @s off the parked list if it is there. */
static inline void umcg_unpark_locked(struct umcg_group *g,
				      struct umcg_server *s)
{
	struct umcg_server **pp;

	for (pp = &g->parked; *pp; pp = &(*pp)->next_parked) {
		if (*pp == s) {
			*pp = s->next_parked;
			break;
		}
	}
	s->next_parked = NULL;
	s->parked = false;
}

/*
 * The group has no workers left: wake every idle server so that their
 * loops end.  Sleeping servers are only ever woken by the kernel (a worker
 * on the idle list) or by another server, never by a timeout.
 */
static inline void umcg_group_stop(struct umcg_server *s)
{
	struct umcg_group *g = s->group;
	struct umcg_server *p;

	pthread_mutex_lock(&g->lock);
	__atomic_store_n(&g->stopping, 1, __ATOMIC_SEQ_CST);
	while ((p = g->parked)) {
		umcg_unpark_locked(g, p);
		umcg_server_wake(s, p);
	}
	p = g->published;
	if (p && p != s &&
	    umcg_cas(g->idle_server, (uint32_t)p->tid, 0)) {
		g->published = NULL;
		umcg_server_wake(s, p);
	}
	pthread_mutex_unlock(&g->lock);
}

/*
 * Sleep until a worker is on the idle list (or @abs_timeout, 0 for none).
 *
 * The kernel wakes one idle server per group: the one whose TID is in the
 * idle-server word.  A server that finds the word taken parks on the group
 * instead, and whichever server the kernel wakes hands the word to a parked
 * one before it takes the list, so there is always one published server
 * while any sleeps.  Nobody polls: a lost wakeup here is a hang, not just
 * a slow run.
 *
 * Ordering: a server publishes its TID (a full barrier) before it checks
 * the idle list; the kernel pushes a worker (a full barrier) before it reads
 * the idle-server word.  So either the server sees the worker, or the
 * kernel sees the server.  A promoted server was published before the
 * promoting server took the list, so a push after that take finds it.
 */
static inline int umcg_server_idle(struct umcg_server *s, uint64_t abs_timeout)
{
	struct umcg_group *g = s->group;
	bool published = false;
	long ret = 0;

	pthread_mutex_lock(&g->lock);
	if (g->stopping ||
	    __atomic_load_n(&g->idle_workers, __ATOMIC_SEQ_CST) ||
	    !__atomic_load_n(&g->nr_workers, __ATOMIC_SEQ_CST)) {
		pthread_mutex_unlock(&g->lock);
		return 0;
	}
	__atomic_store_n(&s->task.state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	if (umcg_cas(g->idle_server, 0, s->tid)) {
		g->published = s;
		published = true;
	} else {
		s->next_parked = g->parked;
		g->parked = s;
		s->parked = true;
	}
	pthread_mutex_unlock(&g->lock);

	if (!published ||
	    !__atomic_load_n(&g->idle_workers, __ATOMIC_SEQ_CST) ||
	    !umcg_cas(g->idle_server, (uint32_t)s->tid, 0)) {
		/*
		 * Sleep.  If the kernel took our TID after we saw a worker,
		 * it posts an event and this returns at once.
		 */
		s->phase = 3;
		ret = umcg_wait(0, abs_timeout);
		s->phase = 0;
		s->wakeups++;
		if (ret)
			ret = -errno;
	}

	pthread_mutex_lock(&g->lock);
	if (s->parked)
		umcg_unpark_locked(g, s);
	if (g->published == s) {
		/* Timeout, signal, or the word was cleared by the kernel. */
		umcg_cas(g->idle_server, (uint32_t)s->tid, 0);
		g->published = NULL;
	}
	/* Hand the word to a parked server before our caller takes the list. */
	if (!g->stopping && !g->published && g->parked &&
	    umcg_cas(g->idle_server, 0, (uint32_t)g->parked->tid)) {
		g->published = g->parked;
		umcg_unpark_locked(g, g->published);
	}
	pthread_mutex_unlock(&g->lock);
	umcg_server_set_running(s);
	return (int)ret;
}

/*
 * Worker: give the CPU back to its server and wait to be run again.
 * The worker claims itself (IDLE | LOCKED): umcg_wait() wakes the next_tid
 * it finds, and a plain IDLE worker could be claimed by another server
 * before that, which would point next_tid at itself, get the wakeup and
 * leave this server asleep with its state already RUNNING.  The claim
 * stays until this server runs the worker again (umcg_run_worker()).
 */
static inline int umcg_worker_yield(struct umcg_worker *w)
{
	struct umcg_server *s = w->server;
	uint32_t st;

	do {
		st = umcg_task_state(&w->task);
	} while (!umcg_cas(&w->task.state, st,
			   (st & ~UMCG_TASK_STATE_MASK) | UMCG_TASK_IDLE |
			   UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF));
	/* Worker IDLE first, then the server RUNNING: see wait_current(). */
	__atomic_store_n(&s->task.state, UMCG_TASK_RUNNING, __ATOMIC_SEQ_CST);
	while (umcg_wait(0, 0)) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/*
 * Worker -> worker switch: hand this worker's server to @next (IDLE) and
 * wait.  The server is not woken; it now runs @next.  Returns -EAGAIN if
 * @next was not IDLE.
 */
static inline int umcg_worker_switch(struct umcg_worker *w,
				     struct umcg_worker *next)
{
	struct umcg_server *s = w->server;
	uint32_t st = umcg_task_state(&next->task);

	if ((st & UMCG_TASK_STATE_MASK) != UMCG_TASK_IDLE ||
	    (st & UMCG_TF_LOCKED))
		return -EAGAIN;
	if (!umcg_cas(&next->task.state, st, st | UMCG_TF_LOCKED))
		return -EAGAIN;
	next->server = s;
	__atomic_store_n(&next->task.next_tid, s->tid, __ATOMIC_SEQ_CST);
	__atomic_store_n(&next->task.state, UMCG_TASK_RUNNING,
			 __ATOMIC_SEQ_CST);
	s->current = next;
	/* @w is now the server's to run again (it will see HANDOFF). */
	umcg_rq_push(s, w);
	do {
		st = umcg_task_state(&w->task);
	} while (!umcg_cas(&w->task.state, st,
			   (st & ~UMCG_TASK_STATE_MASK) | UMCG_TASK_IDLE));
	__atomic_store_n(&w->task.next_tid, next->tid, __ATOMIC_SEQ_CST);
	while (umcg_wait(0, 0)) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/*
 * The request half of a preemption: RUNNING -> RUNNING|PREEMPTED.  False
 * if the worker was not RUNNING (or is claimed, or has a request already).
 */
static inline bool umcg_request_preemption(struct umcg_worker *w)
{
	uint32_t st = umcg_task_state(&w->task);

	return (st & (UMCG_TASK_STATE_MASK | UMCG_TF_LOCKED |
		      UMCG_TF_PREEMPTED)) == UMCG_TASK_RUNNING &&
	       umcg_cas(&w->task.state, st, st | UMCG_TF_PREEMPTED);
}

/*
 * Preempt a worker: the request, then a signal (which must have a
 * handler).  The kernel parks the worker IDLE|PREEMPTED and wakes its
 * server.  Returns -EAGAIN if the worker was not RUNNING.
 */
static inline int umcg_preempt_worker(struct umcg_worker *w, int sig)
{
	if (!umcg_request_preemption(w))
		return -EAGAIN;
	return syscall(SYS_tgkill, getpid(), w->tid, sig) ? -errno : 0;
}

/*
 * Preempt a worker without a signal: the request, then
 * umcg_wait(UMCG_WAIT_PREEMPT) with @self->next_tid naming it, which
 * brings it into the kernel even when it blocks or ignores every signal.
 * @self is a registered server that is not waiting (its next_tid is
 * restored).  Returns -EAGAIN if the worker was not RUNNING, -errno if the
 * call failed.
 */
static inline int umcg_kick_worker(struct umcg_server *self,
				   struct umcg_worker *w)
{
	uint32_t next = self->task.next_tid;
	long r;

	if (!umcg_request_preemption(w))
		return -EAGAIN;
	self->task.next_tid = w->tid;
	r = umcg_wait(UMCG_WAIT_PREEMPT, 0);
	self->task.next_tid = next;
	return r ? -errno : 0;
}

/*
 * What the server does with its current worker after umcg_wait() returned.
 * Returns true when the server is done with it (it blocked, yielded, was
 * preempted or left), false while it still runs.
 */
static inline bool umcg_server_settle(struct umcg_server *s)
{
	struct umcg_worker *w = s->current;
	uint32_t st;

	if (!w)
		return true;
	st = umcg_task_state(&w->task);
	switch (st & UMCG_TASK_STATE_MASK) {
	case UMCG_TASK_RUNNING:
		/* Still ours (or a preemption is pending): keep waiting. */
		if (umcg_still_running(s, w))
			return false;
		/* It blocked, woke up and another server runs it now. */
		break;
	case UMCG_TASK_IDLE:
		if (st & UMCG_TF_PREEMPTED) {
			/* Parked by the kernel, not queued: ours to requeue. */
			umcg_rq_push(s, w);
		} else if (umcg_yielded_to(s, w, st)) {
			/*
			 * Yielded: ours, IDLE | LOCKED | HANDOFF until we run
			 * it again.  (A switch queued it already.)  Yielded to
			 * another server, it is in that one's queue: it blocked
			 * and woke since we last looked, and was run there.
			 */
			umcg_rq_push(s, w);
		}
		/* Otherwise it blocked and woke: it is on the idle list. */
		break;
	default:
		/* BLOCKED (will appear on the idle list) or NONE (left). */
		break;
	}
	s->current = NULL;
	return true;
}

/*
 * A complete FIFO server: run workers from the private queue and the idle
 * list until @g has no workers left (or *@stop), then wake the group's other
 * idle servers so they end too.  No step polls or times out.  Returns 0 or
 * an error.
 */
static inline int umcg_server_loop(struct umcg_server *s, volatile int *stop)
{
	struct umcg_group *g = s->group;
	struct umcg_worker *w;
	int ret;

	while (!(stop && *stop)) {
		if (s->current) {
			if (!umcg_server_settle(s)) {
				ret = umcg_server_wait_current(s, 0);
				if (ret && ret != -EINTR)
					return ret;
				continue;
			}
		}
		w = umcg_take_idle(g);
		while (w) {
			struct umcg_worker *n = umcg_idle_next(w);

			umcg_rq_push(s, w);
			w = n;
		}
		w = umcg_rq_pop(s);
		if (!w) {
			if (!__atomic_load_n(&g->nr_workers, __ATOMIC_SEQ_CST)) {
				umcg_group_stop(s);
				break;
			}
			if (__atomic_load_n(&g->stopping, __ATOMIC_SEQ_CST))
				break;
			ret = umcg_server_idle(s, 0);
			if (ret && ret != -EINTR)
				return ret;
			continue;
		}
		ret = umcg_run_worker(s, w, 0);
		if (ret == -EAGAIN) {
			s->current = NULL;
			continue;
		}
		if (ret && ret != -EINTR)
			return ret;
	}
	return 0;
}

#endif /* GUEST_TESTS_LIBUMCG_H */
