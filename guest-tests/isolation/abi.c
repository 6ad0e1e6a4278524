// SPDX-License-Identifier: GPL-2.0
/*
 * Every PR_ISOL_* command with valid and invalid arguments returns the
 * documented value or errno, in the order a fresh task sees them.
 * Deactivation is idempotent (also without state); an active task always
 * has a non-empty quiesce mask.  Activation needs CAP_SYS_NICE: a task
 * without it (an unprivileged user, or root that dropped it) gets EPERM.
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#define Q	PR_ISOL_F_QUIESCE
#define VM	PR_ISOL_F_QUIESCE_VMSTATS
#define DEF	PR_ISOL_QUIESCE_GET_DEFAULT

struct row {
	const char *what;
	long opt;
	unsigned long a2, a3, a4, a5;
	long expect;		/* return value, or -errno */
};

static const struct row table[] = {
	/* queries */
	{ "FEAT features", PR_ISOL_FEAT, 0, 0, 0, 0, Q },
	{ "FEAT quiesce actions", PR_ISOL_FEAT, Q, 0, 0, 0, VM },
	{ "FEAT unknown feature", PR_ISOL_FEAT, 2, 0, 0, 0, -EINVAL },
	{ "FEAT unknown feature bits", PR_ISOL_FEAT, ~0UL, 0, 0, 0, -EINVAL },
	{ "FEAT 0 with arg3", PR_ISOL_FEAT, 0, 1, 0, 0, -EINVAL },
	{ "FEAT quiesce unknown arg3", PR_ISOL_FEAT, Q, 2, 0, 0, -EINVAL },
	/* the default-mask query is not the value of an action bit */
	{ "FEAT quiesce arg3 = VMSTATS bit", PR_ISOL_FEAT, Q, VM, 0, 0, -EINVAL },
	{ "FEAT quiesce default mask", PR_ISOL_FEAT, Q, DEF, 0, 0, VM },
	{ "SET default-mask selector as mask", PR_ISOL_SET, Q, DEF, 0, 0, -EINVAL },
	{ "FEAT arg4 set", PR_ISOL_FEAT, 0, 0, 1, 0, -EINVAL },
	{ "FEAT arg5 set", PR_ISOL_FEAT, 0, 0, 0, 1, -EINVAL },
	/* no state yet */
	{ "GET without state", PR_ISOL_GET, Q, 0, 0, 0, 0 },
	{ "GET feature 0", PR_ISOL_GET, 0, 0, 0, 0, -EINVAL },
	{ "GET unknown feature", PR_ISOL_GET, 2, 0, 0, 0, -EINVAL },
	{ "GET arg3 set", PR_ISOL_GET, Q, 1, 0, 0, -EINVAL },
	{ "CTRL_GET without state", PR_ISOL_CTRL_GET, 0, 0, 0, 0, 0 },
	{ "CTRL_GET arg2 set", PR_ISOL_CTRL_GET, Q, 0, 0, 0, -EINVAL },
	{ "CTRL_SET activate before SET", PR_ISOL_CTRL_SET, Q, 0, 0, 0, -EINVAL },
	/* deactivation is idempotent, with or without state */
	{ "CTRL_SET deactivate before SET", PR_ISOL_CTRL_SET, 0, 0, 0, 0, 0 },
	{ "CTRL_GET after deactivate without state", PR_ISOL_CTRL_GET, 0, 0, 0, 0, 0 },
	/* invalid SETs must not create state */
	{ "SET unknown quiesce bit", PR_ISOL_SET, Q, 2, 0, 0, -EINVAL },
	{ "SET all quiesce bits", PR_ISOL_SET, Q, ~0UL, 0, 0, -EINVAL },
	{ "SET feature 0", PR_ISOL_SET, 0, VM, 0, 0, -EINVAL },
	{ "SET unknown feature", PR_ISOL_SET, 2, VM, 0, 0, -EINVAL },
	{ "SET arg4 set", PR_ISOL_SET, Q, VM, 1, 0, -EINVAL },
	{ "SET arg5 set", PR_ISOL_SET, Q, VM, 0, 1, -EINVAL },
	{ "GET after invalid SETs", PR_ISOL_GET, Q, 0, 0, 0, 0 },
	{ "CTRL_SET after invalid SETs", PR_ISOL_CTRL_SET, Q, 0, 0, 0, -EINVAL },
	/* an empty mask is state, but there is nothing to activate */
	{ "SET empty mask", PR_ISOL_SET, Q, 0, 0, 0, 0 },
	{ "CTRL_SET activate with empty mask", PR_ISOL_CTRL_SET, Q, 0, 0, 0, -EINVAL },
	{ "CTRL_GET after activating empty mask", PR_ISOL_CTRL_GET, 0, 0, 0, 0, 0 },
	/* valid sequence */
	{ "SET vmstat", PR_ISOL_SET, Q, VM, 0, 0, 0 },
	{ "GET vmstat", PR_ISOL_GET, Q, 0, 0, 0, VM },
	{ "CTRL_GET before activation", PR_ISOL_CTRL_GET, 0, 0, 0, 0, 0 },
	{ "CTRL_SET unknown feature", PR_ISOL_CTRL_SET, 2, 0, 0, 0, -EINVAL },
	{ "CTRL_SET arg3 set", PR_ISOL_CTRL_SET, Q, 1, 0, 0, -EINVAL },
	{ "CTRL_SET activate", PR_ISOL_CTRL_SET, Q, 0, 0, 0, 0 },
	{ "CTRL_GET active", PR_ISOL_CTRL_GET, 0, 0, 0, 0, Q },
	{ "CTRL_SET activate again", PR_ISOL_CTRL_SET, Q, 0, 0, 0, 0 },
	{ "SET again, unknown bit", PR_ISOL_SET, Q, 2, 0, 0, -EINVAL },
	{ "GET unchanged by invalid SET", PR_ISOL_GET, Q, 0, 0, 0, VM },
	/* active quiescing always has something to do */
	{ "SET empty mask while active", PR_ISOL_SET, Q, 0, 0, 0, -EINVAL },
	{ "GET unchanged by empty SET", PR_ISOL_GET, Q, 0, 0, 0, VM },
	{ "CTRL_GET still active", PR_ISOL_CTRL_GET, 0, 0, 0, 0, Q },
	{ "SET vmstat again", PR_ISOL_SET, Q, VM, 0, 0, 0 },
	{ "CTRL_SET deactivate", PR_ISOL_CTRL_SET, 0, 0, 0, 0, 0 },
	{ "CTRL_GET inactive", PR_ISOL_CTRL_GET, 0, 0, 0, 0, 0 },
	{ "CTRL_SET deactivate twice", PR_ISOL_CTRL_SET, 0, 0, 0, 0, 0 },
	{ "GET keeps mask", PR_ISOL_GET, Q, 0, 0, 0, VM },
	{ "SET empty mask while inactive", PR_ISOL_SET, Q, 0, 0, 0, 0 },
	{ "GET empty mask", PR_ISOL_GET, Q, 0, 0, 0, 0 },
	/* neighbours of the ASCII-magic values are not commands */
	{ "unknown 'ISO\\0'", 0x49534f00, 0, 0, 0, 0, -EINVAL },
	{ "unknown 'ISOX'", 0x49534f58, Q, 0, 0, 0, -EINVAL },
	{ "unknown 'ISCX'", 0x49534358, Q, 0, 0, 0, -EINVAL },
};

