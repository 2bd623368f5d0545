/*
 * pmp-threads - a process with many idle threads, for benchmarks.
 *
 *   pmp-threads N
 *
 * Starts N threads (small stacks) that sleep in pause(), prints
 * "ready PID" on stdout, and exits when its stdin reaches end of file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	char buf[64];
	long n;
	int err;

	if (argc != 2 || (n = strtol(argv[1], NULL, 10)) < 0 || n > 100000) {
		fprintf(stderr, "usage: pmp-threads N (0..100000)\n");
		return 2;
	}
	if ((err = pthread_attr_init(&attr)) || (err = pthread_attr_setstacksize(&attr, 64 * 1024))) {
		fprintf(stderr, "pmp-threads: pthread_attr: %s\n", strerror(err));
		return 1;
	}
	for (long i = 0; i < n; i++) {
		pthread_t t;

		err = pthread_create(&t, &attr, idle, NULL);
		if (err) {
			fprintf(stderr, "pmp-threads: thread %ld: %s\n", i, strerror(err));
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
