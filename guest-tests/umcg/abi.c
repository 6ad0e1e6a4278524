// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/abi: the parts of the ABI that let it grow and keep programs safe
 * (issue 9, ABI and documentation):
 *  - the system call numbers are clear of mainline's (463/464, which
 *    earlier versions used, are setxattrat()/getxattrat() from Linux
 *    6.13 on) and just past x32's range, so that the tables they size
 *    stay small, and libumcg uses them only after a probe showed they
 *    are UMCG;
 *  - the UAPI header exports the alignment and the userspace bits of the
 *    state word;
 *  - the reserved bytes of struct umcg_task must be zero at registration;
 *  - umcg_wait() leaves UMCG_TF_LOCKED alone: it is the mark of the server
 *    that claimed the worker, as the documentation says.
 */
/*
 * A kernel tree without the series (KERNEL_TREE) has no such header: the
 * program still builds, and UMCG_REQUIRE() skips it as in `off`.
 */
#if __has_include(<linux/umcg.h>)
#include <linux/umcg.h>
#endif

/* What the kernel's UAPI header itself says, before libumcg's fallbacks. */
#ifdef UMCG_TASK_ALIGN
#define UAPI_TASK_ALIGN		UMCG_TASK_ALIGN
#else
#define UAPI_TASK_ALIGN		0
#endif
#ifdef UMCG_TASK_USER_MASK
#define UAPI_USER_MASK		UMCG_TASK_USER_MASK
#else
#define UAPI_USER_MASK		0
#endif

#include <stdalign.h>

#include "umcg_test.h"

TEST(probe_tells_umcg_from_other_syscalls)
{
	static const struct { long ctl, wait; const char *what; } other[] = {
		{ 462, 462, "mseal" },
		{ 188, 191, "setxattr/getxattr" },
		{ 4, 5, "stat/fstat" },
		{ 39, 39, "getpid" },
	};
	unsigned int i;

	UMCG_REQUIRE();
	EXPECT_EQ(UMCG_ABI_OK, umcg_abi_probe_nr(__NR_umcg_ctl, __NR_umcg_wait));
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		const char *what = other[i].what;

		EXPECT_EQ(UMCG_ABI_FOREIGN,
			  umcg_abi_probe_nr(other[i].ctl, other[i].wait))
			TH_LOG("the probe took %s for UMCG", what ? what : "?");
	}
	/* A number no kernel has: like a kernel without UMCG. */
	EXPECT_EQ(UMCG_ABI_NONE, umcg_abi_probe_nr(100000, 100001));
}

/*
 * Mainline's x86_64 table grows by a handful of numbers a year (463-466
 * went to the *xattrat() calls in 6.13, 469-471 came in 2025).  Its
 * highest number, as last read, is in the suite's data file, with where
 * and when it was read; UMCG's numbers must stay a little clear of it, so
 * that this test fails (and the numbers move) before mainline reaches
 * them.  They come right after x32's range (512-547): every number up to
 * the highest one sizes the system call, tracing and seccomp tables
 * (NR_syscalls), so a number far above it (1000, until round 4) doubled
 * them.
 */
#define MAINLINE_SYSCALLS	"bin/mainline-syscalls"
#define MAINLINE_MARGIN		16
#define X32_LAST		547

/* The "x86_64_last = N" line of MAINLINE_SYSCALLS, or -1. */
static long mainline_x86_64_last(void)
{
	char line[512];
	long last = -1;
	FILE *f;

	f = fopen(MAINLINE_SYSCALLS, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "x86_64_last = %ld", &last) == 1)
			break;
	fclose(f);
	return last;
}

TEST(numbers_clear_of_mainline)
{
	long last;

	UMCG_REQUIRE();
	last = mainline_x86_64_last();
	ASSERT_LT(0, last)
		TH_LOG("no x86_64_last in %s", MAINLINE_SYSCALLS);
	ksft_print_msg("umcg_ctl=%d umcg_wait=%d mainline_last=%ld\n",
		       __NR_umcg_ctl, __NR_umcg_wait, last);
	EXPECT_LT(last + MAINLINE_MARGIN, __NR_umcg_ctl);
	EXPECT_EQ(__NR_umcg_ctl + 1, __NR_umcg_wait);
}

/*
 * The numbers follow x32's range at once, and nothing in the table is
 * above them: the old numbers are no system call at all.
 */
TEST(numbers_just_past_x32)
{
	UMCG_REQUIRE();
	EXPECT_EQ(X32_LAST + 1, __NR_umcg_ctl);
	EXPECT_EQ(X32_LAST + 2, __NR_umcg_wait);
	EXPECT_EQ(UMCG_ABI_OK, umcg_abi_probe_nr(X32_LAST + 1, X32_LAST + 2));
	EXPECT_EQ(UMCG_ABI_NONE, umcg_abi_probe_nr(1000, 1001))
		TH_LOG("1000/1001 still answer: the table reaches them");
}

