// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/pin_limit: the page a registered task pins for as long as it is
 * registered is charged to the process (VmPin) and limited by
 * RLIMIT_MEMLOCK unless the task has CAP_IPC_LOCK; past the limit
 * registration fails with ENOMEM.  A structure in a transparent huge
 * page has the page split first, so that the pin holds and is charged one
 * 4 KiB page; one that cannot be split is charged whole.  Registering and
 * leaving many times leaves nothing pinned and no memory behind.
 */
#define _GNU_SOURCE	/* vmsplice() */
#include <fcntl.h>
#include <sys/uio.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "umcg_test.h"

#define LIMIT_PAGES	3

/* VmPin of this process in kB, -1 if absent. */
static long vm_pin_kb(void)
{
	char buf[64];

	if (!umcg_task_status(getpid(), getpid(), "VmPin", buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

static long meminfo_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = atol(line + klen + 1);
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * FOLL_PIN pins held in the whole system: nr_foll_pin_acquired less
 * nr_foll_pin_released of /proc/vmstat, after vm.stat_refresh folded the
 * per-CPU counts (exact, unlike MemFree); -1 on error.
 */
static long foll_pins_held(void)
{
	long acquired = -1, released = -1;
	char key[64];
	long v;
	FILE *f;

	f = fopen("/proc/sys/vm/stat_refresh", "w");
	if (f) {
		if (fputs("1", f) < 0 || fclose(f))
			return -1;
	} else if (errno != ENOENT) {
		return -1;
	}
	/* (no stat_refresh without SMP: no per-CPU counts to fold there) */
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2) {
		if (!strcmp(key, "nr_foll_pin_acquired"))
			acquired = v;
		else if (!strcmp(key, "nr_foll_pin_released"))
			released = v;
	}
	fclose(f);
	return acquired < 0 || released < 0 ? -1 : acquired - released;
}

static int drop_cap_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].permitted &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

struct reg {
	struct umcg_task	*task;
	int			ret;		/* 0 or errno */
	int			registered;
	int			leave;
};

/* A thread registers as a server and stays until told to leave. */
static void *registrar(void *arg)
{
	struct reg *r = arg;

	r->task->state = UMCG_TASK_RUNNING;
	r->ret = umcg_ctl(UMCG_CTL_REGISTER, r->task) ? errno : 0;
	__atomic_store_n(&r->registered, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&r->leave, __ATOMIC_SEQ_CST))
		usleep(1000);
	return NULL;	/* exit ends the registration */
}

/* A thread registers on @task and stays: 0 or its errno, -1 if none ran. */
static int register_thread(struct reg *r, pthread_t *t, void *task)
{
	memset(r, 0, sizeof(*r));
	r->task = task;
	if (pthread_create(t, NULL, registrar, r))
		return -1;
	while (!__atomic_load_n(&r->registered, __ATOMIC_SEQ_CST))
		usleep(1000);
	return r->ret;
}

static void leave_all(struct reg *r, pthread_t *t, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		__atomic_store_n(&r[i].leave, 1, __ATOMIC_SEQ_CST);
		pthread_join(t[i], NULL);
	}
}

static int limit_pages(long pages)
{
	struct rlimit rl = { pages * 4096, pages * 4096 };

	if (drop_cap_ipc_lock())
		return 3;
	return setrlimit(RLIMIT_MEMLOCK, &rl) ? 4 : 0;
}

/*
 * In a child without CAP_IPC_LOCK and with RLIMIT_MEMLOCK of LIMIT_PAGES
 * pages: LIMIT_PAGES tasks register, the next one gets ENOMEM.  Exit code
 * 0, or the step that failed; details in *@out.
 */
struct limit_result {
	int	rets[LIMIT_PAGES + 1];
	long	pin_kb[LIMIT_PAGES + 3];	/* before, after each, after exit */
};

static int limit_child(void *arg)
{
	struct limit_result *out = arg;
	struct reg r[LIMIT_PAGES + 1];
	pthread_t t[LIMIT_PAGES + 1];
	int i, ret = limit_pages(LIMIT_PAGES);
	void *task;

	if (ret)
		return ret;
	out->pin_kb[0] = vm_pin_kb();
	for (i = 0; i <= LIMIT_PAGES; i++) {
		task = umcg_test_zalloc(4096);	/* a page each */
		if (!task)
			return 6;
		out->rets[i] = register_thread(&r[i], &t[i], task);
		if (out->rets[i] < 0)
			return 5;
		out->pin_kb[i + 1] = vm_pin_kb();
	}
	leave_all(r, t, LIMIT_PAGES + 1);
	out->pin_kb[LIMIT_PAGES + 2] = vm_pin_kb();
	return 0;
}

