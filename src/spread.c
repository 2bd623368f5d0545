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
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "interrupt.h"
#include "procfs.h"
#include "spread.h"

#define BATCH 1024	/* pages per move_pages(2) call */

/* The mappings whose pages move: private anonymous memory (no file
 * behind it, not the kernel's [vdso]/[vvar]/[vsyscall]).  Shared and
 * file pages are other processes' too: only with opt->shared, and then
 * with MPOL_MF_MOVE_ALL, which moves pages that others map as well. */
struct range {
	uintptr_t start, end;
	bool known;	/* numa_maps shows it, not as hugetlbfs */
};

struct ranges {
	struct range *r;
	size_t n, cap;
	bool shared;	/* shared and file mappings too */
	size_t cursor;	/* numa_maps_known's place */
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
	rs->r[rs->n++] = (struct range){ start, end, false };
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
	if (fields < 4 || (!rs->shared && (perms[3] != 'p' || inode != 0)))
		return 0;
	if (fields == 5 && path[0] == '[' && strcmp(path, "[heap]") != 0 && strcmp(path, "[stack]") != 0)
		return 0;	/* [vdso], [vvar], a named anonymous mapping's owner knows */
	if (fields == 5 && path[0] != '/' && path[0] != '[')
		return 0;	/* (a name of no file) */
	return add_range(rs, start, end) < 0 ? -1 : 0;
}

/* hugetlbfs mappings stay where they are: their pages are 2 MiB or
 * 1 GiB, which a plan in base pages and THP blocks would send to several
 * nodes at once.  Only --migrate-shared can meet one (a private one has a
 * hugetlbfs inode too); numa_maps marks them "huge" (a file's name cannot
 * make the word: numa_maps escapes its blanks).  A mapping whose numa_maps
 * line is not read (the target can name a file so that the line outgrows
 * the reader's 8 KiB, or map and unmap meanwhile) is not known not to be
 * one, and stays too. */
static int numa_maps_known(const char *line, size_t len, void *arg)
{
	struct ranges *rs = arg;
	struct numa_maps_line l;

	if (procfs_parse_numa_maps_line(line, len, &l) < 0 || l.huge)
		return 0;
	/* both files go up the address space */
	while (rs->cursor < rs->n && rs->r[rs->cursor].start < l.start)
		rs->cursor++;
	if (rs->cursor < rs->n && rs->r[rs->cursor].start == l.start)
		rs->r[rs->cursor].known = true;
	return 0;
}

static void keep_known(struct ranges *rs)
{
	size_t k = 0;

	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].known)
			rs->r[k++] = rs->r[i];
	rs->n = k;
}

/* A batch of pages and where they are (move_pages' query); the ones that
 * move, where to, and where they were. */
struct pass {
	void *pages[BATCH];
	int status[BATCH];
	size_t n;
	void *mv[BATCH];
	int to[BATCH];
	int was[BATCH];
	int got[BATCH];
	size_t m;
	long page_size;
	size_t block;		/* pages in a huge page; 1 without THP */
	int pagemap;		/* /proc/PID/pagemap for PAGEMAP_SCAN, or -1 */
	bool huge[BATCH];	/* in a huge page (PAGEMAP_SCAN), or may be */
};

static int query(pid_t pid, size_t n, void **pages, int *status)
{
	if (numa_move_pages(pid, (unsigned long)n, pages, NULL, status, 0) < 0)
		return -1;
	return 0;
}

/* The size of a transparent huge page in pages, 1 where the kernel has
 * none (no /sys/kernel/mm/transparent_hugepage). */
