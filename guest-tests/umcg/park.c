// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/park: a worker waiting to be run (parked) does not run user code,
 * but it does not block group stop, ptrace or the freezer either (issue 9,
 * item 2).  A parked worker sleeps interruptibly: a signal lets the kernel
 * do its work (stop, ptrace stop, freeze, set up a handler) and the worker
 * parks again before any user code runs.  The same holds for a worker that
 * yielded and sleeps in umcg_wait(): its signal handler runs only once a
 * server runs it again.
 *
 * Each process-wide test runs the UMCG process as a child, so that the
 * test itself can stop, trace or freeze it, and kill it if it hangs.
 */
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "umcg_test.h"

/* Shared between the test and its child process. */
struct shared {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			pipefd[2];
	int			block_first;	/* worker blocks in read() first */
	int			ready;		/* child: worker parked */
	int			run;		/* test: now run the worker */
	int			progress;	/* worker: 1 registered, 2 read */
	int			handled;
	int			handled_at_progress;
	int			child_err;
	int			set_mask;	/* worker blocks SIGUSR2 first */
	char			blk_before[20];	/* its SigBlk then */
	char			blk_after[20];	/* and after the park */
	int			spin;		/* worker spins, RUNNING */
	int			spin_stop;
	int			back;		/* child: worker parked again */
};

/* start_child()'s flags */
#define CHILD_BLOCK_FIRST	1
#define CHILD_SET_MASK		2
#define CHILD_SPIN		4

static struct shared *sh;

static void handler(int sig)
{
	(void)sig;
	__atomic_add_fetch(&sh->handled, 1, __ATOMIC_SEQ_CST);
}

/* This thread's blocked-signal mask, as /proc shows it. */
static bool own_sigblk(char *buf, size_t len)
{
	return umcg_task_status(getpid(), umcg_gettid(), "SigBlk", buf, len);
}

static void *child_worker(void *arg)
{
	sigset_t some;
	char ch;

	(void)arg;
	if (sh->set_mask) {
		sigemptyset(&some);
		sigaddset(&some, SIGUSR2);
		sigaddset(&some, SIGRTMIN + 2);
		if (pthread_sigmask(SIG_BLOCK, &some, NULL) ||
		    !own_sigblk(sh->blk_before, sizeof(sh->blk_before)))
			return (void *)3;
	}
	if (umcg_worker_register(&sh->w, &sh->g, NULL))
		return (void *)1;
	__atomic_store_n(&sh->progress, 1, __ATOMIC_SEQ_CST);
	if (sh->block_first) {
		if (read(sh->pipefd[0], &ch, 1) != 1)
			return (void *)2;
		__atomic_store_n(&sh->progress, 2, __ATOMIC_SEQ_CST);
		if (sh->set_mask &&
		    !own_sigblk(sh->blk_after, sizeof(sh->blk_after)))
			return (void *)4;
	}
	if (sh->spin) {
		__atomic_store_n(&sh->ready, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&sh->spin_stop, __ATOMIC_RELAXED))
			;	/* RUNNING in userspace, no system call */
	}
	sh->handled_at_progress = __atomic_load_n(&sh->handled, __ATOMIC_SEQ_CST);
	umcg_worker_unregister(&sh->w, &sh->g);
	return NULL;
}

static struct umcg_worker *child_take(int ms)
{
	struct umcg_worker *w;

	while (!(w = umcg_take_idle(&sh->g)) && ms-- > 0)
		usleep(1000);
	return w;
}

/*
 * The UMCG process: a server (this thread) and one worker.  The worker
 * parks in umcg_ctl() (or, with block_first, after it blocked in read()
 * and woke up) and the child reports ready; it is run once the test says.
 */
