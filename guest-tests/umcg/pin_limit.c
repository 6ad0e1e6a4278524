// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/pin_limit: the page a registered task pins for as long as it is
 * registered is charged to the process (VmPin) and limited by
 * RLIMIT_MEMLOCK unless the task has CAP_IPC_LOCK; past the limit
 * registration fails with ENOMEM (issue 9, item 4).  Registering and
 * leaving many times leaves nothing pinned and no memory behind.
 */
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
	if (!f || fputs("1", f) < 0 || fclose(f))
		return -1;
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
	struct rlimit rl = { LIMIT_PAGES * 4096, LIMIT_PAGES * 4096 };
	struct reg r[LIMIT_PAGES + 1];
	pthread_t t[LIMIT_PAGES + 1];
	int i;

	if (drop_cap_ipc_lock())
		return 2;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 3;
	out->pin_kb[0] = vm_pin_kb();
	for (i = 0; i <= LIMIT_PAGES; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].task = umcg_test_zalloc(4096);	/* a page each */
		if (!r[i].task || pthread_create(&t[i], NULL, registrar, &r[i]))
			return 4;
		while (!__atomic_load_n(&r[i].registered, __ATOMIC_SEQ_CST))
			usleep(1000);
		out->rets[i] = r[i].ret;
		out->pin_kb[i + 1] = vm_pin_kb();
	}
	for (i = 0; i <= LIMIT_PAGES; i++) {
		__atomic_store_n(&r[i].leave, 1, __ATOMIC_SEQ_CST);
		pthread_join(t[i], NULL);
	}
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
	struct reg r = { 0 };
	pthread_t t;

	UMCG_REQUIRE();
	/* This test runs as root: CAP_IPC_LOCK. */
	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &old));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	r.task = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, r.task);
	ASSERT_EQ(0, pthread_create(&t, NULL, registrar, &r));
	while (!__atomic_load_n(&r.registered, __ATOMIC_SEQ_CST))
		usleep(1000);
	EXPECT_EQ(0, r.ret);
	EXPECT_EQ(4, vm_pin_kb());
	__atomic_store_n(&r.leave, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
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

struct thp_result {
	int	rets[THP_TASKS];
	long	pin_kb;
};

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

static int thp_child(void *arg)
{
	struct thp_result *out = arg;
	struct rlimit rl = { 16 * 4096, 16 * 4096 };
	struct reg r[THP_TASKS];
	pthread_t t[THP_TASKS];
	char *map, *huge;
	int i;

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK))
		return 1;
	map = mmap(NULL, 2 * THP_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return 2;
	huge = (char *)(((uintptr_t)map + THP_SIZE - 1) & ~(THP_SIZE - 1));
	if (madvise(huge, THP_SIZE, MADV_HUGEPAGE))
		return 1;
	memset(huge, 0, THP_SIZE);
	if (anon_huge_kb() < 2048)
		return 1;
	if (drop_cap_ipc_lock())
		return 3;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 4;
	for (i = 0; i < THP_TASKS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].task = (struct umcg_task *)huge + i;
		if (pthread_create(&t[i], NULL, registrar, &r[i]))
			return 5;
		while (!__atomic_load_n(&r[i].registered, __ATOMIC_SEQ_CST))
			usleep(1000);
		out->rets[i] = r[i].ret;
	}
	out->pin_kb = vm_pin_kb();
	for (i = 0; i < THP_TASKS; i++) {
		__atomic_store_n(&r[i].leave, 1, __ATOMIC_SEQ_CST);
		pthread_join(t[i], NULL);
	}
	return 0;
}

TEST(thp_charged_per_registration)
{
	struct thp_result *res;
	int st, i;

	UMCG_REQUIRE();
	res = umcg_test_shared(sizeof(*res));
	ASSERT_NE(NULL, res);
	st = umcg_fork_wait(thp_child, res);
	if (st == 1)
		SKIP(return, "no transparent huge page (CONFIG_TRANSPARENT_HUGEPAGE not set, or none allocated)");
	ASSERT_EQ(0, st);
	for (i = 0; i < THP_TASKS; i++) {
		TH_LOG("registration %d in the THP: %s", i + 1,
		       res->rets[i] ? strerror(res->rets[i]) : "ok");
		EXPECT_EQ(0, res->rets[i]);
	}
	TH_LOG("VmPin %ld kB", res->pin_kb);
	EXPECT_EQ(4L * THP_TASKS, res->pin_kb);
}

TEST_HARNESS_MAIN
