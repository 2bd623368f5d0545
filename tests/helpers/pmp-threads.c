/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-threads - a process with many idle threads, for benchmarks and for
 * the test of threads born while pidmempolicy -a walks the process.
 *
 *   pmp-threads [--latecomer[=K]] [--wait=pause|futex] [--busy=B] N
 *
 * Starts N threads (small stacks: 64 KiB, 128 on aarch64) that sleep in pause(), or with
 * --wait=futex in pthread_cond_wait(3) of a condition never signalled (a
 * futex wait without a timeout, as a pool's idle thread waits), prints
 * "ready PID" on stdout, and exits when its stdin reaches end of file.
 * --busy=B adds 2B threads that never sleep: B spin in user space, B make
 * getppid(2) in a loop (a busy target).
 *
 * --latecomer adds K doomed threads (1 by default, at most 1000), created
 * first, and a watcher, created last (so a walk of /proc/PID/task meets it
 * last), that watches the main thread's task policy in
 * /proc/self/task/PID/numa_maps.  When that is no longer "default" (a walk
 * has begun), the watcher ends the doomed threads, waits until /proc no
 * longer lists them, and creates K + 1 threads (the latecomers), each of
 * which prints "latecomer TID MODE" with the mode it inherited at birth
 * (get_mempolicy: 0 = default, the old policy, if its creator had not yet
 * been set), then sleeps like the others.  Threads gone and as many come
 * (and one more): a listing in progress, which resumes at its count of
 * threads, passes over the first latecomers, and a read of the end of the
 * list from where the walk ended meets a latecomer first when more than
 * its overlap of threads has gone.  The watcher watches for 60 s at most.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int wait_futex;		/* --wait=futex */
static pthread_mutex_t never_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *idle(void *arg)
{
	(void)arg;
	if (wait_futex) {
		pthread_mutex_lock(&never_lock);
		for (;;)
			pthread_cond_wait(&never, &never_lock);
	}
	for (;;)
		pause();
	return NULL;
}

static void *spin_user(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	for (;;)
		n++;
	return NULL;
}

static void *spin_syscall(void *arg)
{
	(void)arg;
	for (;;)
		(void)syscall(SYS_getppid);
	return NULL;
}

static void *latecomer(void *arg)
{
	int mode = -1;

	(void)arg;
	if (syscall(SYS_get_mempolicy, &mode, NULL, 0UL, NULL, 0UL) < 0)
		mode = -1;
	printf("latecomer %ld %d\n", (long)syscall(SYS_gettid), mode);
	fflush(stdout);
	return idle(NULL);
}

/* Whether the main thread's task policy, as the first line of its
 * numa_maps shows it (the second field), is still "default". */
static int leader_policy_is_default(const char *path)
{
	char buf[512], *field;
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 1;
	buf[len] = '\0';
	field = strchr(buf, ' ');
	return !field || strncmp(field + 1, "default", 7) == 0;
}

#define DOOMED_MAX 1000

static int doom_pipe[2];
static long ndoomed;
static pthread_t doomed_threads[DOOMED_MAX];
static volatile pid_t doomed_tids[DOOMED_MAX];

static void *doomed(void *arg)
{
	char c;

	doomed_tids[(long)arg] = (pid_t)syscall(SYS_gettid);
	while (read(doom_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void say_failed(void)
{
	printf("latecomer 0 -1\n");
	fflush(stdout);
}

static void *watcher(void *arg)
{
	char path[64];
	time_t give_up = time(NULL) + 60;
	pthread_t t;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/self/task/%d/numa_maps", (int)getpid());
	while (leader_policy_is_default(path))
		if (time(NULL) > give_up)
			return idle(NULL);
	/* K threads go, then K + 1 come */
	for (long i = 0; i < ndoomed; i++)
		if (write(doom_pipe[1], "x", 1) != 1) {
			say_failed();
			return idle(NULL);
		}
	for (long i = 0; i < ndoomed; i++) {
		if (pthread_join(doomed_threads[i], NULL) != 0) {
			say_failed();
			return idle(NULL);
		}
		snprintf(path, sizeof(path), "/proc/self/task/%d", (int)doomed_tids[i]);
		while (access(path, F_OK) == 0)
			;
	}
	for (long i = 0; i <= ndoomed; i++)
		if (pthread_create(&t, NULL, latecomer, NULL) != 0)
			say_failed();
	return idle(NULL);
}

static int usage(void)
{
	fprintf(stderr, "usage: pmp-threads [--latecomer[=K]] [--wait=pause|futex] [--busy=B] N "
		"(K 1..%d, N 0..100000, B 0..64)\n", DOOMED_MAX);
	return 2;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	int late = 0, i;
	long n, busy = 0, stack;
	char buf[64], *end;
	int err;

	for (i = 1; i < argc - 1; i++) {
		if (strncmp(argv[i], "--latecomer", 11) == 0) {
			late = 1;
			ndoomed = argv[i][11] == '\0' ? 1 : argv[i][11] == '=' ? strtol(argv[i] + 12, &end, 10) : -1;
			if (ndoomed < 1 || ndoomed > DOOMED_MAX || (argv[i][11] == '=' && *end))
				return usage();
		} else if (strcmp(argv[i], "--wait=futex") == 0) {
			wait_futex = 1;
		} else if (strcmp(argv[i], "--wait=pause") == 0) {
			wait_futex = 0;
		} else if (strncmp(argv[i], "--busy=", 7) == 0) {
			busy = strtol(argv[i] + 7, &end, 10);
			if (*end || busy < 0 || busy > 64)
				return usage();
		} else {
			return usage();
		}
	}
	if (i != argc - 1 || (n = strtol(argv[i], &end, 10)) < 0 || *end || n > 100000)
		return usage();
	/* 64 KiB stacks, or the least the C library takes (128 KiB on aarch64) */
	stack = sysconf(_SC_THREAD_STACK_MIN);
	if (stack < 64 * 1024)
		stack = 64 * 1024;
	if ((err = pthread_attr_init(&attr)) || (err = pthread_attr_setstacksize(&attr, (size_t)stack))) {
		fprintf(stderr, "pmp-threads: pthread_attr: %s\n", strerror(err));
		return 1;
	}
	if (late) {
		if (pipe(doom_pipe) < 0) {
			fprintf(stderr, "pmp-threads: pipe: %s\n", strerror(errno));
			return 1;
		}
		for (long d = 0; d < ndoomed; d++) {
			if ((err = pthread_create(&doomed_threads[d], &attr, doomed, (void *)d))) {
				fprintf(stderr, "pmp-threads: a doomed thread: %s\n", strerror(err));
				return 1;
			}
			while (!doomed_tids[d])
				sched_yield();
		}
	}
	for (long k = 0; k < n + 2 * busy + late; k++) {
		void *(*fn)(void *) = k < n ? idle : k < n + busy ? spin_user : k < n + 2 * busy ? spin_syscall : watcher;
		pthread_t t;

		err = pthread_create(&t, &attr, fn, NULL);
		if (err) {
			fprintf(stderr, "pmp-threads: thread %ld: %s\n", k, strerror(err));
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	/* The end of stdin is two ends in a row.  The main thread is the one
	 * pidmempolicy holds: killed with its whole process group in the
	 * middle of a call injected here, the tool leaves this read returning
	 * that call's result (ptrace.h, "path A"), which may be 0; the next
	 * read is a real one. */
	for (int ends = 0; ends < 2;)
		ends = read(0, buf, sizeof(buf)) > 0 ? 0 : ends + 1;
	return 0;
}
