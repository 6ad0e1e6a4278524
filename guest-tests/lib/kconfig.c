// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kconfig.h"

/*
 * /proc/config.gz decompressed once per process: a test that checks every
 * option of its variant (smoke) asks hundreds of times, and a zcat for
 * each took 15-19 s of the debug variant's boot.
 */
static char *config_text;
static int config_failed;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void config_load(void)
{
	size_t len = 0, cap = 0;
	char chunk[4096];
	size_t n;
	FILE *f;

	/* busybox zcat: the guest has no zlib, and this keeps tests static. */
	f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	if (!f) {
		config_failed = 1;
		return;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (len + n + 1 > cap) {
			char *bigger = realloc(config_text, cap = 2 * (len + n + 1));

			if (!bigger) {
				config_failed = 1;
				break;
			}
			config_text = bigger;
		}
		memcpy(config_text + len, chunk, n);
		len += n;
		config_text[len] = '\0';
	}
	/* Read to the end, so pclose() reports zcat's own status. */
	while (fread(chunk, 1, sizeof(chunk), f) > 0)
		;
	if (pclose(f) != 0)
		config_failed = 1;
}

int kconfig_value(const char *opt, char *buf, size_t len)
{
	char name[256];
	const char *p;
	size_t n;

	if (strncmp(opt, "CONFIG_", 7) == 0)
		opt += 7;
	snprintf(name, sizeof(name), "CONFIG_%s=", opt);
	n = strlen(name);

	pthread_once(&config_once, config_load);
	for (p = config_text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t vlen;

		if (strncmp(p, name, n) != 0)
			continue;
		vlen = strcspn(p + n, "\n");
		if (buf && len) {
			if (vlen > len - 1)
				vlen = len - 1;
			memcpy(buf, p + n, vlen);
			buf[vlen] = '\0';
		}
		return 1;
	}
	return config_failed ? -1 : 0;
}

bool kconfig_enabled(const char *opt)
{
	char val[16];

	return kconfig_value(opt, val, sizeof(val)) == 1 &&
	       (strcmp(val, "y") == 0 || strcmp(val, "m") == 0);
}
