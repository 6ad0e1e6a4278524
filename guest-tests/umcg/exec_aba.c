// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/exec_aba: a worker that calls execve() while RUNNING tells its
 * server, which must be a server of the worker's old address space - never
 * a task of another process (issue 9, item 3).
 *
 * execve() frees the old mm before the UMCG registration ends.  If the
 * kernel identified "the worker's process" by a bare pointer to that mm, a
 * new process whose mm happens to be allocated at the same address (the
 * slab hands a freed object out again) would look like the same process.
 * The test builds exactly that: process A has a server S and a RUNNING
 * worker W (LOCKED, so that sleeping in execve() is not blocking); W
 * executes this program again and is held by ptrace at the exec event (old mm freed, registration not yet ended); then a new
 * process B is forked - its mm most likely takes the freed slot - with
 * clone3(set_tid) giving it S's old TID, and B sleeps as a UMCG server.
 * When W continues, nothing may wake B: its umcg_wait() must run into its
 * timeout.  Everything runs on one CPU, so the slab reuse is likely; a
 * kernel that holds a reference on the mm never frees it early and B can
 * never match.
 *
 * Whether B's mm really took the freed slot is chance (and never happens
 * under KASAN, whose quarantine holds freed objects back), so B's timeout
 * alone proves little.  Where the kernel has trace events, the test also
 * watches the slab: kmem_cache_free of an mm_struct by W while it is held
 * at its exec event means the old mm was freed while the registration
 * still referred to it - the window itself, which must never open - and
 * an mm_struct address freed twice in one round means an mm was allocated
 * in a freed one's place: the ABA happened (counted, reported as a metric;
 * an upper bound: a late free of an earlier round's mm can also make an
 * address appear twice).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "umcg_test.h"

#define ROUNDS		5
#define B_WAIT_NS	1000000000ULL

/* clone3()'s argument (linux/sched.h clashes with glibc's <sched.h>). */
struct clone3_args {
	uint64_t	flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t	stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

struct shared {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	pid_t			s_tid, w_tid;
	int			w_running;	/* A: W runs, waits for go */
	int			go;		/* test: W, exec now */
	int			b_ready;	/* B: about to sleep */
	int			b_ret;		/* B: errno of umcg_wait() */
	uint64_t		b_slept_ns;
};

static struct shared *sh;

/*
 * The slab watch: kmem_cache_free events of mm_structs, traced for one
 * round at a time.
 */
#define EV	"events/kmem/kmem_cache_free/"

static bool watch_start(void)
{
	umcg_tracefs_put("tracing_on", "0", 0);
	/*
	 * Raw pointers: hashed ones print as "(____ptrval____)" until the
	 * kernel's random key is ready, which a guest without an RNG device
	 * may never be.
	 */
	return !umcg_tracefs_put("trace_options", "nohash-ptr", 0) &&
	       !umcg_tracefs_put(EV "filter", "name == \"mm_struct\"", 1) &&
	       !umcg_tracefs_put("trace", "", 1) &&
	       !umcg_tracefs_put(EV "enable", "1", 0) &&
	       !umcg_tracefs_put("tracing_on", "1", 0);
}

static void watch_stop(void)
{
	umcg_tracefs_put("tracing_on", "0", 0);
	umcg_tracefs_put(EV "enable", "0", 0);
	umcg_tracefs_put(EV "filter", "0", 1);
	umcg_tracefs_put("trace", "", 1);
	umcg_tracefs_put("trace_options", "hash-ptr", 0);
}

#define MAX_FREES	64

/*
 * Read the mm_struct frees traced so far (tracing goes on): how many were
 * by task @tid (-1: the trace hashes pointers, nothing to tell), and
 * whether one address was freed twice.
 */
static int watch_read(pid_t tid, bool *twice)
{
	char line[512], who[32], ptrs[MAX_FREES][32], *p;
	int n = 0, i, by_tid = 0;
	FILE *f;

	*twice = false;
	snprintf(who, sizeof(who), "-%d ", (int)tid);
	f = fopen(UMCG_TRACEFS "/trace", "r");
	if (!f)
		return -1;
	/* "comm-PID [cpu] flags time: kmem_cache_free: call_site=.. ptr=P name=mm_struct" */
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !(p = strstr(line, " ptr=")))
			continue;
		/*
		 * By W itself (exec_mmap()'s mmput()); not a lazy-TLB
		 * mmdrop() of another mm that finish_task_switch() happens
		 * to run as W is switched in.
		 */
		if (strstr(line, who) &&
		    !strstr(line, "call_site=finish_task_switch"))
			by_tid++;
		p += 5;
		p[strcspn(p, " \n")] = 0;
		/* a hashed pointer says nothing: no watch this round */
		if (*p == '(') {
			by_tid = -1;
			break;
		}
		for (i = 0; i < n; i++)
			if (!strcmp(ptrs[i], p))
				*twice = true;
		if (n < MAX_FREES)
			snprintf(ptrs[n++], sizeof(ptrs[0]), "%s", p);
	}
	fclose(f);
	return by_tid;
}