static int child_main(void)
{
	struct sigaction sa = { .sa_handler = handler };
	struct umcg_worker *w;
	pthread_t t;
	void *r;
	int i;

	if (sigaction(SIGUSR1, &sa, NULL))
		return 10;
	umcg_group_init(&sh->g);
	if (umcg_server_register(&sh->s, &sh->g))
		return 11;
	if (pthread_create(&t, NULL, child_worker, NULL))
		return 12;
	w = child_take(20000);
	if (w != &sh->w)
		return 13;
	if (sh->spin) {
		/*
		 * Run it; it spins until it stops (the test stops the
		 * process or ptrace-stops the worker): then it is BLOCKED,
		 * and once it continues it is back on the idle list.
		 */
		if (umcg_run_worker(&sh->s, w, 0))
			return 20;
		while (!umcg_server_settle(&sh->s))
			umcg_server_wait_current(&sh->s, 0);
		w = child_take(20000);
		if (w != &sh->w)
			return 21;
		__atomic_store_n(&sh->back, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&sh->spin_stop, 1, __ATOMIC_SEQ_CST);
	}
	if (sh->block_first) {
		/* run it into read(), then let it wake: it parks again */
		if (umcg_run_worker(&sh->s, w, 0) ||
		    (umcg_task_state(&w->task) & UMCG_TASK_STATE_MASK) !=
		    UMCG_TASK_BLOCKED)
			return 14;
		sh->s.current = NULL;
		if (write(sh->pipefd[1], "x", 1) != 1)
			return 15;
		w = child_take(20000);
		if (w != &sh->w)
			return 16;
	}
	/* parked: IDLE, off the list (we took it), asleep in the kernel */
	for (i = 0; i < 20000 && !strchr("SDI", umcg_task_state_letter(sh->w.tid)); i++)
		usleep(1000);
	__atomic_store_n(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sh->run, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (umcg_run_worker(&sh->s, w, 0))
		return 17;
	while (umcg_still_running(&sh->s, w))
		umcg_server_wait_current(&sh->s, 0);
	pthread_join(t, &r);
	if (r)
		return 18;
	if (umcg_task_state(&w->task) != UMCG_TASK_NONE)
		return 19;
	return 0;
}

/*
 * fork(), with the child killed when the test process dies (an assertion
 * that fails must not leave a worker spinning or a process frozen).
 */
static pid_t fork_tied(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0 &&
	    (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
		_exit(9);
	return pid;
}

static pid_t start_child(struct __test_metadata *_metadata, int flags)
{
	pid_t pid;
	int i;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	if (pipe(sh->pipefd))
		return -1;
	sh->block_first = !!(flags & CHILD_BLOCK_FIRST);
	sh->set_mask = !!(flags & CHILD_SET_MASK);
	sh->spin = !!(flags & CHILD_SPIN);
	pid = fork_tied();
	if (pid == 0)
		_exit(child_main());
	if (pid < 0)
		return -1;
	for (i = 0; i < 30000 && !__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	if (!sh->ready) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		TH_LOG("the UMCG child did not get its worker parked");
		return -1;
	}
	return pid;
}

/* waitpid() for up to @ms; the pid, 0 on timeout, -1 on error. */
static pid_t wait_for(pid_t pid, int *status, int options, int ms)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) + ms * 1000000ULL;
	pid_t r;

	do {
		r = waitpid(pid, status, options | WNOHANG);
		if (r)
			return r;
		usleep(1000);
	} while (umcg_now_ns(CLOCK_MONOTONIC) < end);
	return 0;
}

/* Let the child run its worker to the end; the child's exit status. */
static int finish_child(pid_t pid)
{
	int status;

	__atomic_store_n(&sh->run, 1, __ATOMIC_SEQ_CST);
	if (wait_for(pid, &status, 0, 20000) != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -ETIMEDOUT;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static uint64_t ms_since(uint64_t t0)
{
	return (umcg_now_ns(CLOCK_MONOTONIC) - t0) / 1000000ULL;
}

TEST(group_stop_with_parked_worker)
{
	uint64_t t0;
	pid_t pid;
	int status;

	UMCG_REQUIRE();
	pid = start_child(_metadata, 0);
	ASSERT_GT(pid, 0);

	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	if (wait_for(pid, &status, WUNTRACED, 5000) != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ASSERT_TRUE(0) TH_LOG("SIGSTOP: the group stop did not complete in 5 s with a parked worker");
	}
	ASSERT_TRUE(WIFSTOPPED(status));
	TH_LOG("stopped after %llu ms", (unsigned long long)ms_since(t0));
	EXPECT_LT(ms_since(t0), 1000);

	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, kill(pid, SIGCONT));
	ASSERT_EQ(pid, wait_for(pid, &status, WCONTINUED, 5000));
	ASSERT_TRUE(WIFCONTINUED(status));
	TH_LOG("continued after %llu ms", (unsigned long long)ms_since(t0));

	/* Still parked: no user code ran, it waits for a server. */
	usleep(100000);
	EXPECT_EQ(0, __atomic_load_n(&sh->progress, __ATOMIC_SEQ_CST));
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&sh->w.task));
	EXPECT_EQ(0, finish_child(pid));
	EXPECT_EQ(1, sh->progress);
}