TEST(abi_table)
{
	unsigned int i;
	int bad = 0;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	for (i = 0; i < ARRAY_SIZE(table); i++) {
		const struct row *r = &table[i];
		long got = isol_prctl(r->opt, r->a2, r->a3, r->a4, r->a5);

		if (got != r->expect) {
			TH_LOG("row %u '%s': got %ld (%s), expected %ld (%s)",
			       i, r->what, got, got < 0 ? strerror(-got) : "value",
			       r->expect, r->expect < 0 ? strerror(-r->expect) : "value");
			bad++;
		}
	}
	ksft_print_msg("metric: abi_rows=%zu\n", ARRAY_SIZE(table));
	ksft_print_msg("metric: abi_rows_failed=%d\n", bad);
	ASSERT_EQ(0, bad);
}

TEST(abi_defmask_query)
{
	long def;

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	def = isol_prctl(PR_ISOL_FEAT, Q, DEF, 0, 0);
	ASSERT_LE(0, def);
	/* the default mask only ever holds supported actions */
	ASSERT_EQ(0, def & ~isol_prctl(PR_ISOL_FEAT, Q, 0, 0, 0));
	/* and a task can SET it as it is */
	ASSERT_EQ(0, isol_prctl(PR_ISOL_SET, Q, def, 0, 0));
	ASSERT_EQ(def, isol_prctl(PR_ISOL_GET, Q, 0, 0, 0));
}

