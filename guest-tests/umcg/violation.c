// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/violation: a worker whose state userspace corrupted, or whose idle
 * list is gone, cannot be parked or queued when it wakes up.  The kernel
 * kills its process with SIGKILL and logs a rate-limited warning (issue 9,
 * item 6).  SIGSEGV would go to the runtime's own SIGSEGV handler (JVMs, Go
 * use one), which returns, and the worker would run on without a server.
 *
 * Each case runs as a child process that installs such a SIGSEGV handler.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "umcg_test.h"

struct shared {
	struct umcg_server	s;
	struct umcg_worker	w;
	int			pipefd[2];
	int			progress;	/* worker: 1 ran, 2 read() returned */
	int			segv;		/* SIGSEGV handler ran */
	int			blocked;	/* child: the worker is BLOCKED */
	int			go;		/* test: break the rules now */
};

static struct shared *sh;
static struct umcg_group *grp;	/* on a page of its own */

static void segv_handler(int sig)
{
	(void)sig;
	__atomic_add_fetch(&sh->segv, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg)
{
	char ch;

	(void)arg;
	if (umcg_worker_register(&sh->w, grp, NULL))
		return (void *)1;
	__atomic_store_n(&sh->progress, 1, __ATOMIC_SEQ_CST);
	if (read(sh->pipefd[0], &ch, 1) != 1)
		return (void *)2;
	/* Only reached if the kernel let a broken worker run. */
	__atomic_store_n(&sh->progress, 2, __ATOMIC_SEQ_CST);
	return NULL;
}

enum violation { STATE_OVERWRITTEN, LIST_UNMAPPED };

static int child(enum violation how)
{
	struct sigaction sa = { .sa_handler = segv_handler };
	struct umcg_worker *w;
	pthread_t t;
	int i;

	if (sigaction(SIGSEGV, &sa, NULL))
		return 10;
	grp = umcg_test_zalloc(4096);
	if (!grp)
		return 11;
	umcg_group_init(grp);
	if (umcg_server_register(&sh->s, grp))
		return 12;
	if (pthread_create(&t, NULL, worker, NULL))
		return 13;
	for (i = 0; i < 20000 && !(w = umcg_take_idle(grp)); i++)
		usleep(1000);
	if (w != &sh->w)
		return 14;
	if (umcg_run_worker(&sh->s, w, 0) ||
	    umcg_task_state(&w->task) != UMCG_TASK_BLOCKED)
		return 15;
	__atomic_store_n(&sh->blocked, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sh->go, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (how == STATE_OVERWRITTEN) {
		/* Only the kernel may end BLOCKED: this breaks the protocol. */
		__atomic_store_n(&w->task.state, UMCG_TASK_RUNNING,
				 __ATOMIC_SEQ_CST);
	} else {
		/* The idle-worker list head goes away under the worker. */
		munmap(grp, 4096);
	}
	if (write(sh->pipefd[1], "x", 1) != 1)
		return 16;
	/* The kernel kills us; if it does not, the worker ran on. */
	pthread_join(t, NULL);
	return 0;
}

/* The last /dev/kmsg line that mentions umcg and @pid, if any. */
static bool kmsg_mentions(pid_t pid, char *out, size_t len)
{
	char buf[1024], pidstr[32];
	bool found = false;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(pidstr, sizeof(pidstr), "/%d", (int)pid);
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		buf[n] = 0;
		if (strstr(buf, "umcg") && strstr(buf, pidstr)) {
			buf[strcspn(buf, "\n")] = 0;
			snprintf(out, len, "%s", buf);
			found = true;
		}
	}
	close(fd);
	return found;
}

static void run_case(struct __test_metadata *_metadata, enum violation how)
{
	char line[1024];
	pid_t pid;
	int st, i;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, pipe(sh->pipefd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(child(how));
	for (i = 0; i < 20000 && !__atomic_load_n(&sh->blocked, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	if (!sh->blocked)
		kill(pid, SIGKILL);
	ASSERT_EQ(1, sh->blocked);
	__atomic_store_n(&sh->go, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < 20000 && !waitpid(pid, &st, WNOHANG); i++)
		usleep(1000);
	if (i == 20000) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		ASSERT_TRUE(0) TH_LOG("the child neither ended nor was killed");
	}
	TH_LOG("child: %s %d, SIGSEGV handler ran %d times, worker progress %d",
	       WIFSIGNALED(st) ? "signal" : "exit",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
	       sh->segv, sh->progress);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	EXPECT_EQ(0, sh->segv);
	/* The broken worker never ran user code again. */
	EXPECT_EQ(1, sh->progress);
	if (kmsg_mentions(sh->w.tid, line, sizeof(line)))
		TH_LOG("kernel: %s", line);
	else
		EXPECT_TRUE(0) TH_LOG("no kernel message names umcg and the worker %d", sh->w.tid);
}

TEST(state_overwritten_while_blocked)
{
	UMCG_REQUIRE();
	run_case(_metadata, STATE_OVERWRITTEN);
}

TEST(idle_list_unmapped_while_blocked)
{
	UMCG_REQUIRE();
	run_case(_metadata, LIST_UNMAPPED);
}

TEST_HARNESS_MAIN
