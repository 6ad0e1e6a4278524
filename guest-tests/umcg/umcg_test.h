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

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kconfig.h"
#include "libumcg.h"

/*
 * 1 if the running kernel implements UMCG, 0 if the system calls return
 * ENOSYS.  A probe that can have no side effect: unregistering an
 * unregistered task is EINVAL with UMCG and ENOSYS without.
 */
static inline int umcg_supported(void)
{
	if (umcg_ctl(UMCG_CTL_UNREGISTER, NULL) == 0)
		return 1;
	return errno == EINVAL;
}

/*
 * Start of every test: on a kernel without CONFIG_UMCG check that both
 * calls return ENOSYS, then SKIP with the reason.
 */
#define UMCG_REQUIRE() do {						\
	int __cfg = kconfig_enabled("CONFIG_UMCG");			\
	if (!umcg_supported()) {					\
		ASSERT_EQ(-1, umcg_ctl(UMCG_CTL_REGISTER, NULL));	\
		ASSERT_EQ(ENOSYS, errno);				\
		ASSERT_EQ(-1, umcg_wait(0, 0));				\
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

#endif
