/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the isolation suite (a header in the suite folder, not a
 * test program): feature detection, isolated CPUs from /proc/cmdline, CPU
 * pinning, tracefs counting of vmstat work items, small file helpers.
 */
#ifndef ISOL_COMMON_H
#define ISOL_COMMON_H

/*
 * Include this before kselftest_harness.h: the harness has unused
 * parameters and, in TEST_F wrappers, a local next to setjmp(); with
 * -Wextra -Werror at -O2 gcc would reject both.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wclobbered"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/prctl.h>

#include "kconfig.h"

#define ISOL_SYSFS	"/sys/kernel/task_isolation"
#ifndef TRACEFS		/* a saved trace, in the tooling tests */
#define TRACEFS		"/sys/kernel/tracing"
#endif
/* The quiescing hook on every return to user space (patch 2), for tracing */
#define ISOL_EXIT_HOOK	"__task_isol_exit_to_user_mode"

/*
 * The UAPI of a kernel built without this series has no PR_ISOL_*: the
 * values are fixed ABI, so spell them out for the off-variant checks.
 */
#ifndef PR_ISOL_FEAT
#define PR_ISOL_FEAT		0x49534f46
#define PR_ISOL_GET		0x49534f47
#define PR_ISOL_SET		0x49534f53
#define PR_ISOL_CTRL_GET	0x49534347
#define PR_ISOL_CTRL_SET	0x49534353
#define PR_ISOL_F_QUIESCE		(1UL << 0)
#define PR_ISOL_F_QUIESCE_VMSTATS	(1UL << 0)
#endif

/*
 * PR_ISOL_FEAT sub-commands for PR_ISOL_F_QUIESCE (arg3).  The default-mask
 * query has its own name and a value that can never be an action bit
 * (bit 31 would make the returned mask negative), so that passing it to
 * PR_ISOL_SET by mistake fails instead of selecting an action.
 */
#ifndef PR_ISOL_QUIESCE_GET_DEFAULT
#define PR_ISOL_QUIESCE_LIST		0UL
#define PR_ISOL_QUIESCE_GET_DEFAULT	(1UL << 31)
#endif

/* Signed copies for comparisons with prctl() results */
#define ISOL_Q		((long)PR_ISOL_F_QUIESCE)
#define ISOL_VM		((long)PR_ISOL_F_QUIESCE_VMSTATS)

/* prctl() returning the value or -errno. */
static inline long isol_prctl(long opt, unsigned long a2, unsigned long a3,
			      unsigned long a4, unsigned long a5)
{
	long ret = prctl(opt, a2, a3, a4, a5);

	return ret < 0 ? -errno : ret;
}

/*
 * 1: CONFIG_TASK_ISOLATION=y, 0: not set.  Without /proc/config.gz fall back
 * to probing the interface.
 */
static inline int isol_built_in(void)
{
	char val[16];
	int r = kconfig_value("TASK_ISOLATION", val, sizeof(val));

	if (r >= 0)
		return r == 1 && strcmp(val, "y") == 0;
	return isol_prctl(PR_ISOL_FEAT, 0, 0, 0, 0) != -EOPNOTSUPP;
}

/* Activate PR_ISOL_F_QUIESCE with @mask for the calling thread. */
static inline int isol_quiesce_on(unsigned long mask)
{
	if (prctl(PR_ISOL_SET, PR_ISOL_F_QUIESCE, mask, 0, 0))
		return -errno;
	if (prctl(PR_ISOL_CTRL_SET, PR_ISOL_F_QUIESCE, 0, 0, 0))
		return -errno;
	return 0;
}

static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	buf[n] = '\0';
	close(fd);
	return n;
}

/*
 * Open @path with @flags and write @s (nothing when it is empty: an
 * O_TRUNC open alone empties a tracefs file). Returns the bytes written
 * or -errno of open/write.
 */