/*
 * Seize the parked worker @tid of process @pid and stop it with
 * PTRACE_INTERRUPT; on failure it is killed and reaped, and the test fails.
 */
static void ptrace_stop_parked(struct __test_metadata *_metadata, pid_t pid,
			       pid_t tid, int *status)
{
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, tid, 0, 0));
	ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, tid, 0, 0));
	if (wait_for(tid, status, __WALL, 5000) != tid) {
		kill(pid, SIGKILL);
		/* the traced thread first: the process is reaped after it */
		waitpid(tid, NULL, __WALL);
		waitpid(pid, NULL, 0);
		ASSERT_TRUE(0) TH_LOG("PTRACE_INTERRUPT did not stop the parked worker in 5 s");
	}
	ASSERT_TRUE(WIFSTOPPED(*status));
}

TEST(ptrace_interrupt_parked_worker)
{
	uint64_t t0;
	pid_t pid, tid;
	int status;

	UMCG_REQUIRE();
	/* This one parks after blocking in read() and waking up. */
	pid = start_child(_metadata, CHILD_BLOCK_FIRST);
	ASSERT_GT(pid, 0);
	tid = sh->w.tid;

	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	ptrace_stop_parked(_metadata, pid, tid, &status);
	EXPECT_EQ(PTRACE_EVENT_STOP, status >> 16);
	TH_LOG("ptrace-stopped after %llu ms", (unsigned long long)ms_since(t0));
	EXPECT_LT(ms_since(t0), 1000);
	/* A tracer can read it while it is stopped. */
	errno = 0;
	ptrace(PTRACE_PEEKUSER, tid, 0, 0);
	EXPECT_EQ(0, errno);
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, tid, 0, 0));

	usleep(100000);
	/* read() has not returned to user code: still parked. */
	EXPECT_EQ(1, __atomic_load_n(&sh->progress, __ATOMIC_SEQ_CST));
	EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(&sh->w.task));
	EXPECT_EQ(0, finish_child(pid));
	EXPECT_EQ(2, sh->progress);
}

/*
 * The mask a worker had is the mask it has after a park, exactly.  A park
 * that no signal interrupts leaves the mask alone: blocking and restoring
 * it took the process-wide sighand->siglock twice per park and per yield
 * (issue 44, item 2).  From the first signal that interrupts the park on,
 * every catchable signal is blocked (so that the process's signals go to
 * threads that run) until the park ends, and a stop that interrupts the
 * park and parks the worker again must not save that full mask as the one
 * to restore.
 */
#define ALL_CATCHABLE	"fffffffffffbfeff"	/* all but SIGKILL, SIGSTOP */

/* Poll a thread's SigBlk until it is @want, for up to @ms; the last one. */
static bool sigblk_becomes(pid_t pid, pid_t tid, const char *want,
			   char *buf, size_t len, int ms)
{
	do {
		if (umcg_task_status(pid, tid, "SigBlk", buf, len) &&
		    !strcmp(buf, want))
			return true;
		usleep(1000);
	} while (ms-- > 0);
	return false;
}

TEST(signal_mask_after_park)
{
	char parked[20];
	pid_t pid;
	int status;

	UMCG_REQUIRE();
	/* It blocks SIGUSR2 and SIGRTMIN+2, registers, blocks, wakes, parks. */
	pid = start_child(_metadata, CHILD_BLOCK_FIRST | CHILD_SET_MASK);
	ASSERT_GT(pid, 0);
	/* parked, no signal yet: its own mask, never swapped */
	ASSERT_TRUE(umcg_task_status(pid, sh->w.tid, "SigBlk", parked, sizeof(parked)));
	EXPECT_STREQ(sh->blk_before, parked)
		TH_LOG("a park without a signal swapped the mask");

	ASSERT_EQ(0, kill(pid, SIGSTOP));
	ASSERT_EQ(pid, wait_for(pid, &status, WUNTRACED, 5000));
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_EQ(0, kill(pid, SIGCONT));
	ASSERT_EQ(pid, wait_for(pid, &status, WCONTINUED, 5000));
	usleep(100000);
	/* parked again, with the full mask, and no user code ran */
	EXPECT_TRUE(sigblk_becomes(pid, sh->w.tid, ALL_CATCHABLE, parked,
				   sizeof(parked), 5000))
		TH_LOG("interrupted by a stop, parked with SigBlk %s", parked);
	EXPECT_EQ(1, __atomic_load_n(&sh->progress, __ATOMIC_SEQ_CST));

	EXPECT_EQ(0, finish_child(pid));
	EXPECT_EQ(2, sh->progress);
	TH_LOG("SigBlk before the park %s, after it %s", sh->blk_before,
	       sh->blk_after);
	EXPECT_STRNE("0000000000000000", sh->blk_before);
	EXPECT_STREQ(sh->blk_before, sh->blk_after);
}