TEST(memlock_limit)
{
	struct limit_result *res;
	int i;

	UMCG_REQUIRE();
	res = umcg_test_shared(sizeof(*res));
	ASSERT_NE(NULL, res);
	ASSERT_EQ(0, umcg_fork_wait(limit_child, res));
	for (i = 0; i <= LIMIT_PAGES; i++)
		TH_LOG("registration %d: %s, VmPin %ld kB", i + 1,
		       res->rets[i] ? strerror(res->rets[i]) : "ok",
		       res->pin_kb[i + 1]);
	EXPECT_EQ(0, res->pin_kb[0]);
	for (i = 0; i < LIMIT_PAGES; i++) {
		EXPECT_EQ(0, res->rets[i]);
		EXPECT_EQ(4L * (i + 1), res->pin_kb[i + 1]);
	}
	/* One page past RLIMIT_MEMLOCK: refused, nothing charged. */
	EXPECT_EQ(ENOMEM, res->rets[LIMIT_PAGES]);
	EXPECT_EQ(4L * LIMIT_PAGES, res->pin_kb[LIMIT_PAGES + 1]);
	/* The threads left: nothing pinned any more. */
	EXPECT_EQ(0, res->pin_kb[LIMIT_PAGES + 2]);
}

TEST(cap_ipc_lock_not_limited)
{
	struct rlimit rl = { 0, 0 }, old;
	struct reg r;
	pthread_t t;
	void *task;
	int ret;

	UMCG_REQUIRE();
	/* This test runs as root: CAP_IPC_LOCK. */
	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &old));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	task = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, task);
	ret = register_thread(&r, &t, task);
	ASSERT_LE(0, ret);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(4, vm_pin_kb());
	leave_all(&r, &t, 1);
	EXPECT_EQ(0, vm_pin_kb());
	setrlimit(RLIMIT_MEMLOCK, &old);
}

static void *register_and_exit(void *arg)
{
	struct umcg_task *task = arg;

	task->state = UMCG_TASK_RUNNING;
	return (void *)(long)(umcg_ctl(UMCG_CTL_REGISTER, task) ? errno : 0);
}

/*
 * 2200 register/unregister cycles in a KASAN kernel under TCG take longer
 * than the harness's default 30 s when the host is busy (seen: "Test
 * terminated by timeout" in debug with builds beside it), so this test
 * gets its own budget.  The fixture is named "global" so the test id
 * stays global.no_leak_after_many_registrations.
 */
FIXTURE(global) {};
FIXTURE_SETUP(global) {}
FIXTURE_TEARDOWN(global) {}

TEST_F_TIMEOUT(global, no_leak_after_many_registrations, 180)
{
	long free0, free1, pin, pins0, pins1;
	int i, fails = 0;
	void *ret;

	UMCG_REQUIRE();
	pins0 = foll_pins_held();
	ASSERT_LE(0, pins0);
	free0 = meminfo_kb("MemFree");
	ASSERT_LT(0, free0);
	for (i = 0; i < 2000; i++) {
		/* a fresh page each time: a kept pin keeps the page */
		struct umcg_task *t = umcg_test_zalloc(4096);

		ASSERT_NE(NULL, t);
		t->state = UMCG_TASK_RUNNING;
		if (umcg_ctl(UMCG_CTL_REGISTER, t) || umcg_ctl(UMCG_CTL_UNREGISTER, NULL))
			fails++;
		munmap(t, 4096);
	}
	for (i = 0; i < 200; i++) {
		struct umcg_task *t = umcg_test_zalloc(4096);
		pthread_t th;

		ASSERT_NE(NULL, t);
		ASSERT_EQ(0, pthread_create(&th, NULL, register_and_exit, t));
		pthread_join(th, &ret);
		if (ret)
			fails++;
		munmap(t, 4096);
	}
	EXPECT_EQ(0, fails);
	pin = vm_pin_kb();
	EXPECT_EQ(0, pin);
	/* every pin taken was released: exact, in every variant */
	pins1 = foll_pins_held();
	ksft_print_msg("metric: foll_pins_held_before=%ld\n", pins0);
	ksft_print_msg("metric: foll_pins_held_after=%ld\n", pins1);
	EXPECT_EQ(pins0, pins1);
	free1 = meminfo_kb("MemFree");
	TH_LOG("MemFree %ld kB -> %ld kB after 2200 register/leave cycles",
	       free0, free1);
	/*
	 * The pages themselves, coarsely: MemFree moves by up to about
	 * 4.5 MB without a leak (per-CPU page lists; 4456 kB seen in the kvm
	 * variant, 6 December 2026), and a kernel that leaked all 2200 pins
	 * lost only 4992 kB of it (a scratch tree, the same day): the pin
	 * count above is the leak check, this bound (6000 kB) only catches
	 * a larger loss of pages. With KASAN,
	 * freed objects wait in its quarantine (up to 1/32 of memory, 16 MB
	 * here), so MemFree cannot tell a leak: kmemleak's scan at the end of
	 * the debug boot is the leak check there.
	 */
	if (!kconfig_enabled("CONFIG_KASAN"))
		EXPECT_LT(free0 - free1, 6000);
}