static inline ssize_t write_file_flags(const char *path, const char *s,
				       int flags)
{
	int fd = open(path, flags);
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	if (*s)
		n = write(fd, s, strlen(s));
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

/* Returns 0 or -errno of open/write. */
static inline int write_file(const char *path, const char *s)
{
	ssize_t n = write_file_flags(path, s, O_WRONLY);

	return n < 0 ? (int)n : 0;
}

/* Parse a CPU list ("2-3,5") into a bitmask; stops at a space. */
/* Put back the vm.stat_interval read into @saved ("" if the read failed). */
static inline void restore_stat_interval(const char *saved)
{
	if (saved[0])
		write_file("/proc/sys/vm/stat_interval", saved);
}

static inline unsigned long parse_cpulist(const char *s)
{
	unsigned long mask = 0;

	while (*s && *s != ' ' && *s != '\n') {
		char *end;
		long a, b;

		if (!(*s >= '0' && *s <= '9')) {
			/* isolcpus= flags such as "nohz," or "domain," */
			while (*s && *s != ',' && *s != ' ' && *s != '\n')
				s++;
			if (*s == ',')
				s++;
			continue;
		}
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (; a <= b && a < 64; a++)
			mask |= 1UL << a;
		s = end;
		if (*s == ',')
			s++;
	}
	return mask;
}

/* CPUs named by nohz_full= or isolcpus= on the kernel command line. */
static inline unsigned long isolated_cpus(void)
{
	static const char * const keys[] = { "nohz_full=", "isolcpus=" };
	unsigned long mask = 0;
	char cmdline[4096];
	unsigned int i;

	if (read_file("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		return 0;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *p = cmdline;

		while ((p = strstr(p, keys[i])) != NULL) {
			if (p == cmdline || p[-1] == ' ')
				mask |= parse_cpulist(p + strlen(keys[i]));
			p += strlen(keys[i]);
		}
	}
	return mask;
}

static inline int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * Drain the current CPU's mlock and LRU batches: munmap() does
 * lru_add_drain(). Children of earlier tests that exited on this CPU left
 * munlocks there, whose NR_MLOCK decrements the next drain applies, so a
 * measured mlock() would count them. 0, or -1.
 */
static inline int drain_cpu_batches(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED || munmap(p, 4096) ? -1 : 0;
}

static inline double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Empty set_ftrace_filter: only O_TRUNC does (writing an empty string
 * leaves the filter as it was, for every later user of the tracer).
 */
static inline int trace_filter_clear(void)
{
	ssize_t n = write_file_flags(TRACEFS "/set_ftrace_filter", "",
				     O_WRONLY | O_TRUNC);

	return n < 0 ? (int)n : 0;
}

/* Add @fn to set_ftrace_filter (O_APPEND: a plain write replaces it). */
static inline int trace_filter_add(const char *fn)
{
	ssize_t n = write_file_flags(TRACEFS "/set_ftrace_filter", fn,
				     O_WRONLY | O_APPEND);

	if (n < 0)
		return (int)n;
	return n == (ssize_t)strlen(fn) ? 0 : -EIO;
}

/* Discard what was traced so far (tracing stays on): needs O_TRUNC. */
static inline int trace_clear(void)
{
	ssize_t n = write_file_flags(TRACEFS "/trace", "", O_WRONLY | O_TRUNC);

	return n < 0 ? (int)n : 0;
}

/*
 * Trace every workqueue_execute_start and _end and every switch to or
 * from a kworker.  A kworker that was woken for work that was cancelled
 * before it ran still interrupts the CPU once, without an execute event;
 * one that runs unrelated work (vmstat_shepherd's global timer, a tty
 * flush) is counted apart.  A work function that blocks (driver core's
 * deferred_probe_timeout_work_func, 10 s after boot) continues in a later
 * slot that has no execute_start, only the function's execute_end: that
 * tells it apart from a wakeup for cancelled work.  The sched_switch filter
 * is an optimisation only: counting matches the text of each line.
 */
#define WQ_START	TRACEFS "/events/workqueue/workqueue_execute_start"
#define WQ_END		TRACEFS "/events/workqueue/workqueue_execute_end"
#define SCHED_SWITCH	TRACEFS "/events/sched/sched_switch"

/* The events trace_vmstat_start() enables can be enabled here */
static inline bool trace_kworker_events(void)
{
	return !access(WQ_START "/enable", W_OK) &&
	       !access(WQ_END "/enable", W_OK) &&
	       !access(SCHED_SWITCH "/enable", W_OK);
}

static inline int trace_vmstat_start(void)
{
	int ret;

	write_file(TRACEFS "/tracing_on", "0");
	write_file(TRACEFS "/events/enable", "0");
	write_file(TRACEFS "/buffer_size_kb", "1024");
	write_file(WQ_START "/filter", "0");
	write_file(WQ_END "/filter", "0");
	write_file(SCHED_SWITCH "/filter",
		   "prev_comm ~ \"kworker*\" || next_comm ~ \"kworker*\"");
	ret = write_file(WQ_START "/enable", "1");
	if (ret)
		return ret;
	ret = write_file(WQ_END "/enable", "1");
	if (ret)
		return ret;
	ret = write_file(SCHED_SWITCH "/enable", "1");
	if (ret)
		return ret;
	ret = trace_clear();
	if (ret)
		return ret;
	return write_file(TRACEFS "/tracing_on", "1");
}

static inline void trace_stop(void)
{
	write_file(TRACEFS "/tracing_on", "0");
}

static inline void trace_off(void)
{
	write_file(TRACEFS "/tracing_on", "0");
	write_file(WQ_START "/enable", "0");
	write_file(WQ_START "/filter", "0");
	write_file(WQ_END "/enable", "0");
	write_file(WQ_END "/filter", "0");
	write_file(SCHED_SWITCH "/enable", "0");
	write_file(SCHED_SWITCH "/filter", "0");
	trace_clear();
}

/* @cpu's trace buffer, read with trace_next_line(); NULL and errno. */
static inline FILE *trace_cpu_open(int cpu)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%d/trace", cpu);
	return fopen(path, "r");
}

/* The next line of a trace that is an event (comments skipped). */
static inline bool trace_next_line(FILE *f, char *line, int len)
{
	while (fgets(line, len, f))
		if (line[0] != '#')
			return true;
	return false;
}

/* Count the lines of @cpu's trace buffer that contain both @a and @b. */
static inline int trace_count_lines(int cpu, const char *a, const char *b)
{
	char line[512];
	int count = 0;
	FILE *f = trace_cpu_open(cpu);

	if (!f)
		return -errno;
	while (trace_next_line(f, line, sizeof(line))) {
		if (strstr(line, a) && (!b || strstr(line, b)))
			count++;
	}
	fclose(f);
	return count;
}

/*
 * Trace the calls of the kernel function @fn with the function tracer (the
 * only function in set_ftrace_filter), from an empty buffer; -1 where that
 * cannot be done (no CONFIG_FUNCTION_TRACER, @fn not traceable).
 */
static inline int trace_function_start(const char *fn)
{
	write_file(TRACEFS "/tracing_on", "0");
	if (trace_filter_clear() || write_file(TRACEFS "/set_ftrace_filter", fn) ||
	    write_file(TRACEFS "/current_tracer", "function") || trace_clear())
		return -1;
	return write_file(TRACEFS "/tracing_on", "1");
}

/* The tracer as the others find it: off, nop, no filter, an empty buffer. */
static inline void trace_function_off(void)
{
	write_file(TRACEFS "/tracing_on", "0");
	write_file(TRACEFS "/current_tracer", "nop");
	trace_filter_clear();
	trace_clear();
}

/* "-PID ", how a trace line names process @pid (after its comm) */
static inline const char *task_tag(pid_t pid)
{
	static char tag[32];

	snprintf(tag, sizeof(tag), "-%d ", (int)pid);
	return tag;
}

/*
 * Lines of the trace naming @fn in process @pid ("comm-PID"), in any
 * process if @pid is 0; -1 on error.
 */
static inline int trace_count_pid(const char *fn, pid_t pid)
{
	const char *who = pid ? task_tag(pid) : "";
	char line[512];
	int n = 0;
	FILE *f = fopen(TRACEFS "/trace", "r");

	if (!f)
		return -errno;
	while (trace_next_line(f, line, sizeof(line)))
		if (strstr(line, who) && strstr(line, fn))
			n++;
	fclose(f);
	return n;
}

static inline bool is_vmstat_work(const char *line)
{
	static const char * const fns[] = { "vmstat_update", "refresh_vm_stats" };
	unsigned int i;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		const char *p = strstr(line, "function ");

		if (p && !strncmp(p + 9, fns[i], strlen(fns[i])) &&
		    (p[9 + strlen(fns[i])] == '\n' || p[9 + strlen(fns[i])] == '\0' ||
		     p[9 + strlen(fns[i])] == ' '))
			return true;
	}
	return false;
}