/*
 * A tracer that sets a parked worker's mask (PTRACE_SETSIGMASK) while the
 * worker is stopped has the last word: the mask saved when the first
 * signal interrupted the park is given back only if the blocked set is
 * still the one the kernel installed (issue 44, round 4 review).  Before,
 * the end of the park silently replaced the tracer's mask.
 */
#define TRACER_MASK	"0000000000000800"	/* SIGUSR2 alone */

TEST(ptrace_setsigmask_during_park_stands)
{
	char parked[20];
	uint64_t set, got;
	pid_t pid, tid;
	int status;

	UMCG_REQUIRE();
	/* It blocks SIGUSR2 and SIGRTMIN+2, registers, blocks, wakes, parks. */
	pid = start_child(_metadata, CHILD_BLOCK_FIRST | CHILD_SET_MASK);
	ASSERT_GT(pid, 0);
	tid = sh->w.tid;
	ASSERT_STRNE(TRACER_MASK, sh->blk_before);

	ptrace_stop_parked(_metadata, pid, tid, &status);
	/* the interrupted park blocked every catchable signal */
	ASSERT_EQ(0, ptrace(PTRACE_GETSIGMASK, tid, sizeof(got), &got));
	EXPECT_EQ(~((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1))), got)
		TH_LOG("stopped in the park, the mask is %#llx",
		       (unsigned long long)got);
	set = 1ULL << (SIGUSR2 - 1);
	ASSERT_EQ(0, ptrace(PTRACE_SETSIGMASK, tid, sizeof(set), &set));
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, tid, 0, 0));

	/* parked again, with the tracer's mask, and no user code ran */
	EXPECT_TRUE(sigblk_becomes(pid, tid, TRACER_MASK, parked,
				   sizeof(parked), 5000))
		TH_LOG("after the tracer's PTRACE_SETSIGMASK, parked with SigBlk %s",
		       parked);
	/*
	 * The mask reads the tracer's from PTRACE_SETSIGMASK on, before the
	 * worker ran again: a signal the tracer's mask lets through that
	 * comes before the worker is back in its park is the stop's own to
	 * deliver (get_signal() dequeues it as the stop ends), and its
	 * handler is set up for when the worker runs (docs/series.md,
	 * Limits). So the signal below waits until the worker sleeps (state
	 * S: a detached tracee is runnable until it parks); in the kvm
	 * variant it once came first (CI, 7 Dec 2026).
	 */
	ASSERT_TRUE(umcg_wait_asleep(pid, tid, 5000))
		TH_LOG("the worker did not park again in 5 s");

	/*
	 * A signal in the same park blocks the worker's signals again, the
	 * tracer's mask being the one to give back, so that it is neither
	 * handled by nor taken for a parked worker (issue 44, round 4).
	 * Before, the park ended with -EINTR and the signal was delivered
	 * under the tracer's mask.
	 */
	ASSERT_EQ(0, syscall(SYS_tgkill, pid, tid, SIGUSR1));
	EXPECT_TRUE(sigblk_becomes(pid, tid, ALL_CATCHABLE, parked,
				   sizeof(parked), 5000))
		TH_LOG("a signal after PTRACE_SETSIGMASK left SigBlk %s",
		       parked);
	usleep(100000);
	EXPECT_EQ(1, __atomic_load_n(&sh->progress, __ATOMIC_SEQ_CST));

	EXPECT_EQ(0, finish_child(pid));
	EXPECT_EQ(2, sh->progress);
	/* handled once the worker ran, before it unregistered */
	EXPECT_EQ(1, sh->handled_at_progress);
	TH_LOG("SigBlk before the park %s, set by the tracer %s, after the park %s",
	       sh->blk_before, TRACER_MASK, sh->blk_after);
	EXPECT_STREQ(TRACER_MASK, sh->blk_after)
		TH_LOG("the end of the park replaced the tracer's mask");
}

