/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the umcg suite's test programs (not a test itself). */
#ifndef GUEST_TESTS_UMCG_TEST_H
#define GUEST_TESTS_UMCG_TEST_H

/* kselftest_harness.h does not build with -Wextra -Werror otherwise. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
/* ASSERT_EQ(UMCG_TASK_IDLE, state): int constants against __u32 words. */
#pragma GCC diagnostic ignored "-Wsign-compare"
/* TEST_F_TIMEOUT: the harness's own setjmp use. */
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kconfig.h"
#include "libumcg.h"

/*
 * 1 if the running kernel implements UMCG, 0 if the system calls return
 * ENOSYS; libumcg's probe (umcg_abi()) decides, without side effects.
 */
static inline int umcg_supported(void)
{
	return umcg_abi() == UMCG_ABI_OK;
}

/*
 * Start of every test.  548/549 answering like another system call is a
 * failure (libumcg refuses to use them).  On a kernel without CONFIG_UMCG,
 * check with raw system calls that both return ENOSYS, then SKIP with the
 * reason.
 */
#define UMCG_REQUIRE() do {						\
	int __cfg = kconfig_enabled("CONFIG_UMCG");			\
	enum umcg_abi __abi = umcg_abi();				\
	ASSERT_NE(UMCG_ABI_FOREIGN, __abi)				\
		TH_LOG("syscalls %d/%d are not UMCG on this kernel",	\
		       __NR_umcg_ctl, __NR_umcg_wait);			\
	if (__abi == UMCG_ABI_NONE) {					\
		ASSERT_EQ(-1, syscall(__NR_umcg_ctl, UMCG_CTL_REGISTER, NULL)); \
		ASSERT_EQ(ENOSYS, errno);				\
		ASSERT_EQ(-1, syscall(__NR_umcg_wait, 0, 0));		\
		ASSERT_EQ(ENOSYS, errno);				\
		ASSERT_EQ(0, __cfg);					\
		SKIP(return, "CONFIG_UMCG not set: umcg_ctl/umcg_wait return ENOSYS (checked)"); \
	}								\
	ASSERT_EQ(1, __cfg) TH_LOG("UMCG works but /proc/config.gz lacks CONFIG_UMCG=y"); \
} while (0)

static inline void *umcg_test_zalloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A zeroed mapping shared with forked children; NULL on failure. */
static inline void *umcg_test_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Start of a test whose calling thread is the one server: map the test's
 * context @ctx (a pointer to a struct with a group g and a server s),
 * initialise the group and register the server in it.
 */
#define UMCG_TEST_SERVER(ctx) do {					\
	(ctx) = umcg_test_zalloc(sizeof(*(ctx)));			\
	ASSERT_NE(NULL, (ctx));						\
	umcg_group_init(&(ctx)->g);					\
	ASSERT_EQ(0, umcg_server_register(&(ctx)->s, &(ctx)->g));	\
} while (0)

/*
 * Wait (polling) until a worker is on @g's idle list, for up to
 * @timeout_ms; true if one is.  Workers register IDLE on the list.
 */
static inline bool umcg_wait_idle_list(struct umcg_group *g, int timeout_ms)
{
	int i;

	for (i = 0; i < timeout_ms &&
	     !__atomic_load_n(&g->idle_workers, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	return __atomic_load_n(&g->idle_workers, __ATOMIC_SEQ_CST) != 0;
}

/*
 * Run @fn(@arg) in a forked child and wait for it: its exit status, or -1
 * if it did not exit (killed by a signal) or could not be forked.
 */
static inline int umcg_fork_wait(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static inline void umcg_spin_ns(uint64_t ns)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) + ns;

	while (umcg_now_ns(CLOCK_MONOTONIC) < end)
		;
}

/* Wait (polling) until *p == v or @timeout_ms passes; true if it did. */
static inline bool umcg_poll_eq(uint32_t *p, uint32_t mask, uint32_t v,
				int timeout_ms)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) +
		       (uint64_t)timeout_ms * 1000000ULL;

	while ((umcg_load(p) & mask) != v) {
		if (umcg_now_ns(CLOCK_MONOTONIC) > end)
			return false;
		usleep(100);
	}
	return true;
}

/*
 * A server alone in a child process: it registers, marks itself IDLE, says
 * it is ready and waits in umcg_wait() with a deadline @wait_ns away, for
 * tests that stop, freeze or signal it.  ret is umcg_wait()'s errno or 0
 * (the caller presets 99: not returned).
 */
