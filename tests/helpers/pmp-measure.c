/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-measure - run a command and report what it cost.
 *
 *   pmp-measure CMD [ARG...]
 *
 * Runs CMD (stdout and stderr untouched), waits for it, and prints on
 * stderr one line:
 *
 *   measure: wall_us=N user_us=N sys_us=N maxrss_kb=N status=N
 *
 * wall_us is the wall-clock time from fork to reap (CLOCK_MONOTONIC),
 * user_us and sys_us the child's CPU time in user space and in the kernel,
 * maxrss_kb the child's peak resident set (getrusage of wait4), status the
 * exit status (128+N for a signal).  The exit status of pmp-measure is
 * CMD's.  Used by tests/bench.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	long long start;
	int status, code;
	pid_t child;

	if (argc < 2) {
		fprintf(stderr, "usage: pmp-measure CMD [ARG...]\n");
		return 2;
	}
	start = now_us();
	child = fork();
	if (child < 0) {
		fprintf(stderr, "pmp-measure: fork: %s\n", strerror(errno));
		return 2;
	}
	if (child == 0) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "pmp-measure: cannot run %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	while (wait4(child, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "pmp-measure: wait4: %s\n", strerror(errno));
			return 2;
		}
	}
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(stderr, "measure: wall_us=%lld user_us=%lld sys_us=%lld maxrss_kb=%ld status=%d\n",
		now_us() - start,
		(long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
		(long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec,
		ru.ru_maxrss, code);
	return code;
}
