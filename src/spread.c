/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spread.c - re-spread the pages a process already has over the nodes of
 * an interleave, evenly or by the node weights, moving as few as possible,
 * as fast as allowed: move_pages(2) on the process (a stock system call that takes another process's PID: no
 * ptrace, any kernel).  migrate_pages(2) cannot: it only moves pages off
 * nodes outside the set, and an interleave's set is usually every node.
 */
#include "config.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "interrupt.h"
#include "procfs.h"
#include "spread.h"

#define BATCH 1024	/* pages per move_pages(2) call */

/* The mappings whose pages move: private anonymous memory (no file
 * behind it, not the kernel's [vdso]/[vvar]/[vsyscall]).  Shared and
 * file pages are other processes' too. */
struct range {
	uintptr_t start, end;
};

struct ranges {
	struct range *r;
	size_t n, cap;
};

static int add_range(struct ranges *rs, uintptr_t start, uintptr_t end)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		struct range *grown = realloc(rs->r, cap * sizeof(*grown));

		if (!grown)
			return -1;
		rs->r = grown;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct range){ start, end };
	return 0;
}

static int maps_line(const char *line, size_t len, void *arg)
{
	struct ranges *rs = arg;
	char buf[512], perms[8] = "", path[256] = "";
	unsigned long start, end, inode;
	int fields;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	fields = sscanf(buf, "%lx-%lx %7s %*s %*s %lu %255s", &start, &end, perms, &inode, path);
	if (fields < 4 || perms[3] != 'p' || inode != 0)
		return 0;
	if (fields == 5 && strcmp(path, "[heap]") != 0 && strcmp(path, "[stack]") != 0)
		return 0;	/* [vdso], [vvar], a named anonymous mapping's owner knows */
	return add_range(rs, start, end) < 0 ? -1 : 0;
}

/* A batch of pages, their nodes (move_pages' query or its answer) and
 * where they go. */
struct pass {
	pid_t pid;
	void *pages[BATCH];
	int status[BATCH];
	int nodes[BATCH];
	size_t n;
	long page_size;
};

static int query(struct pass *p)
{
	if (numa_move_pages(p->pid, (unsigned long)p->n, p->pages, NULL, p->status, 0) < 0)
		return -1;
	return 0;
}

void spread_plan(const long *count, int nnodes, const struct bitmask *set, const unsigned int *weights,
		 long *excess, long *deficit)
{
	long total = 0, given = 0;
	unsigned long long wsum = 0;

	for (int n = 0; n < nnodes; n++) {
		total += count[n];
		if (numa_bitmask_isbitset(set, (unsigned int)n))
			wsum += weights ? weights[n] : 1;
	}
	/* first each node's whole share, then the pages left over one each
	 * to the first nodes of the set */
	for (int n = 0; n < nnodes; n++) {
		excess[n] = deficit[n] = 0;
		if (!numa_bitmask_isbitset(set, (unsigned int)n) || !wsum)
			continue;
		deficit[n] = (long)((unsigned long long)total * (weights ? weights[n] : 1) / wsum);
		given += deficit[n];
	}
	for (int n = 0; n < nnodes && given < total && wsum; n++)
		if (numa_bitmask_isbitset(set, (unsigned int)n) && (!weights || weights[n])) {
			deficit[n]++;
			given++;
		}
	for (int n = 0; n < nnodes; n++) {
		long want = deficit[n];

		if (!numa_bitmask_isbitset(set, (unsigned int)n) || !wsum) {
			excess[n] = count[n];
			deficit[n] = 0;
		} else if (count[n] > want) {
			excess[n] = count[n] - want;
			deficit[n] = 0;
		} else {
			deficit[n] = want - count[n];
		}
	}
}

