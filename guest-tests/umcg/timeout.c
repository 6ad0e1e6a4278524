// SPDX-License-Identifier: GPL-2.0
/*
 * umcg/timeout: absolute CLOCK_REALTIME deadlines of umcg_wait(): one in
 * the future times out near it, one in the past at once (item 6).
 */
#include "umcg_test.h"

TEST(deadline_future_and_past)
{
	struct umcg_task *t;
	uint64_t t0, el;
	int i;

	UMCG_REQUIRE();
	t = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, t);
	t->state = UMCG_TASK_RUNNING;
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, t));

	for (i = 0; i < 3; i++) {
		uint64_t ns = 100000000ULL * (i + 1);	/* 100..300 ms */

		t->state = UMCG_TASK_IDLE;
		t0 = umcg_now_ns(CLOCK_MONOTONIC);
		EXPECT_EQ(-1, umcg_wait(0, umcg_deadline(ns)));
		EXPECT_EQ(ETIMEDOUT, errno);
		el = umcg_now_ns(CLOCK_MONOTONIC) - t0;
		TH_LOG("deadline +%llu ms: returned after %llu us",
		       (unsigned long long)ns / 1000000,
		       (unsigned long long)el / 1000);
		EXPECT_GE(el, ns - 1000000);	/* not early (1 ms clock skew) */
		EXPECT_LT(el, ns + 1000000000ULL);	/* near it, even on TCG */
		/* the state is untouched by a timeout */
		EXPECT_EQ(UMCG_TASK_IDLE, umcg_task_state(t));
	}

	/* deadlines in the past: at once */
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	EXPECT_EQ(-1, umcg_wait(0, umcg_now_ns(CLOCK_REALTIME) - 1000000000ULL));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_EQ(-1, umcg_wait(0, 1));
	EXPECT_EQ(ETIMEDOUT, errno);
	el = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	TH_LOG("two past deadlines returned after %llu us",
	       (unsigned long long)el / 1000);
	EXPECT_LT(el, 200000000ULL);
	ksft_print_msg("metric: umcg_past_deadline_us=%llu\n",
		       (unsigned long long)el / 1000);

	t->state = UMCG_TASK_RUNNING;
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
}

TEST(deadline_vs_wake)
{
	struct umcg_task *t;
	uint64_t t0, el;

	UMCG_REQUIRE();
	t = umcg_test_zalloc(4096);
	ASSERT_NE(NULL, t);
	t->state = UMCG_TASK_RUNNING;
	ASSERT_EQ(0, umcg_ctl(UMCG_CTL_REGISTER, t));
	/* already RUNNING: a far deadline does not delay the return */
	t0 = umcg_now_ns(CLOCK_MONOTONIC);
	EXPECT_EQ(0, umcg_wait(0, umcg_deadline(10000000000ULL)));
	el = umcg_now_ns(CLOCK_MONOTONIC) - t0;
	EXPECT_LT(el, 1000000000ULL);
	EXPECT_EQ(0, umcg_ctl(UMCG_CTL_UNREGISTER, NULL));
}

TEST_HARNESS_MAIN