/*
 * A RUNNING worker that stops (group stop, or a ptrace stop) sleeps in the
 * kernel like any other blocking worker: it is reported BLOCKED, so that
 * its server can run another, and once it continues it comes back IDLE on
 * the idle-worker list, as after any block.
 */
static void stop_running_worker(struct __test_metadata *_metadata,
				bool use_ptrace)
{
	pid_t pid, tid;
	int status;
	bool blocked;

	UMCG_REQUIRE();
	pid = start_child(_metadata, CHILD_SPIN);
	ASSERT_GT(pid, 0);
	tid = sh->w.tid;
	ASSERT_EQ(UMCG_TASK_RUNNING,
		  umcg_task_state(&sh->w.task) & UMCG_TASK_STATE_MASK);

	if (use_ptrace) {
		ASSERT_EQ(0, ptrace(PTRACE_SEIZE, tid, 0, 0));
		ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, tid, 0, 0));
		ASSERT_EQ(tid, wait_for(tid, &status, __WALL, 5000));
	} else {
		ASSERT_EQ(0, kill(pid, SIGSTOP));
		ASSERT_EQ(pid, wait_for(pid, &status, WUNTRACED, 5000));
	}
	ASSERT_TRUE(WIFSTOPPED(status));
	/* (the stop is reported as the last thread stops, before it sleeps) */
	blocked = umcg_poll_eq(&sh->w.task.state, UMCG_TASK_STATE_MASK,
			       UMCG_TASK_BLOCKED, 5000);
	EXPECT_TRUE(blocked) TH_LOG("stopped, the worker's state is %#x",
				    umcg_task_state(&sh->w.task));
	EXPECT_EQ(0, __atomic_load_n(&sh->back, __ATOMIC_SEQ_CST));

	if (use_ptrace) {
		ASSERT_EQ(0, ptrace(PTRACE_DETACH, tid, 0, 0));
	} else {
		ASSERT_EQ(0, kill(pid, SIGCONT));
		ASSERT_EQ(pid, wait_for(pid, &status, WCONTINUED, 5000));
	}
	EXPECT_TRUE(umcg_poll_eq((uint32_t *)&sh->back, ~0U, 1, 10000))
		TH_LOG("the worker did not come back on the idle list");
	EXPECT_EQ(0, finish_child(pid));
}

TEST(group_stop_of_running_worker_is_a_block)
{
	stop_running_worker(_metadata, false);
}

TEST(ptrace_stop_of_running_worker_is_a_block)
{
	stop_running_worker(_metadata, true);
}

/* Wait until "frozen <v>" is in @events; true if within @ms. */
static bool wait_frozen(const char *events, int v, int ms)
{
	char buf[256], want[16];
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) + ms * 1000000ULL;

	snprintf(want, sizeof(want), "frozen %d", v);
	do {
		int fd = open(events, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			if (strstr(buf, want))
				return true;
		}
		usleep(1000);
	} while (umcg_now_ns(CLOCK_MONOTONIC) < end);
	return false;
}

#define CG_ROOT	"/tmp/umcg-cgroup2"
#define CG_DIR	CG_ROOT "/park"

TEST(cgroup_freeze_parked_worker)
{
	char pidbuf[32];
	uint64_t t0;
	pid_t pid;
	bool frozen;
	int err;

	UMCG_REQUIRE();
	err = umcg_cgroup_mount(CG_ROOT, CG_DIR);
	if (err == ENODEV)
		SKIP(return, "no cgroup v2 in this kernel (CONFIG_CGROUPS not set)");
	ASSERT_EQ(0, err) TH_LOG("cgroup2 at " CG_DIR ": %s", strerror(err));

	pid = start_child(_metadata, 0);
	ASSERT_GT(pid, 0);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	ASSERT_EQ(0, umcg_write_file(CG_DIR "/cgroup.procs", pidbuf));

	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, umcg_write_file(CG_DIR "/cgroup.freeze", "1"));
	frozen = wait_frozen(CG_DIR "/cgroup.events", 1, 5000);
	TH_LOG("cgroup.freeze: %s after %llu ms", frozen ? "frozen" : "NOT frozen",
	       (unsigned long long)ms_since(t0));
	EXPECT_TRUE(frozen) TH_LOG("the freezer did not complete with a parked worker");
	ASSERT_EQ(0, umcg_write_file(CG_DIR "/cgroup.freeze", "0"));
	EXPECT_TRUE(wait_frozen(CG_DIR "/cgroup.events", 0, 5000));

	usleep(100000);
	EXPECT_EQ(0, __atomic_load_n(&sh->progress, __ATOMIC_SEQ_CST));
	EXPECT_EQ(0, finish_child(pid));
	EXPECT_EQ(1, sh->progress);
	EXPECT_EQ(0, umcg_cgroup_umount(CG_ROOT, CG_DIR));
}

