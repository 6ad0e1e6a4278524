/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Query the running kernel's configuration from /proc/config.gz, so a test
 * can SKIP with a reason when its feature is not built into this variant.
 */
#ifndef GUEST_TESTS_KCONFIG_H
#define GUEST_TESTS_KCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Look up @opt (with or without the CONFIG_ prefix).  Returns 1 and copies
 * the value ("y", "m", "0x10", "\"str\"") into @buf when the option is set,
 * 0 when it is not set, -1 when /proc/config.gz cannot be read.
 */
int kconfig_value(const char *opt, char *buf, size_t len);

/* True when @opt is =y (or =m). */
bool kconfig_enabled(const char *opt);

#endif