TEST(uapi_exports_alignment_and_user_bits)
{
	UMCG_REQUIRE();
	EXPECT_EQ(64, UAPI_TASK_ALIGN)
		TH_LOG("<linux/umcg.h> does not define UMCG_TASK_ALIGN");
	EXPECT_EQ(0xff000000U, UAPI_USER_MASK)
		TH_LOG("<linux/umcg.h> does not define UMCG_TASK_USER_MASK");
	EXPECT_EQ(64, sizeof(struct umcg_task));
	EXPECT_EQ(UMCG_TASK_ALIGN, alignof(struct umcg_task));
	/* The masks of the state word cover it exactly once. */
	EXPECT_EQ(0xffffffffU, UMCG_TASK_STATE_MASK | UMCG_TASK_FLAGS_MASK |
			       UMCG_TASK_RESERVED_MASK | UMCG_TASK_USER_MASK);
	EXPECT_EQ(0, UMCG_TASK_USER_MASK & (UMCG_TASK_STATE_MASK |
			UMCG_TASK_FLAGS_MASK | UMCG_TASK_RESERVED_MASK));
}

TEST(reserved_bytes_must_be_zero)
{
	struct umcg_task *t;
	uint64_t *words;
	int i;

	UMCG_REQUIRE();
	t = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, t);
	words = (uint64_t *)t;
	/* Bytes 24-63 follow the four fields. */
	for (i = 3; i < 8; i++) {
		memset(t, 0, sizeof(*t));
		t->state = UMCG_TASK_RUNNING;
		words[i] = 1ULL << (i * 7);
		errno = 0;
		EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, t))
			TH_LOG("reserved word %d (bytes %d-%d) was not checked",
			       i - 3, i * 8, i * 8 + 7);
		EXPECT_EQ(EINVAL, errno);
		if (errno == 0)
			umcg_ctl(UMCG_CTL_UNREGISTER, NULL);
	}
	/* Userspace bits of the state are fine, the reserved ones are not. */
	memset(t, 0, sizeof(*t));
	t->state = UMCG_TASK_RUNNING | UMCG_TASK_USER_MASK;
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
	t->state = UMCG_TASK_RUNNING | (1U << 20);
	EXPECT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, t));
	EXPECT_EQ(EINVAL, errno);
}

static struct {
	struct umcg_group	g;
	struct umcg_worker	w;
	int			ret;
	int			done;
} *rc;

static void *bad_worker(void *arg)
{
	(void)arg;
	memset(&rc->w, 0, sizeof(rc->w));
	rc->w.task.state = UMCG_TASK_IDLE;
	rc->w.task.idle_workers_ptr = (uint64_t)(uintptr_t)&rc->g.idle_workers;
	((uint64_t *)&rc->w.task)[7] = 1;	/* the last reserved word */
	rc->ret = umcg_ctl(UMCG_CTL_REGISTER | UMCG_CTL_WORKER, &rc->w.task) ?
		  errno : 0;
	__atomic_store_n(&rc->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(reserved_bytes_must_be_zero_worker)
{
	struct umcg_server s;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	rc = umcg_test_zalloc(sizeof(*rc));
	ASSERT_NE(NULL, rc);
	umcg_group_init(&rc->g);
	ASSERT_EQ(0, umcg_server_register(&s, &rc->g));
	ASSERT_EQ(0, pthread_create(&t, NULL, bad_worker, NULL));
	/* A registered worker would wait for a server: give it 2 s. */
	for (i = 0; i < 2000 && !__atomic_load_n(&rc->done, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	ASSERT_EQ(1, rc->done) TH_LOG("the worker registered despite a reserved word");
	pthread_join(t, NULL);
	EXPECT_EQ(EINVAL, rc->ret);
	EXPECT_EQ(0, rc->g.idle_workers);	/* not queued */
	EXPECT_EQ(0, umcg_unregister());
}

static struct {
	struct umcg_group	g;
	struct umcg_server	s;
	struct umcg_worker	w;
	long			wait_ret;
	uint32_t		state_after;
} *lc;

static void *claimed_worker(void *arg)
{
	(void)arg;
	if (umcg_worker_register(&lc->w, &lc->g, NULL))
		return (void *)1;
	/*
	 * Yield, and suppose a server claimed this worker (IDLE -> IDLE |
	 * LOCKED) right after it became IDLE, before umcg_wait().
	 */
	__atomic_store_n(&lc->w.task.state, UMCG_TASK_IDLE | UMCG_TF_LOCKED,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&lc->s.task.state, UMCG_TASK_RUNNING, __ATOMIC_SEQ_CST);
	lc->wait_ret = umcg_wait(0, umcg_deadline(300000000ULL)) ? errno : 0;
	lc->state_after = umcg_task_state(&lc->w.task);
	umcg_worker_unregister(&lc->w, &lc->g);
	return NULL;
}

TEST(wait_keeps_the_locked_claim)
{
	struct umcg_worker *w;
	pthread_t t;
	int i;

	UMCG_REQUIRE();
	UMCG_TEST_SERVER(lc);
	ASSERT_EQ(0, pthread_create(&t, NULL, claimed_worker, NULL));
	for (i = 0; i < 20000 && !(w = umcg_take_idle(&lc->g)); i++)
		usleep(1000);
	ASSERT_EQ(&lc->w, w);
	/* Run it: it "yields" (waking this server) and times out. */
	ASSERT_EQ(0, umcg_run_worker(&lc->s, w, umcg_deadline(10000000000ULL)));
	pthread_join(t, NULL);
	EXPECT_EQ(ETIMEDOUT, lc->wait_ret);
	EXPECT_EQ(UMCG_TASK_IDLE | UMCG_TF_LOCKED, lc->state_after)
		TH_LOG("umcg_wait() dropped the claim of the server (LOCKED)");
	EXPECT_EQ(0, umcg_unregister());
}

TEST_HARNESS_MAIN