/*
 * A server waiting in umcg_wait() does not hold up the freezer, and the
 * freeze does not end its wait: the call is restarted after the thaw, its
 * absolute deadline unchanged, as after a group stop.
 */
#define FROZEN_WAIT_NS	3000000000ULL

TEST(cgroup_freeze_waiting_server)
{
	struct umcg_waiting_server *fs;
	char pidbuf[32];
	bool frozen;
	pid_t pid;
	int st, i, err;

	UMCG_REQUIRE();
	fs = umcg_test_shared(sizeof(*fs));
	ASSERT_NE(NULL, fs);
	fs->ret = 99;
	err = umcg_cgroup_mount(CG_ROOT, CG_DIR);
	if (err == ENODEV)
		SKIP(return, "no cgroup v2 in this kernel (CONFIG_CGROUPS not set)");
	ASSERT_EQ(0, err) TH_LOG("cgroup2 at " CG_DIR ": %s", strerror(err));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(umcg_waiting_server_child(fs, FROZEN_WAIT_NS));
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	ASSERT_EQ(0, umcg_write_file(CG_DIR "/cgroup.procs", pidbuf));
	for (i = 0; i < 5000 && !__atomic_load_n(&fs->ready, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, fs->ready);
	/* asleep in umcg_wait(), not on its way there */
	EXPECT_TRUE(umcg_wait_asleep(pid, pid, 5000))
		TH_LOG("the server did not go to sleep in umcg_wait()");
	usleep(100000);

	ASSERT_EQ(0, umcg_write_file(CG_DIR "/cgroup.freeze", "1"));
	frozen = wait_frozen(CG_DIR "/cgroup.events", 1, 2000);
	EXPECT_TRUE(frozen) TH_LOG("the freezer did not complete with a server in umcg_wait()");
	usleep(200000);
	EXPECT_EQ(99, __atomic_load_n(&fs->ret, __ATOMIC_SEQ_CST))
		TH_LOG("umcg_wait() returned while frozen");
	ASSERT_EQ(0, umcg_write_file(CG_DIR "/cgroup.freeze", "0"));
	EXPECT_TRUE(wait_frozen(CG_DIR "/cgroup.events", 0, 5000));

	ASSERT_EQ(pid, wait_for(pid, &st, 0, 20000));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	TH_LOG("umcg_wait(): %s after %llu ms", strerror(fs->ret),
	       (unsigned long long)fs->waited_ns / 1000000);
	EXPECT_EQ(ETIMEDOUT, fs->ret) TH_LOG("the freeze ended the wait");
	EXPECT_LE(FROZEN_WAIT_NS - 100000000ULL, fs->waited_ns);
	EXPECT_EQ(0, umcg_cgroup_umount(CG_ROOT, CG_DIR));
}

/* In-process: a yielded worker's handler waits until it runs again. */
static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	int			yielded;
	int			handled_after_yield;
	uint32_t		state_in_handler;
} *c;

static int handled;

static void yield_handler(int sig)
{
	(void)sig;
	c->state_in_handler = umcg_task_state(&c->w.task);
	__atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

static void *yield_worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	__atomic_store_n(&c->yielded, 1, __ATOMIC_SEQ_CST);
	umcg_worker_yield(&c->w);
	c->handled_after_yield = __atomic_load_n(&handled, __ATOMIC_SEQ_CST);
	umcg_worker_unregister(&c->w, &c->g);
	return NULL;
}

