// SPDX-License-Identifier: GPL-2.0
/*
 * ktap-run PROGRAM [ARGS...]
 *
 * Run one guest test program and copy its output to stdout, adding a
 * "# duration_ms=N" diagnostic before every KTAP result line (the time since
 * the test's "#  RUN" line, or since the previous result). Exits with the
 * program's exit status (128+signal if it was killed).
 *
 * The program writes to a pseudo-terminal rather than a pipe so that stdio
 * is line buffered: when a test hangs or the kernel dies, the lines printed
 * so far are already on the console instead of lost in a buffer.
 *
 * Markers (expect-scripts/PROTOCOL.md, "@@@ ...") are the runner's and the
 * harness's alone: no "@@@" of the program's output reaches the console
 * ("@@@" becomes "@@ @", on stdout and stderr alike), except a whole line
 * "@@@ RETRY ..." (a kselftest target's program, scripts/kselftest-suite,
 * writes it; the host takes it only from that program). A line longer than
 * the buffer goes out in pieces, its newline kept.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int is_result(const char *line)
{
	return strncmp(line, "ok ", 3) == 0 || strncmp(line, "not ok ", 7) == 0;
}

/*
 * Copy @n bytes of @s to stdout, never three '@' in a row: @at counts the
 * '@' the line has just printed (a line may go out in pieces).
 */
static void put_escaped(const char *s, size_t n, int *at)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '@') {
			*at = 0;
		} else if (++*at == 3) {
			putchar(' ');
			*at = 1;
		}
		putchar(s[i]);
	}
}

static int open_pty(int *slave)
{
	struct termios tio;
	int master = posix_openpt(O_RDWR | O_NOCTTY);

	if (master < 0 || grantpt(master) || unlockpt(master))
		return -1;
	*slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	if (*slave < 0)
		return -1;
	/* Raw: no "\n" -> "\r\n" translation, no echo. */
	tcgetattr(*slave, &tio);
	cfmakeraw(&tio);
	tcsetattr(*slave, TCSANOW, &tio);
	return master;
}

int main(int argc, char **argv)
{
	char buf[4096], line[8192];
	size_t len = 0;
	double mark;
	int master, slave, fds[2], status = 0, exited = 0;
	int cont = 0;	/* the line's first piece went out already */
	int at = 0;	/* '@' just printed on this line (put_escaped) */
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: ktap-run PROGRAM [ARGS...]\n");
		return 2;
	}
	master = open_pty(&slave);
	if (master < 0) {
		/* No devpts: a pipe still works, with block-buffered output. */
		if (pipe(fds))
			return 2;
		master = fds[0];
		slave = fds[1];
	}
	mark = now_ms();
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		close(master);
		dup2(slave, 1);
		dup2(slave, 2);
		if (slave > 2)
			close(slave);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "ktap-run: cannot run %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	close(slave);

	for (;;) {
		struct pollfd pfd = { .fd = master, .events = POLLIN };
		ssize_t n;

		/*
		 * Stop when the program has exited and its output is drained,
		 * even if a leftover child of it still holds the terminal open.
		 */
		if (poll(&pfd, 1, 200) == 0) {
			if (!exited && waitpid(pid, &status, WNOHANG) == pid)
				exited = 1;
			if (exited)
				break;
			continue;
		}
		n = read(master, buf, sizeof(buf));
		/* EIO is how a pty says the other side closed. */
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			line[len++] = buf[i];
			/* a full buffer goes out as a piece of its line */
			if (buf[i] != '\n' && len < sizeof(line) - 1)
				continue;
			line[len] = '\0';
			if (cont) {
				/* the rest of a long line: no result */
			} else if (is_result(line)) {
				printf("# duration_ms=%.0f\n", now_ms() - mark);
				mark = now_ms();
			} else if (strncmp(line, "#  RUN ", 7) == 0) {
				mark = now_ms();
			}
			if (!cont && strncmp(line, "@@@ RETRY ", 10) == 0)
				fputs(line, stdout);
			else
				put_escaped(line, len, &at);
			fflush(stdout);
			cont = buf[i] != '\n';
			if (!cont)
				at = 0;
			len = 0;
		}
	}
	if (len || cont) {
		put_escaped(line, len, &at);
		putchar('\n');
	}
	fflush(stdout);
	if (!exited && waitpid(pid, &status, 0) < 0)
		return 2;
	if (WIFSIGNALED(status)) {
		printf("# ktap-run: %s killed by signal %d\n", argv[1], WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