struct umcg_waiting_server {
	int		ready;
	int		ret;
	uint64_t	waited_ns;
};

static inline int umcg_waiting_server_child(struct umcg_waiting_server *ws,
					    uint64_t wait_ns)
{
	struct umcg_task *t = umcg_test_zalloc(4096);
	uint64_t t0;

	if (!t)
		return 2;
	t->state = UMCG_TASK_RUNNING;
	if (umcg_ctl(UMCG_CTL_REGISTER, t))
		return 3;
	__atomic_store_n(&t->state, UMCG_TASK_IDLE, __ATOMIC_SEQ_CST);
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&ws->ready, 1, __ATOMIC_SEQ_CST);
	ws->ret = umcg_wait(0, umcg_deadline(wait_ns)) ? errno : 0;
	ws->waited_ns = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	return 0;
}

/*
 * Counting calls of one kernel function with the function tracer, to
 * prove which path a test took (debug has CONFIG_FUNCTION_TRACER; the
 * other variants do not, and umcg_ftrace_start() fails there).
 */
#define UMCG_TRACEFS	"/sys/kernel/tracing"

static inline int umcg_tracefs_put(const char *file, const char *s, int trunc)
{
	size_t len = strlen(s), done = 0;
	char path[128];
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), UMCG_TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | (trunc ? O_TRUNC : 0));
	if (fd < 0)
		return -1;
	/* set_ftrace_filter takes one name per write(): write on. */
	while (done < len && (n = write(fd, s + done, len - done)) > 0)
		done += n;
	return close(fd) || done < len ? -1 : 0;
}

/*
 * Trace only @fns (a space-separated list of globs: a static function may
 * be named "fn.isra.0" or "fn.constprop.0"), from an empty buffer; -1
 * without the function tracer or with a name that matches nothing.
 */
static inline int umcg_ftrace_start(const char *fns)
{
	umcg_tracefs_put("tracing_on", "0", 0);
	if (umcg_tracefs_put("set_ftrace_filter", fns, 1) ||
	    umcg_tracefs_put("current_tracer", "function", 0) ||
	    umcg_tracefs_put("trace", "", 1))
		return -1;
	return umcg_tracefs_put("tracing_on", "1", 0);
}

/*
 * Calls of @fn by task @tid made from @caller ("fn <-caller" in the
 * trace buffer, stopped), from any caller if @caller is NULL; -1 on error.
 */
static inline int umcg_ftrace_count_from(const char *fn, const char *caller,
					 pid_t tid)
{
	char line[512], who[32], call[96], from[96], *at;
	int n = 0;
	FILE *f;

	umcg_tracefs_put("tracing_on", "0", 0);
	snprintf(who, sizeof(who), "-%d ", (int)tid);
	snprintf(call, sizeof(call), " %s", fn);
	snprintf(from, sizeof(from), "<-%s", caller ? caller : "");
	f = fopen(UMCG_TRACEFS "/trace", "r");
	if (!f)
		return -1;
	/* "comm-TID [cpu] flags time: fn[.suffix] <-caller" */
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, who))
			continue;
		at = strstr(line, call);
		if (!at || (at[strlen(call)] != ' ' && at[strlen(call)] != '.'))
			continue;
		if (!caller) {
			n++;
			continue;
		}
		at = strstr(at, from);
		if (at && strchr(".\n", at[strlen(from)]))
			n++;
	}
	fclose(f);
	return n;
}

/* Calls of @fn by task @tid in the trace buffer (stopped); -1 on error. */
static inline int umcg_ftrace_count(const char *fn, pid_t tid)
{
	return umcg_ftrace_count_from(fn, NULL, tid);
}

/* Leave the tracer as others expect it: nop, no filter, empty. */
static inline void umcg_ftrace_off(void)
{
	umcg_tracefs_put("tracing_on", "0", 0);
	umcg_tracefs_put("current_tracer", "nop", 0);
	umcg_tracefs_put("set_ftrace_filter", "", 1);
	umcg_tracefs_put("trace", "", 1);
}

/*
 * One field of /proc/self/task/@tid/status ("State", "SigPnd", ...), the
 * value after the colon with blanks skipped, into @buf.  False if absent.
 */
static inline bool umcg_task_status(pid_t pid, pid_t tid, const char *key,
				    char *buf, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid,
		 (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *v = line + klen + 1;

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = 0;
		/* truncating is fine: callers want the first characters */
		klen = strlen(v);
		if (klen >= len)
			klen = len - 1;
		memcpy(buf, v, klen);
		buf[klen] = 0;
		found = true;
		break;
	}
	fclose(f);
	return found;
}