static size_t huge_block(long page_size)
{
	char buf[32];
	unsigned long long sz;
	char *end;

	if (procfs_read_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", buf, sizeof(buf)) < 0)
		return 1;
	sz = strtoull(buf, &end, 10);
	if (end == buf || sz < (unsigned long long)page_size || sz > (1ULL << 30))
		return 1;
	return (size_t)(sz / (unsigned long long)page_size);
}

/* Mark which pages of the batch are in a huge page: PAGEMAP_SCAN (Linux
 * 6.7) says so; without it (or past where it got), a whole block on one
 * node may be one, and is marked. */
static void mark_huge(struct pass *p)
{
	struct pmp_page_region reg[8];
	struct pmp_pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = (uintptr_t)p->pages[0],
		.end = (uintptr_t)p->pages[p->n - 1] + (uintptr_t)p->page_size,
		.vec = (uintptr_t)reg,
		.vec_len = sizeof(reg) / sizeof(reg[0]),
		.category_mask = PMP_PAGE_IS_HUGE,
		.return_mask = PMP_PAGE_IS_HUGE,
	};
	uintptr_t known = arg.start;
	long nreg = -1;

	memset(p->huge, 0, p->n * sizeof(p->huge[0]));
	if (p->block <= 1)
		return;
	if (p->pagemap >= 0) {
		nreg = ioctl(p->pagemap, PMP_PAGEMAP_SCAN, &arg);
		if (nreg < 0 && (errno == ENOTTY || errno == EINVAL)) {
			(void)close(p->pagemap);	/* not on this kernel */
			p->pagemap = -1;
		}
	}
	if (nreg >= 0) {
		known = (uintptr_t)arg.walk_end;
		for (long r = 0; r < nreg; r++)
			for (size_t j = 0; j < p->n; j++)
				if ((uintptr_t)p->pages[j] >= reg[r].start && (uintptr_t)p->pages[j] < reg[r].end)
					p->huge[j] = true;
	}
	for (size_t j = 0; j < p->n;) {
		size_t k = j + 1;

		if ((uintptr_t)p->pages[j] < known || (uintptr_t)p->pages[j] % (p->block * (size_t)p->page_size)) {
			j++;
			continue;
		}
		while (k < p->n && k - j < p->block && p->status[k] == p->status[j])
			k++;
		if (k - j == p->block && p->status[j] >= 0)
			for (size_t i = j; i < k; i++)
				p->huge[i] = true;
		j = k;
	}
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

/* The node with the most room left, or -1 if none has any. */
static int roomiest(int nnodes, const long *deficit)
{
	int to = -1;

	for (int c = 0; c < nnodes; c++)
		if (deficit[c] > 0 && (to < 0 || deficit[c] > deficit[to]))
			to = c;
	return to;
}

static void take(long *v, long k)
{
	*v = *v > k ? *v - k : 0;
}

int spread_assign(int from, long g, enum spread_unit unit, int nnodes, long *excess, long *deficit,
		  struct spread_piece *out)
{
	long left = g < excess[from] ? g : excess[from];
	int n = 0, to;

	if (unit != SPREAD_PAGES) {
		long need = unit == SPREAD_HUGE_FIT ? g : (g + 1) / 2;

		to = roomiest(nnodes, deficit);
		if (excess[from] < (g + 1) / 2 || to < 0 || deficit[to] < need)
			return 0;
		out[0] = (struct spread_piece){ .to = to, .pages = g };
		take(&excess[from], g);
		take(&deficit[to], g);
		return 1;
	}
	while (left > 0 && n < nnodes && (to = roomiest(nnodes, deficit)) >= 0) {
		long k = left < deficit[to] ? left : deficit[to];

		out[n++] = (struct spread_piece){ .to = to, .pages = k };
		take(&excess[from], k);
		take(&deficit[to], k);
		left -= k;
	}
	return n;
}

/* Plan the batch's moves into p->mv/to/was: block by block, the pages on
 * each node over its share, by spread_assign: in round 1 the huge pages
 * that fit, in round 2 the small pages, in round 3 the huge pages that
 * fit by half. */
static void plan_batch(struct pass *p, int round, int nnodes, long *excess, long *deficit)
{
	struct spread_piece piece[SPREAD_MAX_NODES];
	size_t bytes = p->block * (size_t)p->page_size;

	p->m = 0;
	for (size_t j0 = 0; j0 < p->n;) {
		/* the block of pages [j0, j1): up to the next aligned boundary */
		uintptr_t end = ((uintptr_t)p->pages[j0] / bytes + 1) * bytes;
		size_t j1 = j0;

		while (j1 < p->n && (uintptr_t)p->pages[j1] < end)
			j1++;
		for (int from = 0; from < nnodes; from++) {
			long g = 0;
			bool whole = false;
			int np;

			if (excess[from] == 0)
				continue;
			for (size_t j = j0; j < j1; j++)
				if (p->status[j] == from) {
					g++;
					whole = p->huge[j];
				}
			if (g == 0)
				continue;
			if (whole != (round != 2))
				continue;
			np = spread_assign(from, g, !whole ? SPREAD_PAGES : round == 1 ? SPREAD_HUGE_FIT : SPREAD_HUGE_NEAR,
					   nnodes, excess, deficit, piece);
			for (size_t j = j0, at = 0; j < j1 && (int)at < np; j++) {
				if (p->status[j] != from)
					continue;
				p->mv[p->m] = p->pages[j];
				p->to[p->m] = piece[at].to;
				p->was[p->m] = from;
				p->m++;
				if (--piece[at].pages == 0)
					at++;
			}
		}
		j0 = j1;
	}
}

/* One run over a process: its mappings, the batch in hand, the counts
 * and the plan, and the clock the rate keeps to. */
struct run {
	pid_t pid;
	const struct spread_options *opt;
	struct spread_result *res;
	struct ranges rs;
	struct pass *p;
	int nnodes;
	long *count, *excess, *deficit;
	struct timespec t0;
};

enum { RUN_ERROR = -1, RUN_OK = 0, RUN_INTERRUPTED = 1 };

/* The mappings whose pages move, and /proc/PID/pagemap for mark_huge. */
static int read_ranges(struct run *r)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)r->pid);
	r->rs.shared = r->opt->shared;
	if (procfs_each_line(path, maps_line, &r->rs) < 0)
		return -1;
	if (r->rs.shared) {
		snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)r->pid);
		if (procfs_each_line(path, numa_maps_known, &r->rs) < 0)
			return -1;
		keep_known(&r->rs);
	}
	if (r->p->block > 1) {
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)r->pid);
		r->p->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	}
	return 0;
}

