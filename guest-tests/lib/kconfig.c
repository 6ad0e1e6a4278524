// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "kconfig.h"

int kconfig_value(const char *opt, char *buf, size_t len)
{
	char line[512], name[256];
	FILE *f;
	int found = 0;

	if (strncmp(opt, "CONFIG_", 7) == 0)
		opt += 7;
	snprintf(name, sizeof(name), "CONFIG_%s=", opt);

	/* busybox zcat: the guest has no zlib, and this keeps tests static. */
	f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, strlen(name)) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (buf && len) {
			strncpy(buf, line + strlen(name), len - 1);
			buf[len - 1] = '\0';
		}
		found = 1;
		break;
	}
	/* Drain so zcat does not die of SIGPIPE and pclose reports its status. */
	while (fgets(line, sizeof(line), f))
		;
	if (pclose(f) != 0 && !found)
		return -1;
	return found;
}

bool kconfig_enabled(const char *opt)
{
	char val[16];

	return kconfig_value(opt, val, sizeof(val)) == 1 &&
	       (strcmp(val, "y") == 0 || strcmp(val, "m") == 0);
}
