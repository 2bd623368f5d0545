/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-vfork - a process with threads that never stop for a tracer: K
 * threads parked in vfork(2) (a vfork parent waits, killable but not
 * interruptible, until its child execs or exits; PTRACE_INTERRUPT does not
 * stop it), then N idle threads.
 *
 *   pmp-vfork K N
 *
 * Each vfork child sleeps until the thread that made it dies
 * (PR_SET_PDEATHSIG) or for 600 s.  Prints "ready PID" once every vfork
 * parent is parked (State D), and exits when its stdin reaches end of
 * file, its vfork children with it.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define KMAX 1000
/* small stacks, but not below what the architecture allows (aarch64:
 * 128 KiB) */
#define SMALL_STACK (64 * 1024 > PTHREAD_STACK_MIN ? 64 * 1024 : PTHREAD_STACK_MIN)

static volatile pid_t parked[KMAX];

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *vforker(void *arg)
{
	long i = (long)arg;
	pid_t child;

	parked[i] = (pid_t)syscall(SYS_gettid);
	child = vfork();
	if (child == 0) {
		/* the child runs on its parent's stack: system calls only */
		struct timespec ten_minutes = { 600, 0 };

		syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		syscall(SYS_nanosleep, &ten_minutes, NULL);
		_exit(0);
	}
	return idle(NULL);
}

static char state_of(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	char buf[64], *end;
	long k, n;

	if (argc != 3 || (k = strtol(argv[1], &end, 10)) < 0 || *end || k > KMAX ||
	    (n = strtol(argv[2], &end, 10)) < 0 || *end || n > 100000) {
		fprintf(stderr, "usage: pmp-vfork K N (K 0..%d, N 0..100000)\n", KMAX);
		return 2;
	}
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, SMALL_STACK)) {
		fprintf(stderr, "pmp-vfork: pthread_attr failed\n");
		return 1;
	}
	for (long i = 0; i < k + n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, i < k ? vforker : idle, (void *)i)) {
			fprintf(stderr, "pmp-vfork: thread %ld failed\n", i);
			return 1;
		}
	}
	for (long i = 0; i < k; i++)
		while (!parked[i] || state_of(parked[i]) != 'D')
			usleep(1000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