TEST(signal_to_yielded_worker)
{
	struct sigaction sa = { .sa_handler = yield_handler };
	char own[20], blk[20];
	struct umcg_worker *w;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	/* the worker starts with this thread's mask */
	ASSERT_TRUE(own_sigblk(own, sizeof(own)));
	UMCG_TEST_SERVER(c);
	ASSERT_EQ(0, pthread_create(&t, NULL, yield_worker, NULL));
	for (i = 0; i < 20000 && !(w = umcg_take_idle(&c->g)); i++)
		usleep(1000);
	ASSERT_EQ(&c->w, w);
	/* Run it: it yields back, IDLE, and sleeps in umcg_wait(). */
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	ASSERT_EQ(1, c->yielded);
	ASSERT_EQ(UMCG_TASK_IDLE | UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF,
		  umcg_task_state(&w->task));
	EXPECT_TRUE(umcg_server_settle(&c->s));
	/* Waiting in its yield, its mask untouched: no siglock taken. */
	ASSERT_TRUE(umcg_task_status(getpid(), w->tid, "SigBlk", blk, sizeof(blk)));
	EXPECT_STREQ(own, blk) TH_LOG("the yield swapped the mask");

	ASSERT_EQ(0, syscall(SYS_tgkill, getpid(), w->tid, SIGUSR1));
	/*
	 * The worker sleeps on with the signal pending: the signal that
	 * interrupted its wait blocked its catchable signals until a server
	 * runs it.
	 */
	ASSERT_TRUE(umcg_wait_signal_held(w->tid, 10000));
	EXPECT_TRUE(sigblk_becomes(getpid(), w->tid, ALL_CATCHABLE, blk,
				   sizeof(blk), 5000))
		TH_LOG("interrupted, the waiting worker has SigBlk %s", blk);
	EXPECT_EQ(0, __atomic_load_n(&handled, __ATOMIC_SEQ_CST))
		TH_LOG("the handler ran while the worker was IDLE (state in handler %#x)",
		       c->state_in_handler);
	/* (claimed for its server by the yield until the server runs it) */
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF,
		  umcg_task_state(&w->task));

	/* Run it again: now the handler runs, RUNNING, then yield returns. */
	ASSERT_EQ(w, umcg_rq_pop(&c->s));
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	while (umcg_still_running(&c->s, w))
		umcg_server_wait_current(&c->s, 0);
	pthread_join(t, NULL);
	EXPECT_EQ(1, handled);
	EXPECT_EQ(1, c->handled_after_yield);
	EXPECT_EQ(UMCG_TASK_RUNNING,
		  c->state_in_handler & UMCG_TASK_STATE_MASK);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	EXPECT_EQ(0, umcg_unregister());
}

/*
 * A process-directed signal may pick a worker waiting in its yield, whose
 * mask is not swapped until a signal interrupts the wait: the worker then
 * blocks its catchable signals, and blocking passes the signal on to a
 * thread that can take it (retarget_shared_pending()).  The process's
 * signal is never held until a server runs the worker.
 *
 * Which thread a process-directed signal picks is the kernel's choice, so
 * the test makes it: the first signal comes while the helper thread
 * blocks SIGUSR2 too, so the waiting worker is the only thread that can
 * take it (it must not run the handler while IDLE: the helper takes the
 * signal once it unblocks).  That leaves the worker as the signal's
 * round-robin start (signal->curr_target), so once the worker waits again
 * with its own mask the second signal picks it again although the helper
 * can take it: only passing it on at the block reaches the helper.
 */
static pid_t proc_handler_tid;
static int proc_handled, helper_stop, helper_unblock;

static void proc_handler(int sig)
{
	(void)sig;
	__atomic_store_n(&proc_handler_tid, umcg_gettid(), __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&proc_handled, 1, __ATOMIC_SEQ_CST);
}

static void *helper_thread(void *arg)
{
	sigset_t usr2;

	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	if (pthread_sigmask(SIG_BLOCK, &usr2, NULL))
		return (void *)1;
	__atomic_store_n((pid_t *)arg, umcg_gettid(), __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&helper_unblock, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (pthread_sigmask(SIG_UNBLOCK, &usr2, NULL))
		return (void *)2;
	while (!__atomic_load_n(&helper_stop, __ATOMIC_SEQ_CST))
		usleep(1000);
	return NULL;
}

static void *yield_twice_worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&c->w, &c->g, NULL))
		return (void *)1;
	__atomic_store_n(&c->yielded, 1, __ATOMIC_SEQ_CST);
	umcg_worker_yield(&c->w);
	__atomic_store_n(&c->yielded, 2, __ATOMIC_SEQ_CST);
	umcg_worker_yield(&c->w);
	umcg_worker_unregister(&c->w, &c->g);
	return NULL;
}

/* Wait up to 5 s for the handler to run once more than @n times. */
static bool proc_handled_after(int n)
{
	int ms;

	for (ms = 0; ms < 5000; ms++) {
		if (__atomic_load_n(&proc_handled, __ATOMIC_SEQ_CST) > n)
			return true;
		usleep(1000);
	}
	return false;
}

