// SPDX-License-Identifier: GPL-2.0
/* Never return: the harness must report a timeout and stop QEMU. */
#include <unistd.h>

#include "kselftest_harness.h"

TEST(hang_forever)
{
	for (;;)
		pause();
}

TEST_HARNESS_MAIN
