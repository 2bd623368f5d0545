/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-syscost - what one thread costs the kernel, call by call, for the
 * benchmark's explanation: over every thread of PID, the mean time of
 *   pidfd_open(TID, PIDFD_THREAD) + close   (what pidmempolicy needs)
 *   tgkill(PID, TID, 0)                     (its identity probe)
 *   pidfd_set_mempolicy(pidfd, MPOL_INTERLEAVE, node 0)   (the call)
 *   sched_getaffinity, sched_setaffinity    (what taskset makes)
 * and the time of one full listing of /proc/PID/task.
 *
 * Usage: pmp-syscost PID NR
 *   NR  the number of pidfd_set_mempolicy on the running (patched) kernel;
 *       the caller vouches for it: this instrument verifies nothing.
 *       "none" on a kernel without it (the host): the call is not timed
 *       and set_us reads "-".
 * Prints one line "syscost: threads=N pidfd_open_close_us=... tgkill_us=...
 * set_us=... getaffinity_us=... setaffinity_us=... listing_us=...".
 * The target's policy is left interleave:0 and its affinity unchanged.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 65536
#define BATCH 256
#define PIDFD_THREAD_FLAG 0x80	/* O_EXCL, Linux 6.9 */

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int list_threads(int pid, int *tids)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) && n < MAX_THREADS)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	static int tids[MAX_THREADS];
	unsigned long node0 = 1;
	double t0, open_us, probe_us, get_us, set_aff_us, set_us = 0, list_us;
	cpu_set_t cpus;
	char set_text[32];
	long nr;
	int pid, n;

	nr = argc == 3 && strcmp(argv[2], "none") != 0 ? atol(argv[2]) : 0;
	if (argc != 3 || (pid = atoi(argv[1])) <= 0 || (nr <= 0 && strcmp(argv[2], "none") != 0)) {
		fprintf(stderr, "Usage: pmp-syscost PID NR\n");
		return 2;
	}
	n = list_threads(pid, tids);
	if (n <= 0) {
		perror("pmp-syscost: /proc/PID/task");
		return 1;
	}
	t0 = now_us();
	for (int i = 0; i < n; i++) {
		int fd = (int)syscall(SYS_pidfd_open, tids[i], PIDFD_THREAD_FLAG);

		if (fd >= 0)
			close(fd);
	}
	open_us = now_us() - t0;
	t0 = now_us();
	for (int i = 0; i < n; i++)
		syscall(SYS_tgkill, pid, tids[i], 0);
	probe_us = now_us() - t0;
	t0 = now_us();
	for (int i = 0; i < n; i++)
		sched_getaffinity(tids[i], sizeof(cpus), &cpus);
	get_us = now_us() - t0;
	t0 = now_us();
	for (int i = 0; i < n; i++)
		if (sched_getaffinity(tids[i], sizeof(cpus), &cpus) == 0)
			sched_setaffinity(tids[i], sizeof(cpus), &cpus);
	set_aff_us = now_us() - t0 - get_us;	/* the set alone */
	for (int b = 0; nr > 0 && b < n; b += BATCH) {
		int fds[BATCH], k = 0;

		for (int i = b; i < n && i < b + BATCH; i++)
			fds[k++] = (int)syscall(SYS_pidfd_open, tids[i], PIDFD_THREAD_FLAG);
		t0 = now_us();
		for (int j = 0; j < k; j++)
			if (fds[j] >= 0)
				syscall(nr, fds[j], 3 /* MPOL_INTERLEAVE */, &node0, 65UL, 0U);
		set_us += now_us() - t0;
		for (int j = 0; j < k; j++)
			if (fds[j] >= 0)
				close(fds[j]);
	}
	t0 = now_us();
	if (list_threads(pid, tids) < 0)
		return 1;
	list_us = now_us() - t0;
	snprintf(set_text, sizeof(set_text), "%.2f", set_us / n);
	printf("syscost: threads=%d pidfd_open_close_us=%.2f tgkill_us=%.2f set_us=%s "
	       "getaffinity_us=%.2f setaffinity_us=%.2f listing_us=%.0f\n", n, open_us / n,
	       probe_us / n, nr > 0 ? set_text : "-", get_us / n, set_aff_us / n, list_us);
	return 0;
}