/*
 * Structs in a transparent huge page: each registration charges one page,
 * not the whole 2 MiB folio, so a runtime that callocs its tasks into a
 * THP does not hit RLIMIT_MEMLOCK at the fifth task (review finding 4).
 * Exit code 0, 1 (skip: no THP), or the step that failed.
 */
#define THP_SIZE	(2UL << 20)
#define THP_TASKS	4
#define THP_COUNT	5	/* one more than the limit allows */
#define PAGE_KB		4L

static long anon_huge_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "AnonHugePages:", 14))
			kb = atol(line + 14);
	fclose(f);
	return kb;
}

#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"

/*
 * The kernel turns THP off on machines under 512 MiB (the 512M variants):
 * allow it for MADV_HUGEPAGE ranges while a test runs.  Returns the mode
 * to restore, "" if there is nothing to restore.
 */
static const char *thp_allow(void)
{
	char mode[64] = "";
	FILE *f = fopen(THP_ENABLED, "r");

	if (!f)
		return "";
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = 0;
	fclose(f);
	if (!strstr(mode, "[never]"))
		return "";
	f = fopen(THP_ENABLED, "w");
	if (!f)
		return "";
	fputs("madvise", f);
	return fclose(f) ? "" : "never";
}

static void thp_restore(const char *mode)
{
	FILE *f;

	if (!*mode)
		return;
	f = fopen(THP_ENABLED, "w");
	if (f) {
		fputs(mode, f);
		fclose(f);
	}
}

/*
 * @n transparent huge pages, 2 MiB-aligned and faulted in; NULL if the
 * kernel has none to give, with the reason in @why (exit code 1 of the
 * children below: SKIP).
 */
static char *thp_alloc(int n, char *why, size_t len)
{
	long before = anon_huge_kb(), after;
	char *map, *huge;

	if (access(THP_ENABLED, F_OK)) {
		snprintf(why, len, "no /sys/kernel/mm/transparent_hugepage (CONFIG_TRANSPARENT_HUGEPAGE not set)");
		return NULL;
	}
	map = mmap(NULL, (n + 1) * THP_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		snprintf(why, len, "mmap: %s", strerror(errno));
		return NULL;
	}
	huge = (char *)(((uintptr_t)map + THP_SIZE - 1) & ~(THP_SIZE - 1));
	if (madvise(huge, n * THP_SIZE, MADV_HUGEPAGE)) {
		snprintf(why, len, "madvise(MADV_HUGEPAGE): %s", strerror(errno));
		return NULL;
	}
	memset(huge, 0, n * THP_SIZE);
	after = anon_huge_kb();
	if (after - before < n * (long)(THP_SIZE >> 10)) {
		char mode[64] = "?";
		FILE *f = fopen(THP_ENABLED, "r");

		if (f) {
			if (!fgets(mode, sizeof(mode), f))
				strcpy(mode, "?");
			mode[strcspn(mode, "\n")] = 0;
			fclose(f);
		}
		snprintf(why, len, "%d asked, AnonHugePages %ld -> %ld kB, enabled: %s",
			 n, before, after, mode);
		return NULL;
	}
	return huge;
}