int spread_read_weights(unsigned int *weights, int nnodes)
{
	static const char dir[] = "/sys/kernel/mm/mempolicy/weighted_interleave";
	char path[96], buf[16];

	if (access(dir, F_OK) < 0)
		return -1;
	for (int n = 0; n < nnodes; n++) {
		char *end;
		unsigned long w;

		weights[n] = 1;
		snprintf(path, sizeof(path), "%s/node%d", dir, n);
		if (procfs_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		w = strtoul(buf, &end, 10);
		if (end != buf && w >= 1 && w <= 255)
			weights[n] = (unsigned int)w;
	}
	return 0;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Keep to the rate: sleep until `bytes` fit in the time since t0, in
 * pieces, so that a signal ends the wait. */
static void pace(unsigned long long rate, unsigned long long bytes, const struct timespec *t0)
{
	double due;

	if (!rate)
		return;
	due = (double)bytes / (double)rate;
	while (!interrupt_signal()) {
		double left = due - seconds_since(t0);
		struct timespec nap;

		if (left <= 0)
			break;
		if (left > 0.05)
			left = 0.05;
		nap.tv_sec = 0;
		nap.tv_nsec = (long)(left * 1e9);
		nanosleep(&nap, NULL);
	}
}

static void count_reason(struct spread_result *res, int err)
{
	for (int i = 0; i < SPREAD_MAX_REASONS; i++) {
		if (res->reasons[i].err == err || res->reasons[i].err == 0) {
			res->reasons[i].err = err;
			res->reasons[i].pages++;
			return;
		}
	}
	res->reasons[SPREAD_MAX_REASONS - 1].pages++;	/* the last one takes the rest */
}

int spread_process(pid_t pid, const struct bitmask *set, const struct spread_options *opt,
		   struct spread_result *res)
{
	struct ranges rs = { 0 };
	struct pass *p = calloc(1, sizeof(*p));
	int nnodes = numa_max_node() + 1;
	long *count = calloc((size_t)nnodes * 3, sizeof(long));
	long *excess = count + nnodes, *deficit = count + 2 * nnodes;
	struct spread_progress progress = { .pid = pid };
	struct timespec t0 = { 0 };
	char path[64];
	int ret = -1, next = 0;

	memset(res, 0, sizeof(*res));
	if (nnodes > SPREAD_MAX_NODES)
		nnodes = SPREAD_MAX_NODES;	/* no machine has more yet; the rest is not counted */
	res->nnodes = nnodes;
	if (!p || !count) {
		errno = ENOMEM;
		goto out;
	}
	p->pid = pid;
	p->page_size = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (procfs_each_line(path, maps_line, &rs) < 0)
		goto out;
	/* pass 0 counts where the pages are, pass 1 moves the excess; a
	 * page the target freed or faulted meanwhile is only a miscount */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < rs.n; i++) {
			for (uintptr_t a = rs.r[i].start; a < rs.r[i].end;) {
				p->n = 0;
				while (a < rs.r[i].end && p->n < BATCH) {
					p->pages[p->n++] = (void *)a;
					a += (uintptr_t)p->page_size;
				}
				if (interrupt_signal()) {
					res->interrupted = true;
					ret = 0;
					goto out;
				}
				if (query(p) < 0)
					goto out;
				if (pass == 0) {
					for (size_t j = 0; j < p->n; j++)
						if (p->status[j] >= 0 && p->status[j] < nnodes) {
							count[p->status[j]]++;
							res->pages++;
						}
					continue;
				}
				/* move what is over a node's share to a node under
				 * its share, round robin */
				size_t m = 0;

				for (size_t j = 0; j < p->n; j++) {
					int from = p->status[j], to = -1;

					if (from < 0 || from >= nnodes || excess[from] == 0)
						continue;
					for (int t = 0; t < nnodes; t++) {
						int c = (next + t) % nnodes;

						if (deficit[c] > 0) {
							to = c;
							break;
						}
					}
					if (to < 0)
						break;
					next = (to + 1) % nnodes;
					excess[from]--;
					deficit[to]--;
					p->pages[m] = p->pages[j];
					p->nodes[m] = to;
					p->status[m] = from;	/* where it was */
					m++;
				}
				if (m == 0)
					continue;
				int was[BATCH];

				memcpy(was, p->status, m * sizeof(*was));
				pace(opt->rate, (unsigned long long)(res->moved + res->not_moved) *
				     (unsigned long long)p->page_size, &t0);
				if (interrupt_signal()) {
					res->interrupted = true;
					ret = 0;
					goto out;
				}
				long r = numa_move_pages(pid, (unsigned long)m, p->pages, p->nodes, p->status,
							 MPOL_MF_MOVE);

				if (r < 0)
					goto out;
				/* a positive count: that many pages failed to migrate
				 * (busy: pinned, or referenced elsewhere), and the
				 * statuses need not say which: ask where they are */
				bool busy = r > 0;

				if (busy) {
					size_t all = p->n;

					p->n = m;
					if (query(p) < 0)
						goto out;
					p->n = all;
				}
				for (size_t j = 0; j < m; j++) {
					if (busy && p->status[j] >= 0 && p->status[j] != p->nodes[j])
						p->status[j] = -EBUSY;
					if (p->status[j] == p->nodes[j]) {
						res->moved++;
						res->after[was[j]]--;
						res->after[p->nodes[j]]++;
					} else {
						res->not_moved++;
						count_reason(res, p->status[j] < 0 ? -p->status[j] : EIO);
					}
				}
				if (opt->progress) {
					progress.done = res->moved + res->not_moved;
					progress.total = res->to_move;
					progress.seconds = seconds_since(&t0);
					opt->progress(&progress, opt->arg);
				}
			}
		}
		if (pass == 0) {
			spread_plan(count, nnodes, set, opt->weights, excess, deficit);
			for (int n = 0; n < nnodes; n++) {
				res->before[n] = res->after[n] = count[n];
				res->to_move += excess[n];
			}
			clock_gettime(CLOCK_MONOTONIC, &t0);
		}
	}
	ret = 0;
out:
	if (ret < 0)
		res->err = errno ? errno : EIO;
	free(rs.r);
	free(count);
	free(p);
	return ret;
}