/* The image W executes: leave at once. */
__attribute__((constructor)) static void exec_image(void)
{
	if (getenv("UMCG_ABA_EXEC"))
		_exit(0);
}

static void *a_worker(void *arg)
{
	char *argv[] = { "exec_aba", NULL };
	char *envp[] = { "UMCG_ABA_EXEC=1", NULL };

	(void)arg;
	__atomic_store_n(&sh->w_tid, umcg_gettid(), __ATOMIC_SEQ_CST);
	if (umcg_worker_register(&sh->w, &sh->g, NULL))
		_exit(21);
	/*
	 * RUNNING|LOCKED: execve() sleeps (in de_thread(), and in the ptrace
	 * stop), and LOCKED keeps that from counting as blocking, so W is
	 * RUNNING when its registration ends and must tell its server.
	 */
	__atomic_store_n(&sh->w.task.state, UMCG_TASK_RUNNING | UMCG_TF_LOCKED,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->w_running, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sh->go, __ATOMIC_SEQ_CST))
		;	/* in userspace, no system calls */
	execve("/proc/self/exe", argv, envp);
	_exit(22);
}

static void *a_server(void *arg)
{
	struct umcg_worker *w;

	(void)arg;
	__atomic_store_n(&sh->s_tid, umcg_gettid(), __ATOMIC_SEQ_CST);
	if (umcg_server_register(&sh->s, &sh->g))
		_exit(23);
	while (!(w = umcg_take_idle(&sh->g)))
		usleep(1000);
	umcg_run_worker(&sh->s, w, 0);
	/* W's execve() kills this thread. */
	for (;;)
		pause();
	return NULL;
}

/* Process A: server S and worker W; the main thread just waits. */
static int process_a(void)
{
	pthread_t s, w;

	umcg_group_init(&sh->g);
	if (pthread_create(&s, NULL, a_server, NULL) ||
	    pthread_create(&w, NULL, a_worker, NULL))
		return 24;
	for (;;)
		pause();
	return 0;
}

/* Process B: a server with S's old TID, asleep until its timeout. */
static int process_b(void)
{
	static struct umcg_task t __attribute__((aligned(64)));
	uint64_t t0;

	t.state = UMCG_TASK_RUNNING;
	if (umcg_ctl(UMCG_CTL_REGISTER, &t))
		return 31;
	__atomic_store_n(&t.state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->b_ready, 1, __ATOMIC_SEQ_CST);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	sh->b_ret = umcg_wait(0, umcg_deadline(B_WAIT_NS)) ? errno : 0;
	sh->b_slept_ns = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	return 0;
}

static pid_t clone3_with_tid(pid_t tid)
{
	struct clone3_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&tid,
		.set_tid_size = 1,
	};

	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

static int watched, hits;