/* The state letter of a thread of this process ('R', 'S', 'D', 't', ...). */
static inline char umcg_task_state_letter(pid_t tid)
{
	char buf[64];

	if (!umcg_task_status(getpid(), tid, "State", buf, sizeof(buf)))
		return '?';
	return buf[0];
}

/*
 * Wait (polling) until thread @tid of process @pid sleeps interruptibly
 * (state S: in the call the test means, once it got there) for up to
 * @timeout_ms; true if it does.
 */
static inline bool umcg_wait_asleep(pid_t pid, pid_t tid, int timeout_ms)
{
	char buf[64];

	for (; timeout_ms > 0; timeout_ms--) {
		if (umcg_task_status(pid, tid, "State", buf, sizeof(buf)) &&
		    buf[0] == 'S')
			return true;
		usleep(1000);
	}
	return false;
}

/* Write @s to the file @path (sysfs, cgroupfs, tracefs): 0 or -errno. */
static inline int umcg_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Mount cgroup v2 at @root and make the empty child cgroup @dir: 0 or an
 * errno (ENODEV: no cgroup v2 in this kernel).
 */
static inline int umcg_cgroup_mount(const char *root, const char *dir)
{
	int err;

	mkdir(root, 0755);
	if (mount("cgroup2", root, "cgroup2", 0, NULL)) {
		err = errno;
		rmdir(root);
		return err;
	}
	rmdir(dir);
	return mkdir(dir, 0755) ? errno : 0;
}

/* Remove @dir (0 or an errno) and unmount @root again. */
static inline int umcg_cgroup_umount(const char *root, const char *dir)
{
	int err = rmdir(dir) ? errno : 0;

	umount(root);
	rmdir(root);
	return err;
}

/*
 * Server @s runs @w and waits until @w is no longer its RUNNING worker
 * (blocked, yielded, preempted or gone), all within @timeout_ns:
 * 0, or umcg_run_worker()'s or umcg_server_wait_current()'s error.
 */
static inline int umcg_run_until_back(struct umcg_server *s,
				      struct umcg_worker *w,
				      uint64_t timeout_ns)
{
	uint64_t deadline = umcg_deadline(timeout_ns);
	int ret = umcg_run_worker(s, w, deadline);

	while (!ret && umcg_still_running(s, w))
		ret = umcg_server_wait_current(s, deadline);
	return ret;
}

/*
 * Wait until thread @tid of this process sleeps with no signal pending for
 * it (SigPnd all zero): a signal sent to it has been taken from the queue
 * and, if a handler runs for it, that has run or is set up for later.
 * True if that happened within @timeout_ms.
 */
static inline bool umcg_wait_signal_taken(pid_t tid, int timeout_ms)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) +
		       (uint64_t)timeout_ms * 1000000ULL;
	char buf[64];

	do {
		if (umcg_task_status(getpid(), tid, "SigPnd", buf, sizeof(buf)) &&
		    strspn(buf, "0") == strlen(buf) &&
		    umcg_task_state_letter(tid) == 'S')
			return true;
		usleep(1000);
	} while (umcg_now_ns(CLOCK_MONOTONIC) < end);
	return false;
}

/*
 * Wait until thread @tid of this process sleeps ('S') with a signal pending
 * for it (SigPnd not zero): a waiting worker keeps signals sent to it
 * pending, blocked, until a server runs it.  False after @timeout_ms.
 */
static inline bool umcg_wait_signal_held(pid_t tid, int timeout_ms)
{
	uint64_t end = umcg_now_ns(CLOCK_MONOTONIC) +
		       (uint64_t)timeout_ms * 1000000ULL;
	char buf[64];

	do {
		if (umcg_task_status(getpid(), tid, "SigPnd", buf, sizeof(buf)) &&
		    strspn(buf, "0") != strlen(buf) &&
		    umcg_task_state_letter(tid) == 'S')
			return true;
		usleep(1000);
	} while (umcg_now_ns(CLOCK_MONOTONIC) < end);
	return false;
}

/* Number of voluntary context switches of a thread of process @pid. */
static inline long umcg_task_nvcsw(pid_t pid, pid_t tid)
{
	char buf[64];

	if (!umcg_task_status(pid, tid, "voluntary_ctxt_switches", buf,
			      sizeof(buf)))
		return -1;
	return atol(buf);
}

#endif