/* Interruptions of one CPU by kworkers, from its trace buffer */
struct kworker_irqs {
	int exec;	/* executions of vmstat work functions */
	int sw;		/* kworker slots of episodes with vmstat work or none */
	int other;	/* kworker slots of episodes with only other work */
};

/*
 * One busy period of a kworker, from its wakeup to the switch away in which
 * it goes idle (prev_state=I): its slots on the CPU and what it ran.
 */
struct kworker_episode {
	long pid;
	int slots;
	bool vm, other;
};

#define KWORKER_EPISODES 32

static inline long trace_field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static inline struct kworker_episode *
kworker_episode(struct kworker_episode *e, long pid)
{
	int i, free = -1;

	for (i = 0; i < KWORKER_EPISODES; i++) {
		if (e[i].pid == pid)
			return &e[i];
		if (free < 0 && !e[i].pid)
			free = i;
	}
	if (free < 0)
		return NULL;
	e[free].pid = pid;
	return &e[free];
}

/* Count an episode's slots: only other work is @other, the rest @sw */
static inline void kworker_episode_end(struct kworker_episode *e,
				       struct kworker_irqs *n)
{
	if (e->other && !e->vm)
		n->other += e->slots;
	else
		n->sw += e->slots;
	memset(e, 0, sizeof(*e));
}

