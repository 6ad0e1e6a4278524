// SPDX-License-Identifier: GPL-2.0
/*
 * Smoke tests: prove the guest runs the kernel the pipeline built for this
 * variant, booted the way the variant says. The expected values come from
 * the build's manifest, written into the initramfs as /etc/pipeline/expected
 * (key=value) and /etc/pipeline/options (the Kconfig lines the variant's
 * fragments ask for).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kconfig.h"

#define EXPECTED "/etc/pipeline/expected"
#define OPTIONS "/etc/pipeline/options"

/* Value of @key in /etc/pipeline/expected, or NULL. */
static char *expected(const char *key)
{
	static char val[4096];
	char line[4096];
	size_t klen = strlen(key);
	FILE *f = fopen(EXPECTED, "r");
	char *ret = NULL;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(val, sizeof(val), "%s", line + klen + 1);
			ret = val;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The value of @param= on a kernel command line, or NULL. */
static const char *cmdline_param(const char *cmdline, const char *param, char *buf, size_t len)
{
	char *copy = strdup(cmdline), *save = NULL, *w;
	const char *ret = NULL;
	size_t plen = strlen(param);

	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strncmp(w, param, plen) == 0 && w[plen] == '=') {
			snprintf(buf, len, "%s", w + plen + 1);
			ret = buf;
		}
	}
	free(copy);
	return ret;
}

TEST(kernel_release_is_the_built_one)
{
	struct utsname u;
	char *want = expected("release");

	ASSERT_NE(NULL, want) TH_LOG("no %s in the initramfs", EXPECTED);
	ASSERT_EQ(0, uname(&u));
	TH_LOG("running %s %s", u.release, u.version);
	EXPECT_STREQ(want, u.release);
}

TEST(config_is_the_built_one)
{
	char *want = expected("config_sha256");
	char got[128] = "";
	FILE *p;

	ASSERT_NE(NULL, want);
	/* /proc/config.gz holds the very .config the kernel was built from. */
	p = popen("zcat /proc/config.gz | sha256sum", "r");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, fgets(got, sizeof(got), p));
	pclose(p);
	got[strcspn(got, " \n")] = '\0';
	EXPECT_STREQ(want, got);
}

TEST(variant_options_are_in_effect)
{
	char line[512], val[256];
	int checked = 0, bad = 0;
	FILE *f = fopen(OPTIONS, "r");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		char name[256] = "", want[256] = "n";
		int r;

		if (sscanf(line, "# %255[A-Za-z0-9_] is not set", name) != 1 &&
		    sscanf(line, "%255[A-Za-z0-9_]=%255s", name, want) != 2)
			continue;
		r = kconfig_value(name, val, sizeof(val));
		ASSERT_NE(-1, r) TH_LOG("cannot read /proc/config.gz");
		if (r == 0)
			strcpy(val, "n");
		checked++;
		if (strcmp(val, want) != 0) {
			bad++;
			TH_LOG("%s: want %s, running kernel has %s", name, want, val);
		}
	}
	fclose(f);
	TH_LOG("checked %d options", checked);
	EXPECT_LT(0, checked);
	EXPECT_EQ(0, bad);
}

TEST(cmdline_is_the_variant_one)
{
	char cmdline[4096], pad[4200], word[512];
	char *want = expected("cmdline"), *save = NULL, *w;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, read_file("/proc/cmdline", cmdline, sizeof(cmdline)));
	TH_LOG("/proc/cmdline: %s", cmdline);
	snprintf(pad, sizeof(pad), " %s ", cmdline);
	for (w = strtok_r(want, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		snprintf(word, sizeof(word), " %s ", w);
		EXPECT_NE(NULL, strstr(pad, word)) TH_LOG("missing from the command line: %s", w);
	}
}

TEST(configured_cpus_are_online)
{
	char *smp = expected("smp"), online[256], want[64];
	long n;

	ASSERT_NE(NULL, smp);
	n = strtol(smp, NULL, 10);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, read_file("/sys/devices/system/cpu/online", online, sizeof(online)));
	if (n == 1)
		snprintf(want, sizeof(want), "0");
	else
		snprintf(want, sizeof(want), "0-%ld", n - 1);
	EXPECT_STREQ(want, online);
	EXPECT_EQ(n, sysconf(_SC_NPROCESSORS_ONLN));
}

TEST(isolation_is_active)
{
	char cmdline[4096], want[256], got[256];
	const char *iso;
	int checked = 0;

	ASSERT_EQ(0, read_file("/proc/cmdline", cmdline, sizeof(cmdline)));
	if (cmdline_param(cmdline, "nohz_full", want, sizeof(want))) {
		ASSERT_EQ(0, read_file("/sys/devices/system/cpu/nohz_full", got, sizeof(got)));
		EXPECT_STREQ(want, got);
		checked++;
	}
	iso = cmdline_param(cmdline, "isolcpus", want, sizeof(want));
	if (iso) {
		/* isolcpus=[flag,...,]cpulist: the CPU list starts at a digit. */
		const char *list = iso + strcspn(iso, "0123456789");

		ASSERT_EQ(0, read_file("/sys/devices/system/cpu/isolated", got, sizeof(got)));
		EXPECT_STREQ(list, got);
		checked++;
	}
	if (!checked)
		SKIP(return, "this variant boots without nohz_full= or isolcpus=");
}

TEST_HARNESS_MAIN
