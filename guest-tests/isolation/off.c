// SPDX-License-Identifier: GPL-2.0
/*
 * Item 7: a kernel built without CONFIG_TASK_ISOLATION answers every
 * PR_ISOL_* command with EOPNOTSUPP, whatever the arguments, and has no
 * /sys/kernel/task_isolation.
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <sys/stat.h>

static const long cmds[] = {
	PR_ISOL_FEAT, PR_ISOL_GET, PR_ISOL_SET, PR_ISOL_CTRL_GET,
	PR_ISOL_CTRL_SET,
};

static const unsigned long args[][4] = {
	{ 0, 0, 0, 0 },
	{ PR_ISOL_F_QUIESCE, 0, 0, 0 },
	{ PR_ISOL_F_QUIESCE, PR_ISOL_F_QUIESCE_VMSTATS, 0, 0 },
	{ PR_ISOL_F_QUIESCE, PR_ISOL_QUIESCE_GET_DEFAULT, 0, 0 },
	{ 2, 0, 0, 0 },
	{ ~0UL, ~0UL, ~0UL, ~0UL },
};

TEST(off_every_command_eopnotsupp)
{
	unsigned int i, j;
	int bad = 0;

	if (isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION=y in this kernel (off-variant test)");

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		for (j = 0; j < ARRAY_SIZE(args); j++) {
			long r = isol_prctl(cmds[i], args[j][0], args[j][1],
					    args[j][2], args[j][3]);

			if (r != -EOPNOTSUPP) {
				TH_LOG("prctl(%#lx, %#lx, %#lx) = %ld, expected -EOPNOTSUPP",
				       cmds[i], args[j][0], args[j][1], r);
				bad++;
			}
		}
	}
	ksft_print_msg("metric: off_calls_not_eopnotsupp=%d\n", bad);
	EXPECT_EQ(0, bad);
}

TEST(off_sysfs_absent)
{
	struct stat st;

	if (isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION=y in this kernel (off-variant test)");

	ASSERT_EQ(0, stat("/sys/kernel", &st));
	EXPECT_EQ(-1, stat(ISOL_SYSFS, &st));
	EXPECT_EQ(ENOENT, errno);
}

TEST_HARNESS_MAIN
