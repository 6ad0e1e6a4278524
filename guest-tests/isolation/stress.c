// SPDX-License-Identifier: GPL-2.0
/*
 * Meant for the debug variants, runs everywhere: exercise the quiesce path
 * and the vmstat_refresh path together while every CPU is busy, with two
 * concurrent stat_refresh writers, then again during CPU hotplug
 * (cpus_read_lock() against the per-CPU works; SKIP where CPUs cannot go
 * offline), then look for lockdep/KASAN/kmemleak/WARN reports in the
 * kernel log.  Every system call's result is checked.
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <pthread.h>
#include <sys/klog.h>
#include <sys/mman.h>

#define STRESS_SECONDS	4.0

static volatile int stop;
static volatile long refreshes, refresh_errors, worker_errors, started;
/* the first failed call of a worker, for the log */
static const char *volatile worker_failed;
static volatile int worker_errno;

struct worker {
	pthread_t t;
	int cpu;
	bool quiesce;
};

static void worker_error(const char *what)
{
	if (!__sync_fetch_and_add(&worker_errors, 1)) {
		worker_errno = errno;
		worker_failed = what;
	}
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	bool isol = w->quiesce && isol_built_in();
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long i = 0;

	if (page == MAP_FAILED) {
		worker_error("mmap");
		__sync_fetch_and_add(&started, 1);
		return NULL;
	}
	if (pin_to_cpu(w->cpu))
		worker_error("sched_setaffinity");
	if (isol && isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS))
		worker_error("PR_ISOL_SET/CTRL_SET");
	__sync_fetch_and_add(&started, 1);
	while (!stop) {
		/* dirty vmstat in syscalls, toggle activation now and then */
		if (mlock(page, 4096))
			worker_error("mlock");
		if (munlock(page, 4096))
			worker_error("munlock");
		if (isol && !(++i & 63) &&
		    prctl(PR_ISOL_CTRL_SET, (i & 64) ? 0 : PR_ISOL_F_QUIESCE, 0, 0, 0))
			worker_error("PR_ISOL_CTRL_SET");
		for (volatile int spin = 0; spin < 20000; spin++)
			;
	}
	if (munmap(page, 4096))
		worker_error("munmap");
	return NULL;
}

static void *refresher_fn(void *arg)
{
	(void)arg;
	while (!stop) {
		if (write_file("/proc/sys/vm/stat_refresh", "1"))
			__sync_fetch_and_add(&refresh_errors, 1);
		__sync_fetch_and_add(&refreshes, 1);
	}
	return NULL;
}

/*
 * Take @cpu offline and online again @cycles times.  Returns the cycles
 * done, or -1 with @why set when a write failed.
 */
static int hotplug_cycles(int cpu, int cycles, const char **why)
{
	char path[64];
	int i, done = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	for (i = 0; i < cycles; i++) {
		if (write_file(path, "0")) {
			*why = "offline write failed";
			return -1;
		}
		usleep(200000);
		if (write_file(path, "1")) {
			*why = "online write failed: the CPU stays offline";
			return -1;
		}
		usleep(200000);
		done++;
	}
	return done;
}

static int kernel_log_splats(void)
{
	static const char * const markers[] = {
		"WARNING:", "BUG:", "possible circular locking",
		"possible recursive locking", "inconsistent lock state",
		"suspicious RCU usage", "suspected memory leak", "Call Trace:",
	};
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), n;
	unsigned int i;
	int hits = 0;
	char *buf;

	if (len <= 0)
		return -1;
	buf = calloc(1, len + 1);
	if (!buf)
		return -1;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	for (i = 0; i < ARRAY_SIZE(markers); i++) {
		char *p = buf;

		while ((p = strstr(p, markers[i])) != NULL) {
			char *eol = strchr(p, '\n');

			printf("# kernel log: %.*s\n",
			       (int)(eol ? eol - p : (long)strlen(p)), p);
			hits++;
			p += strlen(markers[i]);
		}
	}
	free(buf);
	return hits;
}

FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

