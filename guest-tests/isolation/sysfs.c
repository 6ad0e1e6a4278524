// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/task_isolation/.  available_quiesce lists "vmstat";
 * default_quiesce starts as the first version's action set (vmstat),
 * round-trips, an empty write clears it, an unknown name is
 * EINVAL, a non-root write is EACCES; PR_ISOL_FEAT(PR_ISOL_F_QUIESCE,
 * PR_ISOL_QUIESCE_GET_DEFAULT) follows it.
 */
#include "isol_common.h"
#include "kselftest_harness.h"

#include <sys/wait.h>

#define AVAIL	ISOL_SYSFS "/available_quiesce"
#define DEFQ	ISOL_SYSFS "/default_quiesce"

static long defmask(void)
{
	return isol_prctl(PR_ISOL_FEAT, PR_ISOL_F_QUIESCE, PR_ISOL_QUIESCE_GET_DEFAULT, 0, 0);
}

FIXTURE(defq) {
	char saved[256];
	bool have_saved;
};

FIXTURE_SETUP(defq)
{
	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");
	ASSERT_LT(0, read_file(DEFQ, self->saved, sizeof(self->saved)));
	self->have_saved = true;
}

FIXTURE_TEARDOWN(defq)
{
	if (self->have_saved)
		write_file(DEFQ, self->saved);
}

/*
 * First in this file, before the fixtures below write default_quiesce:
 * the boot value is the set of actions of the first version of the
 * interface, not "everything supported", so that actions added by a newer
 * kernel are not switched on for applications using PR_ISOL_QUIESCE_GET_DEFAULT.
 */
TEST(default_quiesce_boot_value)
{
	char buf[256];

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	ASSERT_LT(0, read_file(DEFQ, buf, sizeof(buf)));
	EXPECT_STREQ("vmstat\n", buf);
	EXPECT_EQ(ISOL_VM, defmask());
}

TEST(available_quiesce_lists_vmstat)
{
	char buf[256];

	if (!isol_built_in())
		SKIP(return, "CONFIG_TASK_ISOLATION is not set in this kernel");

	ASSERT_LT(0, read_file(AVAIL, buf, sizeof(buf)));
	EXPECT_STREQ("vmstat\n", buf);
	/* read-only, even for root */
	EXPECT_EQ(-EACCES, write_file(AVAIL, "vmstat"));
}

TEST_F(defq, round_trip)
{
	char buf[256];

	ASSERT_EQ(0, write_file(DEFQ, "vmstat"));
	ASSERT_LT(0, read_file(DEFQ, buf, sizeof(buf)));
	EXPECT_STREQ("vmstat\n", buf);
	EXPECT_EQ(ISOL_VM, defmask());

	/* a trailing newline (echo) and repeated names are accepted */
	ASSERT_EQ(0, write_file(DEFQ, "vmstat,vmstat\n"));
	ASSERT_LT(0, read_file(DEFQ, buf, sizeof(buf)));
	EXPECT_STREQ("vmstat\n", buf);
	EXPECT_EQ(ISOL_VM, defmask());
}

TEST_F(defq, empty_write_clears)
{
	char buf[256];

	ASSERT_EQ(0, write_file(DEFQ, "vmstat"));
	ASSERT_EQ(0, write_file(DEFQ, "\n"));
	ASSERT_LT(0, read_file(DEFQ, buf, sizeof(buf)));
	EXPECT_STREQ("\n", buf);
	EXPECT_EQ(0, defmask());

	ASSERT_EQ(0, write_file(DEFQ, "vmstat\n"));
	EXPECT_EQ(ISOL_VM, defmask());
}

TEST_F(defq, bad_name_is_einval)
{
	char buf[256];

	ASSERT_EQ(0, write_file(DEFQ, "vmstat"));
	EXPECT_EQ(-EINVAL, write_file(DEFQ, "bogus"));
	EXPECT_EQ(-EINVAL, write_file(DEFQ, "vmstat,bogus"));
	EXPECT_EQ(-EINVAL, write_file(DEFQ, ",vmstat"));
	EXPECT_EQ(-EINVAL, write_file(DEFQ, "VMSTAT"));
	/* failed writes leave the mask alone */
	ASSERT_LT(0, read_file(DEFQ, buf, sizeof(buf)));
	EXPECT_STREQ("vmstat\n", buf);
	EXPECT_EQ(ISOL_VM, defmask());

	ASSERT_EQ(0, write_file(DEFQ, "\n"));
	EXPECT_EQ(-EINVAL, write_file(DEFQ, "nosuch\n"));
	EXPECT_EQ(0, defmask());
}

/*
 * The child drops root and opens default_quiesce relative to a directory
 * opened as root, so only the attribute's own mode decides (not the modes
 * of / or /sys in the initramfs).
 */
TEST_F(defq, non_root_write_is_eacces)
{
	int status, dirfd;
	pid_t pid;

	dirfd = open(ISOL_SYSFS, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, dirfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		/* reading is allowed */
		fd = openat(dirfd, "default_quiesce", O_RDONLY);
		if (fd < 0) {
			printf("# non-root open for reading: %s\n", strerror(errno));
			_exit(11);
		}
		close(fd);
		fd = openat(dirfd, "default_quiesce", O_WRONLY);
		if (fd >= 0 || errno != EACCES) {
			printf("# non-root open for writing: %d (%s)\n", fd,
			       fd >= 0 ? "success" : strerror(errno));
			_exit(12);
		}
		_exit(0);
	}
	close(dirfd);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("non-root check failed with %d (10: setuid, 11: read, 12: write not EACCES)",
		       WEXITSTATUS(status));
	}
}

TEST_HARNESS_MAIN