struct thp_result {
	/* the case: registrations, huge pages, limit, where registration i is */
	int	tasks, huge_pages;
	long	limit_pages;
	size_t	offset, stride;
	int	lazyfree;	/* MADV_FREE the huge pages first */
	/* what happened */
	int	rets[THP_COUNT];
	long	pin_kb;
	long	huge_kb[2];	/* AnonHugePages before and after */
	char	why[128];	/* exit code 1: why there is no huge page */
};

/* The registrations of a case, in a child without CAP_IPC_LOCK. */
static int thp_child(void *arg)
{
	struct thp_result *out = arg;
	struct reg r[THP_COUNT];
	pthread_t t[THP_COUNT];
	char *huge = thp_alloc(out->huge_pages, out->why, sizeof(out->why));
	int i, ret;

	if (!huge)
		return 1;
	if (out->lazyfree && madvise(huge, out->huge_pages * THP_SIZE, MADV_FREE))
		return 6;
	ret = limit_pages(out->limit_pages);
	if (ret)
		return ret;
	out->huge_kb[0] = anon_huge_kb();
	for (i = 0; i < out->tasks; i++) {
		out->rets[i] = register_thread(&r[i], &t[i], huge + out->offset +
					       i * out->stride);
		if (out->rets[i] < 0)
			return 5;
	}
	out->pin_kb = vm_pin_kb();
	out->huge_kb[1] = anon_huge_kb();
	leave_all(r, t, out->tasks);
	return 0;
}

/*
 * Run @child on the case in *@res, with THP allowed while it runs; SKIP
 * where the kernel gives no huge page.
 */
#define THP_RUN(res, child) do {					\
	const char *__mode = thp_allow();				\
	int __st = umcg_fork_wait(child, res);				\
									\
	thp_restore(__mode);						\
	if (__st == 1)							\
		SKIP(return, "no transparent huge page: %s", (res)->why); \
	ASSERT_EQ(0, __st);						\
} while (0)

static struct thp_result *thp_case(int tasks, int huge_pages, long limit,
				   size_t offset, size_t stride)
{
	struct thp_result *res = umcg_test_shared(sizeof(*res));

	if (res) {
		res->tasks = tasks;
		res->huge_pages = huge_pages;
		res->limit_pages = limit;
		res->offset = offset;
		res->stride = stride;
	}
	return res;
}

/*
 * Several registrations in one huge page: the first splits it, so the
 * pins hold one 4 KiB page, not 2 MiB; each is charged that page.
 */
TEST(thp_charged_per_registration)
{
	struct thp_result *res;
	int i;

	UMCG_REQUIRE();
	res = thp_case(THP_TASKS, 1, 16, 0, sizeof(struct umcg_task));
	ASSERT_NE(NULL, res);
	THP_RUN(res, thp_child);
	for (i = 0; i < THP_TASKS; i++) {
		TH_LOG("registration %d in the THP: %s", i + 1,
		       res->rets[i] ? strerror(res->rets[i]) : "ok");
		EXPECT_EQ(0, res->rets[i]);
	}
	TH_LOG("VmPin %ld kB, AnonHugePages %ld -> %ld kB", res->pin_kb,
	       res->huge_kb[0], res->huge_kb[1]);
	EXPECT_EQ(PAGE_KB * THP_TASKS, res->pin_kb);
	/* The huge page is split: nothing holds 2 MiB for 16 KiB charged. */
	EXPECT_EQ(res->huge_kb[0] - (long)(THP_SIZE >> 10), res->huge_kb[1]);
}

/*
 * A limit of N pages and one registration in the middle of each of N + 1
 * huge pages: N succeed, the next gets ENOMEM, VmPin says N pages, and no
 * huge page is left whole under a pin (a pin on a page of a THP would
 * hold all 2 MiB of it).
 */