static int run_begin(struct run *r)
{
	r->nnodes = numa_max_node() + 1;
	if (r->nnodes > SPREAD_MAX_NODES)
		r->nnodes = SPREAD_MAX_NODES;	/* no machine has more yet; the rest is not counted */
	r->res->nnodes = r->nnodes;
	r->p = calloc(1, sizeof(*r->p));
	r->count = calloc((size_t)r->nnodes * 3, sizeof(long));
	if (!r->p || !r->count) {
		errno = ENOMEM;
		return -1;
	}
	r->excess = r->count + r->nnodes;
	r->deficit = r->count + 2 * r->nnodes;
	r->p->page_size = sysconf(_SC_PAGESIZE);
	r->p->block = huge_block(r->p->page_size);
	if (r->p->block > BATCH)	/* 64 KiB pages: 512 MiB huge pages, planned page by page */
		r->p->block = 1;
	r->p->pagemap = -1;
	return read_ranges(r);
}

static void run_end(struct run *r)
{
	if (r->p && r->p->pagemap >= 0)
		(void)close(r->p->pagemap);
	free(r->rs.r);
	free(r->count);
	free(r->p);
}

/* The next batch of the range from *a on.  A batch ends on a huge page's
 * boundary, so that none is planned in two halves. */
static void fill_batch(struct pass *p, const struct range *rg, uintptr_t *a)
{
	uintptr_t bytes = p->block * (uintptr_t)p->page_size;
	uintptr_t stop = *a + BATCH * (uintptr_t)p->page_size;

	if (stop / bytes * bytes > *a)
		stop = stop / bytes * bytes;
	p->n = 0;
	while (*a < rg->end && *a < stop) {
		p->pages[p->n++] = (void *)*a;
		*a += (uintptr_t)p->page_size;
	}
}

static void count_batch(struct run *r)
{
	for (size_t j = 0; j < r->p->n; j++)
		if (r->p->status[j] >= 0 && r->p->status[j] < r->nnodes) {
			r->count[r->p->status[j]]++;
			r->res->pages++;
		}
}

/* After pass 0: each node's excess and deficit, the pages to move. */
static void plan_run(struct run *r, const struct bitmask *set)
{
	spread_plan(r->count, r->nnodes, set, r->opt->weights, r->excess, r->deficit);
	for (int n = 0; n < r->nnodes; n++) {
		r->res->before[n] = r->res->after[n] = r->count[n];
		r->res->to_move += r->excess[n];
	}
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
}