/*
 * What a task without CAP_SYS_NICE may do: configure (PR_ISOL_SET, the
 * queries) and deactivate, but not activate, which has effects beyond the
 * task (vmstat_shepherd looks at the CPUs' running tasks, vmstat_update is
 * cancelled for everybody on the task's CPU).  Returns 0, or the number of
 * the check that failed.
 */
static int check_unprivileged(void)
{
	if (isol_prctl(PR_ISOL_SET, PR_ISOL_F_QUIESCE, VM, 0, 0) != 0)
		return 10;
	if (isol_prctl(PR_ISOL_CTRL_SET, PR_ISOL_F_QUIESCE, 0, 0, 0) != -EPERM)
		return 11;
	if (isol_prctl(PR_ISOL_CTRL_GET, 0, 0, 0, 0) != 0)
		return 12;
	if (isol_prctl(PR_ISOL_CTRL_SET, 0, 0, 0, 0) != 0)
		return 13;
	if (isol_prctl(PR_ISOL_GET, PR_ISOL_F_QUIESCE, 0, 0, 0) != ISOL_VM)
		return 14;
	return 0;
}

/* Drop every capability by becoming nobody (no SECBIT_KEEP_CAPS). */
static int drop_to_nobody(void)
{
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 1;
	return 0;
}

/* Stay root, drop only CAP_SYS_NICE from the effective set. */
static int drop_cap_sys_nice(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 1;
	data[CAP_TO_INDEX(CAP_SYS_NICE)].effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
	if (syscall(SYS_capset, &hdr, data))
		return 2;
	return 0;
}

/* Run check_unprivileged() in a child after @drop; its status or -1. */
static int run_unprivileged(int (*drop)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (drop())
			_exit(20);
		_exit(check_unprivileged());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(abi_activate_needs_cap_sys_nice)
{
	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");
	if (getuid() != 0)
		SKIP(return, "runs as root to drop the capability");

	EXPECT_EQ(0, run_unprivileged(drop_to_nobody)) {
		TH_LOG("as nobody: check failed (10 SET, 11 activation not EPERM, 12 active, 13 deactivate, 14 GET, 20 setresuid)");
	}
	EXPECT_EQ(0, run_unprivileged(drop_cap_sys_nice)) {
		TH_LOG("root without CAP_SYS_NICE: check failed (11: activation not EPERM, 20: capset)");
	}
	/* root with the capability still may */
	ASSERT_EQ(0, isol_quiesce_on(PR_ISOL_F_QUIESCE_VMSTATS));
	EXPECT_EQ(ISOL_Q, isol_prctl(PR_ISOL_CTRL_GET, 0, 0, 0, 0));
	EXPECT_EQ(0, isol_prctl(PR_ISOL_CTRL_SET, 0, 0, 0, 0));
}

TEST_HARNESS_MAIN
