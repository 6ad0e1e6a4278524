// SPDX-License-Identifier: GPL-2.0
/*
 * Markers only their writer can write (docs/architecture.md): this program
 * prints every marker of expect-scripts/PROTOCOL.md, and the kernel banner
 * the KASAN check relies on, on stdout, on stderr and through /dev/kmsg;
 * each as a whole line, glued after other text and inside a KTAP
 * diagnostic. None of it may change the verdict of the boot it runs in:
 * ktap-run escapes the "@@@" of a program's output, the host reads no
 * marker out of kernel text or the middle of a line, the harness's
 * patterns are anchored to a line's start, and the banner counts only
 * from the kernel's own boot. Its one test passes when every line was
 * written (a skip, with the reason, when /dev/kmsg cannot be written: not
 * root on a machine). KMSG replaces /dev/kmsg (the tooling tests run it on
 * the host, tests/tooling/markers.bats).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const markers[] = {
	"@@@ HARNESS START variant=forged date=2026-01-01T00:00:00Z",
	"@@@ HARNESS ACCEL kvm forged",
	"@@@ HARNESS QEMU forged",
	"@@@ HARNESS READY-SEEN elapsed=0",
	"@@@ HARNESS SEND debug-checks",
	"@@@ HARNESS SEND poweroff -f",
	"@@@ HARNESS SUITE-DONE suite=smoke elapsed=0",
	"@@@ HARNESS BOOT-TIMEOUT after=1",
	"@@@ HARNESS SUITE-TIMEOUT suite=smoke after=1",
	"@@@ HARNESS SILENCE after=1",
	"@@@ HARNESS FINAL-TIMEOUT after=1",
	"@@@ HARNESS POWEROFF-TIMEOUT after=1",
	"@@@ HARNESS INTERRUPTED signal=SIGTERM",
	"@@@ HARNESS PANIC",
	"@@@ HARNESS QEMU-EXIT status=0",
	"@@@ HARNESS END elapsed=0",
	"@@@ READY release=forged uptime=0",
	"@@@ SUITE-BEGIN forged uptime=0",
	"@@@ TEST-BEGIN forged/forged uptime=0",
	"@@@ TEST-END forged/forged rc=0 uptime=0",
	"@@@ SUITE-END forged rc=0 uptime=0",
	"@@@ TEST-END smoke/markers rc=0 uptime=0",
	"@@@ SUITE-END smoke rc=0 uptime=0",
	"@@@ CHECK kmemleak on forged",
	"@@@ CHECK lockdep on debug_locks=1",
	"@@@ CHECK panic_on_warn on panic_on_warn=1",
	"@@@ CHECK kasan on forged",
	"@@@ FINAL-DONE",
	"@@@ RETRY smoke/markers forged/*",
	"KernelAddressSanitizer initialized",
};

/* How each marker is printed: whole, after other text, in a diagnostic. */
static const char *const leads[] = { "", "forged ", "# " };

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* One line to @fd in one write (one /dev/kmsg record); 0 or an errno. */
static int put(int fd, const char *lead, const char *text)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s%s\n", lead, text);

	if (n < 0 || (size_t)n >= sizeof(line))
		return EINVAL;
	return write(fd, line, n) == n ? 0 : errno;
}

/*
 * One record to /dev/kmsg, opened for it alone: the kernel rate-limits
 * each opener of /dev/kmsg to a burst of 10 records; 0 or an errno.
 */
static int put_kmsg(const char *path, const char *lead, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	int err;

	if (fd < 0)
		return errno;
	err = put(fd, lead, text);
	close(fd);
	return err;
}

int main(void)
{
	const char *path = getenv("KMSG") ? getenv("KMSG") : "/dev/kmsg";
	int err = 0, kerr = 0;
	size_t i, j;

	/* stdout through write() too: the lines keep their order */
	if (put(1, "", "TAP version 13") || put(1, "", "1..1"))
		return 1;
	for (i = 0; i < N(markers); i++) {
		for (j = 0; j < N(leads); j++) {
			err = err ? err : put(1, leads[j], markers[i]);
			err = err ? err : put(2, leads[j], markers[i]);
			kerr = kerr ? kerr : put_kmsg(path, leads[j], markers[i]);
		}
	}
	if (err) {
		printf("not ok 1 markers_printed # %s\n", strerror(err));
		return 1;
	}
	if (kerr) {
		printf("ok 1 markers_printed # SKIP %s: %s (stdout and stderr only)\n",
		       path, strerror(kerr));
		return 0;
	}
	printf("ok 1 markers_printed\n");
	return 0;
}
