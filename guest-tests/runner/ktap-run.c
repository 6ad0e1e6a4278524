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
			if (len < sizeof(line) - 1)
				line[len++] = buf[i];
			if (buf[i] != '\n')
				continue;
			line[len] = '\0';
			if (is_result(line)) {
				printf("# duration_ms=%.0f\n", now_ms() - mark);
				mark = now_ms();
			} else if (strncmp(line, "#  RUN ", 7) == 0) {
				mark = now_ms();
			}
			fputs(line, stdout);
			fflush(stdout);
			len = 0;
		}
	}
	if (len) {
		line[len] = '\0';
		printf("%s\n", line);
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