/* Count where the moved pages went.  A positive count from move_pages:
 * that many pages failed to migrate, and the statuses need not say which.
 * EBUSY: pinned, or the rest of a huge page whose first page took it
 * along.  Either way, ask where they are now. */
static int account_moves(struct run *r, long moved)
{
	struct pass *p = r->p;
	bool requery = moved > 0;

	for (size_t j = 0; j < p->m && !requery; j++)
		requery = p->got[j] == -EBUSY;
	if (requery && query(r->pid, p->m, p->mv, p->got) < 0)
		return -1;
	for (size_t j = 0; j < p->m; j++) {
		if (requery && p->got[j] >= 0 && p->got[j] != p->to[j])
			p->got[j] = -EBUSY;
		if (p->got[j] == p->to[j]) {
			r->res->moved++;
			r->res->after[p->was[j]]--;
			r->res->after[p->to[j]]++;
		} else {
			r->res->not_moved++;
			count_reason(r->res, p->got[j] < 0 ? -p->got[j] : EIO);
		}
	}
	return 0;
}

/* Plan the batch's moves (round `pass`), keep to the rate, move them. */
static int move_batch(struct run *r, int pass)
{
	struct pass *p = r->p;
	long moved;

	mark_huge(p);
	plan_batch(p, pass, r->nnodes, r->excess, r->deficit);
	if (p->m == 0)
		return RUN_OK;
	pace(r->opt->rate, (unsigned long long)(r->res->moved + r->res->not_moved) *
	     (unsigned long long)p->page_size, &r->t0);
	if (interrupt_signal())
		return RUN_INTERRUPTED;
	moved = numa_move_pages(r->pid, (unsigned long)p->m, p->mv, p->to, p->got,
				r->opt->shared ? MPOL_MF_MOVE_ALL : MPOL_MF_MOVE);
	if (moved < 0 || account_moves(r, moved) < 0)
		return RUN_ERROR;
	if (r->opt->progress) {
		struct spread_progress progress = {
			.pid = r->pid,
			.done = r->res->moved + r->res->not_moved,
			.total = r->res->to_move,
			.seconds = seconds_since(&r->t0),
		};

		r->opt->progress(&progress, r->opt->arg);
	}
	return RUN_OK;
}

/* One pass over every range, batch by batch: pass 0 counts, the others
 * move.  A page the target freed or faulted meanwhile is only a miscount. */
static int run_pass(struct run *r, int pass)
{
	for (size_t i = 0; i < r->rs.n; i++) {
		for (uintptr_t a = r->rs.r[i].start; a < r->rs.r[i].end;) {
			int st;

			fill_batch(r->p, &r->rs.r[i], &a);
			if (interrupt_signal())
				return RUN_INTERRUPTED;
			if (query(r->pid, r->p->n, r->p->pages, r->p->status) < 0)
				return RUN_ERROR;
			if (pass == 0) {
				count_batch(r);
				continue;
			}
			st = move_batch(r, pass);
			if (st != RUN_OK)
				return st;
		}
	}
	return RUN_OK;
}

int spread_process(pid_t pid, const struct bitmask *set, const struct spread_options *opt,
		   struct spread_result *res)
{
	struct run r = { .pid = pid, .opt = opt, .res = res };
	int st = RUN_OK;

	memset(res, 0, sizeof(*res));
	if (run_begin(&r) < 0)
		st = RUN_ERROR;
	/* pass 0 counts where the pages are, passes 1-3 move the excess
	 * (plan_batch's rounds; without huge pages, pass 2 alone) */
	for (int pass = 0; pass < 4 && st == RUN_OK; pass++) {
		if (pass != 0 && pass != 2 && r.p->block <= 1)
			continue;
		if (pass != 0 && roomiest(r.nnodes, r.deficit) < 0)
			break;	/* every share met: a pass would only query */
		st = run_pass(&r, pass);
		if (st == RUN_OK && pass == 0)
			plan_run(&r, set);
	}
	res->interrupted = st == RUN_INTERRUPTED;
	if (st == RUN_ERROR)
		res->err = errno ? errno : EIO;
	run_end(&r);
	return st == RUN_ERROR ? -1 : 0;
}
