// SPDX-License-Identifier: GPL-2.0
/* Panic the guest through sysrq: the harness must classify it as a crash. */
#include <fcntl.h>
#include <unistd.h>

#include "kselftest_harness.h"

TEST(sysrq_crash)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, write(fd, "c", 1));
	/* Not reached: the kernel panics inside write(). */
	sleep(5);
	TH_LOG("the kernel did not crash");
	EXPECT_TRUE(0);
}

TEST_HARNESS_MAIN
