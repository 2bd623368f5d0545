/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-stress - flip the memory policy of every thread of a process, fast,
 * through pidfd_set_mempolicy(2), for the guest stress test (6.12 port).
 *
 * Usage: pmp-stress --pid=PID --calls=N [--min-calls=M] [--nr=NR] [--seconds=S]
 *
 * Opens a PIDFD_THREAD pidfd for every thread in /proc/PID/task (rescanned
 * every 64 calls, so threads that come and go are followed) plus one process
 * pidfd, and calls the syscall NR (default: $PIDMEMPOLICY_SYSCALL_NR) N times
 * in a tight loop, round-robin over the threads (every 8th call on the process
 * pidfd), rotating the policies
 *   interleave 0-3, bind 1, preferred 2, default, weighted interleave 0-3,
 *   local, preferred-many 0-1
 * (only nodes that exist are used). NR is NOT verified here: run it only where
 * the tool has verified it.
 *
 * Prints one line "pmp-stress: calls=N ok=N esrch=N other=N threads=N
 * seconds=S" and exits 0 if every call either succeeded or failed with ESRCH
 * (the thread ended meanwhile) and at least one succeeded; 1 otherwise (the
 * first unexpected errno is printed); 2 on usage errors; 3 if --seconds
 * (default 300) passed before N calls were made, unless at least
 * --min-calls=M (default N) were made by then (a slow debug kernel: the run
 * is bounded by time, the count only has a floor).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define PIDFD_THREAD_ 0200 /* O_EXCL */
#define MAX_TIDS 1024

static int ntids;
static int tids[MAX_TIDS];
static int fds[MAX_TIDS];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int find_tid(int tid)
{
	for (int i = 0; i < ntids; i++)
		if (tids[i] == tid)
			return i;
	return -1;
}

/* Close the pidfds of threads that ended, open pidfds of new ones. */
static void rescan(int pid)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int alive[MAX_TIDS] = { 0 };

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		int i = find_tid(tid);
		if (i >= 0) {
			alive[i] = 1;
			continue;
		}
		if (ntids >= MAX_TIDS)
			continue;
		int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD_);
		if (fd < 0)
			continue;
		tids[ntids] = tid;
		fds[ntids] = fd;
		alive[ntids] = 1;
		ntids++;
	}
	closedir(d);
	for (int i = 0; i < ntids;) {
		if (alive[i]) {
			i++;
			continue;
		}
		close(fds[i]);
		ntids--;
		tids[i] = tids[ntids];
		fds[i] = fds[ntids];
		alive[i] = alive[ntids];
	}
}

int main(int argc, char **argv)
{
	long pid = 0, calls = 0, min_calls = -1, nr = 0, seconds = 300;
	const char *env = getenv("PIDMEMPOLICY_SYSCALL_NR");

	if (env)
		nr = strtol(env, NULL, 10);
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--pid=", 6) == 0)
			pid = strtol(argv[i] + 6, NULL, 10);
		else if (strncmp(argv[i], "--calls=", 8) == 0)
			calls = strtol(argv[i] + 8, NULL, 10);
		else if (strncmp(argv[i], "--min-calls=", 12) == 0)
			min_calls = strtol(argv[i] + 12, NULL, 10);
		else if (strncmp(argv[i], "--nr=", 5) == 0)
			nr = strtol(argv[i] + 5, NULL, 10);
		else if (strncmp(argv[i], "--seconds=", 10) == 0)
			seconds = strtol(argv[i] + 10, NULL, 10);
		else {
			fprintf(stderr, "Usage: pmp-stress --pid=PID --calls=N [--min-calls=M] [--nr=NR] [--seconds=S]\n");
			return 2;
		}
	}
	if (min_calls < 0 || min_calls > calls)
		min_calls = calls;
	if (pid <= 0 || calls <= 0 || nr <= 0 || seconds <= 0) {
		fprintf(stderr, "pmp-stress: need --pid, --calls and --nr (or PIDMEMPOLICY_SYSCALL_NR)\n");
		return 2;
	}

	int nnodes = 0;
	while (nnodes < 64) {
		char p[80];
		snprintf(p, sizeof(p), "/sys/devices/system/node/node%d", nnodes);
		if (access(p, F_OK) != 0)
			break;
		nnodes++;
	}
	if (nnodes == 0)
		nnodes = 1;
	unsigned long all = nnodes >= 4 ? 0xfUL : (1UL << nnodes) - 1;
	struct {
		int mode;
		unsigned long mask;
	} pol[] = {
		{ 3, all },				/* interleave */
		{ 2, 1UL << (1 % nnodes) },		/* bind */
		{ 1, 1UL << (2 % nnodes) },		/* preferred */
		{ 0, 0 },				/* default */
		{ 6, all },				/* weighted interleave */
		{ 4, 0 },				/* local */
		{ 5, nnodes > 1 ? 3UL : 1UL },		/* preferred many */
	};
	const int npol = (int)(sizeof(pol) / sizeof(pol[0]));

	int procfd = (int)syscall(SYS_pidfd_open, (int)pid, 0);
	if (procfd < 0) {
		fprintf(stderr, "pmp-stress: pidfd_open(%ld): %s\n", pid, strerror(errno));
		return 1;
	}
	rescan((int)pid);

	long ok = 0, esrch = 0, other = 0;
	int first_err = 0;
	double start = now(), limit = start + (double)seconds;
	long c;
	for (c = 0; c < calls; c++) {
		if (c % 64 == 0) {
			rescan((int)pid);
			if (now() > limit)
				break;
		}
		int fd = (c % 8 == 7 || ntids == 0) ? procfd : fds[c % ntids];
		unsigned long mask = pol[c % npol].mask;
		long r = syscall(nr, fd, pol[c % npol].mode, mask ? &mask : NULL,
				 mask ? 64UL : 0UL, 0U);
		if (r == 0)
			ok++;
		else if (errno == ESRCH)
			esrch++;
		else {
			other++;
			if (!first_err)
				first_err = errno;
		}
	}
	printf("pmp-stress: calls=%ld ok=%ld esrch=%ld other=%ld threads=%d seconds=%.1f\n",
	       c, ok, esrch, other, ntids, now() - start);
	if (other)
		fprintf(stderr, "pmp-stress: unexpected error: %s\n", strerror(first_err));
	if (c < min_calls) {
		fprintf(stderr, "pmp-stress: only %ld of %ld calls in %lds\n", c, min_calls, seconds);
		return 3;
	}
	return (other == 0 && ok > 0) ? 0 : 1;
}
