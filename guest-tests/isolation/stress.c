// SPDX-License-Identifier: GPL-2.0
/*
 * Item 9 (meant for the debug variant, runs everywhere): exercise the
 * quiesce-on-syscall-exit path and the vmstat_refresh path together while
 * every CPU is busy, with two concurrent stat_refresh writers and, where
 * possible, CPU hotplug (cpus_read_lock() against the per-CPU works), then
 * look for lockdep/KASAN/kmemleak/WARN reports in the kernel log.
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <pthread.h>
#include <sys/klog.h>
#include <sys/mman.h>

#define STRESS_SECONDS	4.0

static volatile int stop;
static volatile long refreshes, refresh_errors, worker_errors;

struct worker {
	pthread_t t;
	int cpu;
	bool quiesce;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long i = 0;

	if (page == MAP_FAILED) {
		__sync_fetch_and_add(&worker_errors, 1);
		return NULL;
	}
	pin_to_cpu(w->cpu);
	if (w->quiesce && isol_built_in() &&
	    isol_quiesce_on(ISOL_F_QUIESCE_VMSTATS))
		__sync_fetch_and_add(&worker_errors, 1);
	while (!stop) {
		/* dirty vmstat in syscalls, toggle activation now and then */
		mlock(page, 4096);
		munlock(page, 4096);
		if (w->quiesce && isol_built_in() && !(++i & 63))
			prctl(PR_ISOL_CTRL_SET, (i & 64) ? 0 : ISOL_F_QUIESCE, 0, 0, 0);
		for (volatile int spin = 0; spin < 20000; spin++)
			;
	}
	munmap(page, 4096);
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

static int hotplug_cycles(int cpu, int cycles)
{
	char path[64];
	int i, done = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (access(path, W_OK))
		return -1;
	for (i = 0; i < cycles && !stop; i++) {
		if (write_file(path, "0"))
			break;
		usleep(200000);
		if (write_file(path, "1"))
			return -2;
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

TEST_F_TIMEOUT(stress, refresh_while_busy_and_quiesced, 120)
{
	int n = online_cpus(), i, hp = -1;
	struct worker *w;
	pthread_t r1, r2;
	double end;

	if (n < 1 || n > 64)
		SKIP(return, "unexpected CPU count %d", n);
	w = calloc(n, sizeof(*w));
	ASSERT_NE(NULL, w);

	for (i = 0; i < n; i++) {
		w[i].cpu = i;
		w[i].quiesce = i & 1 || n == 1;
		ASSERT_EQ(0, pthread_create(&w[i].t, NULL, worker_fn, &w[i]));
	}
	ASSERT_EQ(0, pthread_create(&r1, NULL, refresher_fn, NULL));
	ASSERT_EQ(0, pthread_create(&r2, NULL, refresher_fn, NULL));

	end = now_sec() + STRESS_SECONDS;
	if (n > 1)
		hp = hotplug_cycles(1, 2);
	while (now_sec() < end)
		usleep(100000);
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	pthread_join(r1, NULL);
	pthread_join(r2, NULL);
	free(w);

	ksft_print_msg("metric: stress_stat_refresh_writes=%ld\n", refreshes);
	ksft_print_msg("metric: stress_hotplug_cycles=%d\n", hp);
	EXPECT_EQ(0, worker_errors);
	EXPECT_EQ(0, refresh_errors);
	EXPECT_LT(0, refreshes);
	EXPECT_NE(-2, hp) {
		TH_LOG("CPU 1 did not come back online");
	}
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