TEST(thp_one_per_huge_page_under_limit)
{
	struct thp_result *res;
	int i;

	UMCG_REQUIRE();
	res = thp_case(THP_COUNT, THP_COUNT, THP_COUNT - 1, 5 * 4096, THP_SIZE);
	ASSERT_NE(NULL, res);
	THP_RUN(res, thp_child);
	for (i = 0; i < THP_COUNT; i++) {
		TH_LOG("registration in huge page %d: %s", i + 1,
		       res->rets[i] ? strerror(res->rets[i]) : "ok");
		EXPECT_EQ(i < THP_COUNT - 1 ? 0 : ENOMEM, res->rets[i]);
	}
	TH_LOG("VmPin %ld kB, AnonHugePages %ld -> %ld kB", res->pin_kb,
	       res->huge_kb[0], res->huge_kb[1]);
	EXPECT_EQ(PAGE_KB * (THP_COUNT - 1), res->pin_kb);
	EXPECT_GE(res->huge_kb[0] - (THP_COUNT - 1) * (long)(THP_SIZE >> 10),
		  res->huge_kb[1]);
}

/*
 * An anonymous huge page after MADV_FREE is no longer swap-backed (it is
 * lazily freed: reclaim may drop it unless it is written again), but it is
 * still an anonymous folio that a split leaves to this process alone: it
 * is split like any other, not pinned and charged whole.
 */
TEST(thp_lazyfree_split)
{
	struct thp_result *res;

	UMCG_REQUIRE();
	res = thp_case(1, 1, 16, 0, 0);
	ASSERT_NE(NULL, res);
	res->lazyfree = 1;
	THP_RUN(res, thp_child);
	TH_LOG("registration in a MADV_FREE huge page under 16 pages: %s, VmPin %ld kB, AnonHugePages %ld -> %ld kB",
	       res->rets[0] ? strerror(res->rets[0]) : "ok", res->pin_kb,
	       res->huge_kb[0], res->huge_kb[1]);
	EXPECT_EQ(0, res->rets[0]);
	EXPECT_EQ(PAGE_KB, res->pin_kb);
	EXPECT_EQ(res->huge_kb[0] - (long)(THP_SIZE >> 10), res->huge_kb[1]);
}

/*
 * A huge page that another reference holds (vmsplice() into a pipe keeps
 * a reference to the pages it was given) cannot be split: the pin holds it
 * whole, and the registration is charged all of it.
 */
static int thp_held_child(void *arg)
{
	struct thp_result *out = arg;
	char *huge = thp_alloc(1, out->why, sizeof(out->why));
	struct iovec iov;
	struct reg r[2];
	pthread_t t[2];
	int pipefd[2], ret;

	if (!huge)
		return 1;
	if (pipe(pipefd))
		return 2;
	iov.iov_base = huge + THP_SIZE / 2;
	iov.iov_len = 4096;
	if (vmsplice(pipefd[1], &iov, 1, 0) != 4096)
		return 2;
	/* 16 pages: far less than the 512 the huge page would be charged. */
	ret = limit_pages(16);
	if (ret)
		return ret;
	out->rets[0] = register_thread(&r[0], &t[0], huge);
	if (out->rets[0] < 0)
		return 5;
	leave_all(r, t, 1);
	/* Enough for the whole huge page (root keeps CAP_SYS_RESOURCE). */
	ret = limit_pages(2 * (THP_SIZE >> 12));
	if (ret)
		return ret;
	out->rets[1] = register_thread(&r[1], &t[1], huge);
	if (out->rets[1] < 0)
		return 5;
	out->pin_kb = vm_pin_kb();
	out->huge_kb[1] = anon_huge_kb();
	leave_all(r + 1, t + 1, 1);
	close(pipefd[0]);
	close(pipefd[1]);
	return 0;
}

TEST(thp_held_elsewhere_charged_whole)
{
	struct thp_result *res;

	UMCG_REQUIRE();
	res = thp_case(1, 1, 16, 0, 0);
	ASSERT_NE(NULL, res);
	THP_RUN(res, thp_held_child);
	TH_LOG("under 16 pages: %s; under 1024 pages: %s, VmPin %ld kB, AnonHugePages %ld kB",
	       res->rets[0] ? strerror(res->rets[0]) : "ok",
	       res->rets[1] ? strerror(res->rets[1]) : "ok",
	       res->pin_kb, res->huge_kb[1]);
	EXPECT_EQ(ENOMEM, res->rets[0]);
	ASSERT_EQ(0, res->rets[1]);
	EXPECT_EQ((long)(THP_SIZE >> 10), res->pin_kb);
	/* Still whole: the charge matches a pin that holds 2 MiB. */
	EXPECT_LE((long)(THP_SIZE >> 10), res->huge_kb[1]);
}

TEST_HARNESS_MAIN