/*
 * Walk @cpu's trace: each switch to a kworker is a slot, an interruption of
 * the CPU.  A kworker's slots up to the one in which it goes idle belong to
 * one episode and count together: all as @other if the episode ran (started
 * or finished) only other work functions, all as @sw if it ran vmstat work
 * or nothing at all (woken for cancelled work).  A work function that
 * blocks (driver core's deferred_probe_timeout_work_func, 10 s after boot)
 * or a kworker preempted before its work starts spans several slots, some
 * without any execute event.  Left: a work function that started before
 * the trace and blocks again before its execute_end, or one that sleeps in
 * TASK_IDLE, still counts as @sw; both err towards failing.  With @dump, print the kworker lines (at most
 * 40) as diagnostics.
 */
static inline int trace_kworker_irqs(int cpu, struct kworker_irqs *n, bool dump)
{
	struct kworker_episode ep[KWORKER_EPISODES] = {}, *cur = NULL, *e;
	char line[512];
	int dumped = 0, i;
	FILE *f;

	memset(n, 0, sizeof(*n));
	f = trace_cpu_open(cpu);
	if (!f)
		return -errno;
	while (trace_next_line(f, line, sizeof(line))) {
		bool sw = strstr(line, "sched_switch:");
		bool start = strstr(line, "workqueue_execute_start:");
		bool wq = start || strstr(line, "workqueue_execute_end:");
		const char *st;

		if (!sw && !wq)
			continue;
		if (dump && dumped++ < 40)
			printf("# trace cpu%d: %s", cpu, line);
		if (wq) {
			bool v = is_vmstat_work(line);

			n->exec += v && start;
			if (cur) {
				cur->vm |= v;
				cur->other |= !v;
			}
			continue;
		}
		if (cur && strstr(line, "prev_comm=kworker")) {
			cur->slots++;
			st = strstr(line, "prev_state=");
			if (st && st[11] == 'I')
				kworker_episode_end(cur, n);
			cur = NULL;
		}
		if (strstr(line, "next_comm=kworker")) {
			cur = kworker_episode(ep, trace_field(line, "next_pid="));
			if (!cur)	/* more kworkers than slots: count it alone */
				n->sw++;
		}
	}
	fclose(f);
	if (cur)
		cur->slots++;
	for (i = 0; i < KWORKER_EPISODES; i++) {
		e = &ep[i];
		if (e->slots)
			kworker_episode_end(e, n);
	}
	return 0;
}

/*
 * The metrics of one measurement made twice, without and with quiescing:
 * "<name>_not_quiesced" and "<name>_quiesced", printed with @fmt.  (Macros:
 * ksft_print_msg() comes with kselftest_harness.h, included after this.)
 */
#define ISOL_METRIC_PAIR(name, fmt, not_quiesced, quiesced) do {		\
	ksft_print_msg("metric: " name "_not_quiesced=" fmt "\n", not_quiesced); \
	ksft_print_msg("metric: " name "_quiesced=" fmt "\n", quiesced);	\
} while (0)

/*
 * The kworker interruptions of such a pair (struct kworker_irqs): the
 * vmstat work items as "<prefix>_<work>", then the kworker switches and
 * the switches for other work.
 */
#define ISOL_KWORKER_METRICS(prefix, work, base, q) do {			\
	ISOL_METRIC_PAIR(prefix "_" work, "%d", (base).exec, (q).exec);		\
	ISOL_METRIC_PAIR(prefix "_kworker_switches", "%d", (base).sw, (q).sw);	\
	ISOL_METRIC_PAIR(prefix "_kworker_other_work", "%d", (base).other,	\
			 (q).other);						\
} while (0)

/* Value of @key in /proc/vmstat, -1 if not found. */
static inline long vmstat_value(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long val = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			val = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

/* Value in kB of @key ("Slab") in /proc/meminfo, -1 if not found. */
static inline long meminfo_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long val = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			val = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

static inline int online_cpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

#endif