/* Start a worker on every CPU (every other one quiescing) and two refreshers. */
static int start_load(struct worker *w, int n, pthread_t *r)
{
	int i;

	stop = 0;
	refreshes = refresh_errors = worker_errors = started = 0;
	worker_failed = NULL;
	for (i = 0; i < n; i++) {
		w[i].cpu = i;
		w[i].quiesce = i & 1 || n == 1;
		if (pthread_create(&w[i].t, NULL, worker_fn, &w[i]))
			return -1;
	}
	/* every worker is on its CPU before any CPU goes away */
	while (started < n)
		usleep(1000);
	if (pthread_create(&r[0], NULL, refresher_fn, NULL) ||
	    pthread_create(&r[1], NULL, refresher_fn, NULL))
		return -1;
	return 0;
}

static int stop_load(struct worker *w, int n, pthread_t *r)
{
	int i, ret = 0;

	stop = 1;
	for (i = 0; i < n; i++)
		ret |= pthread_join(w[i].t, NULL);
	ret |= pthread_join(r[0], NULL);
	ret |= pthread_join(r[1], NULL);
	return ret;
}

TEST_F_TIMEOUT(stress, refresh_while_busy_and_quiesced, 120)
{
	int n = online_cpus();
	struct worker *w;
	pthread_t r[2];
	double end;

	if (n < 1 || n > 64)
		SKIP(return, "unexpected CPU count %d", n);
	w = calloc(n, sizeof(*w));
	ASSERT_NE(NULL, w);

	ASSERT_EQ(0, start_load(w, n, r));
	end = now_sec() + STRESS_SECONDS;
	while (now_sec() < end)
		usleep(100000);
	ASSERT_EQ(0, stop_load(w, n, r));
	free(w);

	ksft_print_msg("metric: stress_stat_refresh_writes=%ld\n", refreshes);
	EXPECT_EQ(0, worker_errors) {
		TH_LOG("first failure: %s: %s", worker_failed, strerror(worker_errno));
	}
	EXPECT_EQ(0, refresh_errors);
	EXPECT_LT(0, refreshes);
}

/*
 * The same load while CPU 1 goes offline and online twice: the per-CPU
 * refresh works are queued and flushed under cpus_read_lock(), and a
 * quiescing task's CPU disappears under it.
 */
TEST_F_TIMEOUT(stress, refresh_during_cpu_hotplug, 120)
{
	const char *online = "/sys/devices/system/cpu/cpu1/online";
	const char *why = "";
	int n = online_cpus(), hp;
	struct worker *w;
	pthread_t r[2];

	if (n < 2 || n > 64)
		SKIP(return, "needs at least two CPUs, has %d", n);
	if (access(online, W_OK))
		SKIP(return, "no CPU hotplug: %s is not writable (%s)", online,
		     strerror(errno));
	w = calloc(n, sizeof(*w));
	ASSERT_NE(NULL, w);

	ASSERT_EQ(0, start_load(w, n, r));
	hp = hotplug_cycles(1, 2, &why);
	ASSERT_EQ(0, stop_load(w, n, r));
	free(w);

	ksft_print_msg("metric: hotplug_stat_refresh_writes=%ld\n", refreshes);
	ksft_print_msg("metric: hotplug_cycles=%d\n", hp);
	ASSERT_EQ(2, hp) {
		TH_LOG("CPU 1: %s", why);
	}
	EXPECT_EQ(0, worker_errors) {
		TH_LOG("first failure: %s: %s", worker_failed, strerror(worker_errno));
	}
	EXPECT_EQ(0, refresh_errors);
	EXPECT_LT(0, refreshes);
}

/* after the stress test: TEST_F cases run in the order they are defined */
TEST_F(stress, no_kernel_splat_in_log)
{
	int hits = kernel_log_splats();

	if (hits < 0)
		SKIP(return, "cannot read the kernel log");
	ksft_print_msg("metric: kernel_log_splat_lines=%d\n", hits);
	EXPECT_EQ(0, hits);
}

TEST_HARNESS_MAIN