static void one_round(struct __test_metadata *_metadata, int round)
{
	bool watching, twice;
	int early = 0;
	pid_t a, b, r;
	int st, i;

	memset(sh, 0, sizeof(*sh));
	a = fork();
	ASSERT_GE(a, 0);
	if (a == 0)
		_exit(process_a());
	for (i = 0; i < 20000 && !__atomic_load_n(&sh->w_running, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, sh->w_running) TH_LOG("round %d: A's worker never ran", round);

	/* Hold W at its exec event: old mm gone, registration not ended. */
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, sh->w_tid, 0, PTRACE_O_TRACEEXEC));
	watching = watch_start();
	__atomic_store_n(&sh->go, 1, __ATOMIC_SEQ_CST);
	r = waitpid(-1, &st, __WALL);
	ASSERT_EQ(a, r) TH_LOG("round %d: waitpid returned %d", round, r);
	ASSERT_TRUE(WIFSTOPPED(st));
	ASSERT_EQ(SIGTRAP | (PTRACE_EVENT_EXEC << 8), st >> 8);
	if (watching) {
		/* (W is the thread group leader now: its TID is A's PID) */
		early = watch_read(a, &twice);
		EXPECT_EQ(0, early)
			TH_LOG("round %d: %d: W's exec freed the mm its registration refers to (-1: the trace hashes pointers)",
			       round, early);
	}

	/* B: forked now, so its mm likely reuses A's old one; S's TID. */
	b = clone3_with_tid(sh->s_tid);
	if (b == 0)
		_exit(process_b());
	ASSERT_EQ(sh->s_tid, b) TH_LOG("clone3(set_tid=%d): %s", sh->s_tid,
				       strerror(errno));
	for (i = 0; i < 20000 && !__atomic_load_n(&sh->b_ready, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, sh->b_ready);
	umcg_wait_asleep(b, b, 20000);

	/* Let W end its registration: it tells "its" server, S_tid. */
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, a, 0, 0));
	ASSERT_EQ(a, waitpid(a, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("round %d: A ended with status %#x", round, st);
	ASSERT_EQ(b, waitpid(b, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	if (watching) {
		watch_read(a, &twice);
		watch_stop();
		watched++;
		hits += twice;
		TH_LOG("round %d: mm_struct frees by W while held: %d; an address freed twice: %s",
		       round, early, twice ? "yes" : "no");
	}
	EXPECT_EQ(ETIMEDOUT, sh->b_ret)
		TH_LOG("round %d: B (another process, TID %d) was woken after %llu ms by A's worker",
		       round, b, (unsigned long long)sh->b_slept_ns / 1000000);
	EXPECT_GE(sh->b_slept_ns, B_WAIT_NS - 2000000ULL);
}

FIXTURE(aba) {
	int unused;
};

FIXTURE_SETUP(aba)
{
}

FIXTURE_TEARDOWN(aba)
{
	/* also after a failed round: the event off, pointers hashed again */
	watch_stop();
}

/* Five exec rounds with a 1 s sleep each; slow under TCG with KASAN. */
TEST_F_TIMEOUT(aba, exec_does_not_wake_another_process, 300)
{
	cpu_set_t one;
	int round;

	UMCG_REQUIRE();
	/* One CPU for all: the freed mm is handed out again on that CPU. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	for (round = 0; round < ROUNDS && __test_passed(_metadata); round++)
		one_round(_metadata, round);
	/* Where the kernel has the event, every round must have watched. */
	if (!access(UMCG_TRACEFS "/" EV "enable", W_OK))
		EXPECT_EQ(round, watched) TH_LOG("the slab watch did not start");
	TH_LOG("%d rounds, %d with the slab watched, the ABA (an mm allocated at a freed one's address) in %d",
	       round, watched, hits);
	if (watched)
		ksft_print_msg("metric: umcg_exec_aba_reuse_rounds=%d\n", hits);
}

TEST_HARNESS_MAIN
