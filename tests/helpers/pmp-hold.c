/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-hold - a stand-in debugger: traces one thread (PTRACE_SEIZE, no
 * options) so that the ptrace backend finds it already traced, and keeps
 * it running: every signal-delivery stop is resumed with its signal, a
 * group stop is left listening.  Replaces strace in the tests, so that they
 * need no strace on the guests.
 *
 * Usage: pmp-hold TID
 * Prints "holding TID" once the thread is traced; runs until the thread
 * exits or pmp-hold is killed (the kernel then detaches the thread).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t tid;
	int status;

	if (argc != 2 || (tid = (pid_t)atoi(argv[1])) <= 0) {
		fprintf(stderr, "Usage: pmp-hold TID\n");
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		perror("pmp-hold: PTRACE_SEIZE");
		return 1;
	}
	printf("holding %d\n", (int)tid);
	fflush(stdout);
	for (;;) {
		pid_t r = waitpid(tid, &status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status))
			return 0;
		if (!WIFSTOPPED(status))
			continue;
		if (status >> 16 == PTRACE_EVENT_STOP)
			(void)ptrace(PTRACE_LISTEN, tid, NULL, NULL);
		else
			(void)ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(status));
	}
}