TEST(process_signal_not_held_by_a_waiting_worker)
{
	struct sigaction sa = { .sa_handler = proc_handler };
	struct umcg_worker *w;
	sigset_t usr2, old;
	char blk[20];
	pid_t helper = 0;
	pthread_t t, h;
	void *ret;
	int i;

	UMCG_REQUIRE();
	ASSERT_EQ(0, sigaction(SIGUSR2, &sa, NULL));
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	UMCG_TEST_SERVER(c);
	ASSERT_EQ(0, pthread_create(&t, NULL, yield_twice_worker, NULL));
	ASSERT_EQ(0, pthread_create(&h, NULL, helper_thread, &helper));
	for (i = 0; i < 20000 && !(w = umcg_take_idle(&c->g)); i++)
		usleep(1000);
	ASSERT_EQ(&c->w, w);
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	ASSERT_EQ(1, c->yielded);
	EXPECT_TRUE(umcg_server_settle(&c->s));
	for (i = 0; i < 20000 && !__atomic_load_n(&helper, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_NE(0, helper);
	/* now the waiting worker is the only thread that takes SIGUSR2 */
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &usr2, &old));

	ASSERT_EQ(0, kill(getpid(), SIGUSR2));
	EXPECT_TRUE(sigblk_becomes(getpid(), w->tid, ALL_CATCHABLE, blk,
				   sizeof(blk), 5000))
		TH_LOG("the signal did not interrupt the waiting worker's wait (SigBlk %s)",
		       blk);
	usleep(100000);
	EXPECT_EQ(0, __atomic_load_n(&proc_handled, __ATOMIC_SEQ_CST))
		TH_LOG("the handler ran in thread %d while the only one that could take the signal waited",
		       proc_handler_tid);
	__atomic_store_n(&helper_unblock, 1, __ATOMIC_SEQ_CST);
	ASSERT_TRUE(proc_handled_after(0))
		TH_LOG("the first signal of the process held for 5 s");
	EXPECT_EQ(helper, proc_handler_tid);

	/* Run the worker: its mask comes back, and it yields again. */
	ASSERT_EQ(w, umcg_rq_pop(&c->s));
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	for (i = 0; i < 20000 && __atomic_load_n(&c->yielded, __ATOMIC_SEQ_CST) < 2; i++)
		usleep(1000);
	ASSERT_EQ(2, c->yielded);
	for (i = 0; i < 20000 && !umcg_server_settle(&c->s); i++)
		umcg_server_wait_current(&c->s, 0);
	ASSERT_TRUE(umcg_wait_asleep(getpid(), w->tid, 5000));
	ASSERT_TRUE(umcg_task_status(getpid(), w->tid, "SigBlk", blk, sizeof(blk)));
	EXPECT_STRNE(ALL_CATCHABLE, blk);

	/* The signal picks the worker first again; the helper takes it. */
	ASSERT_EQ(0, kill(getpid(), SIGUSR2));
	ASSERT_TRUE(proc_handled_after(1))
		TH_LOG("the second signal of the process held for 5 s");
	EXPECT_EQ(helper, proc_handler_tid);
	EXPECT_TRUE(sigblk_becomes(getpid(), w->tid, ALL_CATCHABLE, blk,
				   sizeof(blk), 5000))
		TH_LOG("the second signal did not pick the waiting worker first (SigBlk %s): nothing was passed on",
		       blk);
	EXPECT_EQ(2, __atomic_load_n(&proc_handled, __ATOMIC_SEQ_CST));

	ASSERT_EQ(0, pthread_sigmask(SIG_SETMASK, &old, NULL));
	__atomic_store_n(&helper_stop, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, pthread_join(h, &ret));
	ASSERT_EQ(NULL, ret);
	/* the worker never left its wait */
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_LOCKED | LIBUMCG_TF_HANDOFF,
		  umcg_task_state(&w->task));

	ASSERT_EQ(w, umcg_rq_pop(&c->s));
	ASSERT_EQ(0, umcg_run_worker(&c->s, w, 0));
	while (umcg_still_running(&c->s, w))
		umcg_server_wait_current(&c->s, 0);
	pthread_join(t, NULL);
	EXPECT_EQ(UMCG_TASK_NONE, umcg_task_state(&w->task));
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
