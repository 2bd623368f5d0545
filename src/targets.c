/*
 * targets.c - PIDs and PID:INODE into confirmed task handles.
 *
 * Identity rule: open the pidfd first, then ask about the PID or TID, then
 * (for a process) check that the pidfd's task is still alive.  A TID cannot
 * be reused while its task lives, so an answer given after the open, about
 * a task still alive, describes the task the pidfd holds.  For PID:INODE
 * the pidfd's inode must match (only meaningful on pidfs, Linux 6.9).
 *
 * Cost per thread: pidfd_open, one tgkill(TID, 0) probe, the caller's own
 * work, and a share of one close_range(2): pidfds are closed in batches.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "sys.h"
#include "targets.h"
#include "text.h"

/* The kernel's PID_MAX_LIMIT (4M); no PID can be larger. */
#define PID_LIMIT 4194304L
#define MAX_RESCANS 64
/* Pidfds waiting for one close_range(2); fewer when RLIMIT_NOFILE is low. */
#define CLOSE_BATCH_MAX 256

static int parse_decimal_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static int parse_one_pid(const char *s, size_t len, struct pid_spec *spec, char *why, size_t whylen)
{
	const char *colon = memchr(s, ':', len);
	size_t pidlen = colon ? (size_t)(colon - s) : len;
	char shown[80];
	uint64_t v;

	memset(spec, 0, sizeof(*spec));
	if (parse_decimal_u64(s, pidlen, &v) < 0 || v == 0 || v > PID_LIMIT) {
		snprintf(why, whylen, "invalid PID '%s': expected a number from 1 to %ld",
			 text_printable(s, pidlen, shown, sizeof(shown)), PID_LIMIT);
		return -1;
	}
	spec->pid = (pid_t)v;
	if (colon) {
		size_t inolen = len - pidlen - 1;

		if (parse_decimal_u64(colon + 1, inolen, &v) < 0 || v == 0) {
			snprintf(why, whylen, "invalid PID:INODE '%s': the inode must be a positive number",
				 text_printable(s, len, shown, sizeof(shown)));
			return -1;
		}
		spec->pinned = true;
		spec->inode = v;
	}
	return 0;
}

int targets_parse_pids(const char *arg, struct pid_spec **specs, size_t *n,
		       char *why, size_t whylen)
{
	size_t count = 1, added = 0;
	struct pid_spec *grown;
	const char *p = arg;

	for (const char *c = arg; *c; c++)
		if (*c == ',')
			count++;
	if (count > SIZE_MAX / sizeof(**specs) - *n) {
		snprintf(why, whylen, "too many PIDs");
		return -1;
	}
	grown = realloc(*specs, (*n + count) * sizeof(**specs));
	if (!grown) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	*specs = grown;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == 0) {
			char shown[80];

			snprintf(why, whylen, "empty PID in list '%s'",
				 text_printable(arg, (size_t)-1, shown, sizeof(shown)));
			return -1;
		}
		if (parse_one_pid(p, len, &grown[*n + added], why, whylen) < 0)
			return -1;
		added++;
		if (!comma)
			break;
		p = comma + 1;
	}
	*n += added;
	return 0;
}

/* ---- a set of TIDs already visited (open addressing) ------------------ */

struct tidset {
	pid_t *slots;		/* 0 = empty */
	size_t cap, used;	/* cap: 0 or a power of two */
};

/* Slots are a power of two, so a TID's first slot is a mask away. */
static size_t tidset_slot(pid_t tid, size_t cap)
{
	return (size_t)((uint32_t)tid * 2654435761u) & (cap - 1);
}

/* Room for n TIDs at most half full, in a power of two of slots. */
static int tidset_reserve(struct tidset *s, size_t n)
{
	size_t cap = s->cap ? s->cap : 256;
	pid_t *slots;

	while (cap / 2 < n)
		cap *= 2;
	if (cap == s->cap)
		return 0;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < s->cap; i++) {
		pid_t t = s->slots[i];
		size_t j;

		if (!t)
			continue;
		for (j = tidset_slot(t, cap); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = t;
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

/* Returns 1 if tid was added, 0 if already there, -1 out of memory. */
static int tidset_add(struct tidset *s, pid_t tid)
{
	size_t j;

	if ((s->used + 1) * 2 > s->cap && tidset_reserve(s, s->cap ? s->cap : 1) < 0)
		return -1;
	for (j = tidset_slot(tid, s->cap); s->slots[j]; j = (j + 1) & (s->cap - 1))
		if (s->slots[j] == tid)
			return 0;
	s->slots[j] = tid;
	s->used++;
	return 1;
}

/* ---- reading /proc ------------------------------------------------------ */

static int read_stat(pid_t pid, pid_t tid, struct proc_stat *st)
{
	char path[64], buf[1024];
	ssize_t len;

	if (tid == pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	len = sys_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return -1;
	if (procfs_parse_stat(buf, (size_t)len, st) < 0) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static pid_t owner_of(pid_t tid)
{
	char path[64], buf[4096], val[32];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	len = sys_read_file(path, buf, sizeof(buf));
	if (len < 0 || procfs_status_value(buf, (size_t)len, "Tgid", val, sizeof(val)) < 0)
		return 0;
	return (pid_t)atoi(val);
}

static void unknown_comm(struct proc_stat *st)
{
	memset(st, 0, sizeof(*st));
	strcpy(st->comm, "?");
}

/* Read on first use, while the visit holds the pidfd.  What was read is
 * the task's own if the task is alive after the read (its PID cannot have
 * been reused), or if it was a zombie (which keeps its PID until reaped);
 * otherwise the name might be a newcomer's and is dropped. */
const struct proc_stat *targets_task_stat(struct task_handle *h)
{
	if (!h->stat_read) {
		if (read_stat(h->pid, h->tid, &h->stat) < 0 ||
		    (h->pidfd >= 0 && h->stat.state != 'Z' && sys_pidfd_exited(h->pidfd) != 0))
			unknown_comm(&h->stat);
		h->stat_read = true;
	}
	return &h->stat;
}

bool targets_alive(const struct task_handle *h)
{
	if (h->pidfd >= 0)
		return sys_pidfd_exited(h->pidfd) == 0;
	return sys_is_thread_of(h->pid, h->tid);
}

/* ---- the process ---------------------------------------------------------- */

static void open_process(const struct pid_spec *spec, struct task_handle *h)
{
	memset(h, 0, sizeof(*h));
	h->pid = h->tid = spec->pid;
	h->pidfd = -1;
	unknown_comm(&h->stat);
	h->stat_read = true;	/* unknown unless a pidfd pins the process */

	h->pidfd = sys_pidfd_open(spec->pid, 0);
	if (h->pidfd < 0) {
		int err = errno;

		if (err == ESRCH) {
			h->problem = HANDLE_NO_SUCH_PROCESS;
			h->err = ESRCH;
		} else if ((err == EINVAL || err == ENOENT) && (h->owner = owner_of(spec->pid)) > 0 && h->owner != spec->pid) {
			h->problem = HANDLE_NOT_A_PROCESS;
		} else {
			h->problem = HANDLE_OPEN_FAILED;
			h->err = err;
		}
		return;
	}
	if (spec->pinned) {
		bool unique;

		if (sys_pidfd_inode(h->pidfd, &h->inode, &unique) < 0) {
			h->problem = HANDLE_OPEN_FAILED;
			h->err = errno;
			return;
		}
		if (!unique) {
			h->problem = HANDLE_CANNOT_PIN;
			return;
		}
		if (h->inode != spec->inode) {
			h->problem = HANDLE_INODE_MISMATCH;
			return;
		}
	}
	/* its name is read when a message needs it: /proc/PID/stat of a
	 * process sums over all its threads, a cost a silent success skips */
	h->stat_read = false;
	switch (sys_pidfd_exited(h->pidfd)) {
	case 0:
		break;
	case 1:
		h->problem = HANDLE_GONE;
		break;
	default:
		h->problem = HANDLE_OPEN_FAILED;
		h->err = errno;
	}
}

static void close_handle(struct task_handle *h)
{
	if (h->pidfd >= 0)
		close(h->pidfd);
	h->pidfd = -1;
}

/* ---- closing pidfds in batches ------------------------------------------- */

struct closer {
	int fds[CLOSE_BATCH_MAX];
	size_t used, cap;
};

/* A quarter of the descriptors left under the soft limit, at most
 * CLOSE_BATCH_MAX: the visitor keeps room for what it opens itself. */
static void closer_init(struct closer *c)
{
	struct rlimit lim;
	size_t cap = CLOSE_BATCH_MAX;

	c->used = 0;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
	    lim.rlim_cur / 4 < cap)
		cap = (size_t)(lim.rlim_cur / 4);
	c->cap = cap ? cap : 1;
}

static void closer_flush(struct closer *c)
{
	sys_close_fds(c->fds, c->used);
	c->used = 0;
}

/* Take over h's pidfd, to be closed with the next batch. */
static void closer_take(struct closer *c, struct task_handle *h)
{
	if (h->pidfd < 0)
		return;
	c->fds[c->used++] = h->pidfd;
	h->pidfd = -1;
	if (c->used == c->cap)
		closer_flush(c);
}

/* ---- one thread ------------------------------------------------------------ */

/* How threads are opened and confirmed, decided once per walk. */
struct thread_rules {
	bool thread_pidfds;	/* pidfd_open takes PIDFD_THREAD (Linux 6.9) */
	bool by_signal;		/* confirm with tgkill(PID, TID, 0); else faccessat */
	int taskdir;		/* /proc/PID/task, during a scan */
};

static bool is_member(const struct thread_rules *m, pid_t pid, pid_t tid)
{
	char name[16];

	if (m->by_signal)
		return sys_is_thread_of(pid, tid);
	snprintf(name, sizeof(name), "%d", (int)tid);
	return faccessat(m->taskdir, name, F_OK, 0) == 0;
}

/* Open thread tid of the process and confirm it: pidfd first, then tid
 * must be a thread of the process.  If the pidfd's thread died and its
 * TID went to another thread of the same process, the call on the stale
 * pidfd fails with ESRCH and the newcomer is met by the next scan; a TID
 * taken by another process fails the check.  Name and flags are read
 * only when needed. */
static void open_thread(const struct task_handle *process, const struct thread_rules *m,
			pid_t tid, struct task_handle *h)
{
	memset(h, 0, sizeof(*h));
	h->pid = process->pid;
	h->tid = tid;
	h->per_thread = true;
	h->pidfd = -1;

	if (!m->thread_pidfds) {
		h->problem = HANDLE_NO_THREAD_PIDFD;
	} else {
		h->pidfd = sys_pidfd_open(tid, PIDFD_THREAD);
		if (h->pidfd < 0) {
			int err = errno;

			/* EINVAL: the TID was found, then lost its task before the
			 * pidfd was made (the thread exited meanwhile) */
			if (err == ESRCH || err == EINVAL) {
				h->problem = HANDLE_GONE;
				return;
			}
			h->problem = HANDLE_OPEN_FAILED;
			h->err = err;
		}
	}
	if (!is_member(m, process->pid, tid)) {
		close_handle(h);
		h->problem = HANDLE_GONE;
	}
}

/* ---- listing /proc/PID/task -------------------------------------------------
 *
 * The kernel lists a process's threads in the order of its thread list,
 * where a new thread is always added at the end.  A directory position is
 * an index into that list: when a read resumes by position after threads
 * before it have exited, the list has shifted and threads are skipped.
 *
 * A pass is "clean" when the kernel walked the list in one go, from where
 * the pass started to the end: one getdents64 call returned it all (the
 * next returned nothing), and the walk did not stop early at a thread that
 * was exiting (the last thread listed is still alive, and no position was
 * spent on a thread that vanished after it).  After a clean pass over the
 * whole list, and any number of clean passes after it, every thread not
 * yet seen is newer than every thread seen, so it sits after them at the
 * end of the list.  The next pass then reads only from a little before
 * where the last one ended, and holds if the first thread it meets there
 * was seen before: every thread after it is read.  After a pass that is
 * not clean, or that does not hold, the next pass reads the whole list.
 */

/* No entry of /proc/PID/task is longer: an 8-byte-aligned dirent64 with a
 * name of 7 digits (PID_LIMIT) takes 32 bytes. */
#define TASK_DIRENT_MAX 32
/* Entries re-read before the end of the last pass: that many threads
 * already seen may exit and shift the list, and the next pass holds. */
#define TAIL_OVERLAP 64
#define LISTING_BUF_MIN 32768		/* as glibc's readdir */
#define LISTING_BUF_MAX (4u << 20)

struct task_listing {
	int fd;			/* /proc/PID/task */
	char *buf;
	size_t cap;
	size_t threads;		/* how many it had when opened, as far as known */
};

/* What one pass found. */
struct pass_result {
	long fresh;		/* threads not seen before, each visited */
	bool clean;		/* the kernel walked to the end in one go */
	bool anchored;		/* its first thread had been seen before */
	off_t end;		/* directory position after its last entry */
};

static int listing_open(pid_t pid, struct task_listing *l)
{
	char path[64];
	struct stat st;
	size_t want = LISTING_BUF_MIN;

	l->buf = NULL;
	l->threads = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	l->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->fd < 0)
		return -1;
	/* the directory's link count grows by one per thread: room for them
	 * and for some born meanwhile, so that one call reads them all */
	if (fstat(l->fd, &st) == 0 && st.st_nlink < LISTING_BUF_MAX / TASK_DIRENT_MAX) {
		l->threads = (size_t)st.st_nlink;
		want = (l->threads + l->threads / 8 + TAIL_OVERLAP) * TASK_DIRENT_MAX;
	}
	if (want < LISTING_BUF_MIN)
		want = LISTING_BUF_MIN;
	if (want > LISTING_BUF_MAX)
		want = LISTING_BUF_MAX;
	l->cap = want;
	l->buf = malloc(l->cap);
	if (!l->buf) {
		close(l->fd);
		l->fd = -1;
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void listing_close(struct task_listing *l)
{
	if (l->fd >= 0)
		close(l->fd);
	free(l->buf);
	l->fd = -1;
	l->buf = NULL;
}

/* A larger buffer for the next pass, when this one did not fit. */
static void listing_grow(struct task_listing *l)
{
	char *grown;

	if (l->cap >= LISTING_BUF_MAX)
		return;
	grown = realloc(l->buf, l->cap * 2);
	if (grown) {
		l->buf = grown;
		l->cap *= 2;
	}
}

/* Read entries into l->buf until the end of the directory or until it is
 * nearly full.  Returns the bytes read, or -1; *calls counts the reads
 * that returned entries, *eof is set at the end. */
static ssize_t listing_fill(struct task_listing *l, int *calls, bool *eof)
{
	size_t used = 0;

	*eof = false;
	while (l->cap - used >= TASK_DIRENT_MAX) {
		ssize_t got = getdents64(l->fd, l->buf + used, l->cap - used);

		if (got < 0)
			return -1;
		if (got == 0) {
			*eof = true;
			break;
		}
		(*calls)++;
		used += (size_t)got;
	}
	return (ssize_t)used;
}

/* The TID an entry names, or 0 for "." and "..".  At most 7 digits
 * (PID_LIMIT): no overflow to guard against. */
static pid_t tid_of_name(const char *name)
{
	long v = 0;
	int i;

	for (i = 0; name[i] >= '0' && name[i] <= '9'; i++) {
		if (i == 7)
			return 0;
		v = v * 10 + (name[i] - '0');
	}
	return name[i] == '\0' && v <= PID_LIMIT ? (pid_t)v : 0;
}

/* The last entry of a pass, to tell whether the walk reached the end. */
struct last_entry {
	pid_t tid;
	off_t pos, next;	/* its position, and the position after it */
	bool fresh, gone;
};

/* Visit every thread not seen before among the entries in buf. */
static int visit_entries(const struct task_handle *process, struct tidset *seen,
			 struct thread_rules *rules, struct closer *closer,
			 const char *buf, size_t len, off_t *pos, bool *first,
			 struct last_entry *last, struct pass_result *res,
			 task_visit_fn visit, void *arg)
{
	for (size_t at = 0; at < len;) {
		const struct dirent64 *de = (const void *)(buf + at);
		struct task_handle h;
		pid_t tid = tid_of_name(de->d_name);
		off_t here = *pos;
		int added;

		at += de->d_reclen;
		*pos = de->d_off;
		res->end = de->d_off;
		if (!tid)
			continue;
		added = tidset_add(seen, tid);
		if (added < 0) {
			errno = ENOMEM;
			return -1;
		}
		if (*first)
			res->anchored = !added;
		*first = false;
		*last = (struct last_entry){ .tid = tid, .pos = here, .next = de->d_off, .fresh = added };
		if (!added)
			continue;
		res->fresh++;
		if (tid == process->pid) {
			h = *process;	/* the leader: the process pidfd itself */
			h.per_thread = true;
			visit(&h, arg);
			continue;
		}
		open_thread(process, rules, tid, &h);
		last->gone = h.problem == HANDLE_GONE;
		visit(&h, arg);
		closer_take(closer, &h);
	}
	return 0;
}

/* One pass over /proc/PID/task from directory position from: visit every
 * thread not seen before.  Returns 0, or -1 (errno set). */
static int scan_threads(const struct task_handle *process, struct tidset *seen,
			struct thread_rules *rules, struct closer *closer,
			struct task_listing *l, off_t from,
			task_visit_fn visit, void *arg, struct pass_result *res)
{
	struct last_entry last = { 0 };
	bool first = true, eof = false;
	off_t pos = from;
	int calls = 0, fills = 0;

	memset(res, 0, sizeof(*res));
	res->end = from;
	if (lseek(l->fd, from, SEEK_SET) < 0)
		return -1;
	rules->taskdir = l->fd;
	while (!eof) {
		ssize_t len = listing_fill(l, &calls, &eof);

		if (len < 0)
			return -1;
		fills++;
		if (visit_entries(process, seen, rules, closer, l->buf, (size_t)len, &pos,
				  &first, &last, res, visit, arg) < 0)
			return -1;
	}
	if (fills > 1)
		listing_grow(l);
	/* one walk, which ended because the list did: not for want of room
	 * (it fit in one fill, with room left for the read that found the
	 * end), its last thread is alive (a walk stops after a thread found
	 * exiting), no position went to a thread that vanished unlisted */
	res->clean = calls == 1 && fills == 1 && last.tid && last.next == last.pos + 1 &&
		     (last.fresh ? !last.gone :
		      last.tid == process->pid || is_member(rules, process->pid, last.tid));
	return 0;
}

int targets_walk(const struct pid_spec *spec, bool all_threads,
		 task_visit_fn visit, void *arg)
{
	struct tidset seen = { 0 };
	struct task_handle process;
	struct thread_rules rules = { .taskdir = -1 };
	struct task_listing listing = { .fd = -1 };
	struct closer closer;
	off_t from = 0;
	int ret = 0;

	closer_init(&closer);
	open_process(spec, &process);
	if (process.problem != HANDLE_OK || !all_threads) {
		visit(&process, arg);
		goto out;
	}
	rules.thread_pidfds = sys_thread_pidfds_supported();
	rules.by_signal = sys_null_signal_works();
	for (int pass = 0;; pass++) {
		struct pass_result res;

		if (pass == MAX_RESCANS) {
			struct task_handle h = process;

			h.problem = HANDLE_UNSETTLED;
			visit(&h, arg);
			break;
		}
		if ((listing.fd < 0 && (listing_open(process.pid, &listing) < 0 ||
					tidset_reserve(&seen, listing.threads) < 0)) ||
		    scan_threads(&process, &seen, &rules, &closer, &listing, from, visit, arg, &res) < 0) {
			struct task_handle h = process;
			int err = errno;

			if (err == ENOMEM) {
				ret = -1;
				break;
			}
			h.problem = sys_pidfd_exited(process.pidfd) == 1 ? HANDLE_GONE : HANDLE_OPEN_FAILED;
			if (h.problem == HANDLE_OPEN_FAILED && (err == ENOENT || err == EACCES))
				h.problem = HANDLE_PROC_HIDDEN;
			h.err = err;
			visit(&h, arg);
			break;
		}
		/* done when a whole listing, or a pass over the end of the list
		 * that holds (see above), finds no new thread */
		if (res.fresh == 0 && (from == 0 || (res.clean && res.anchored)))
			break;
		if (sys_pidfd_exited(process.pidfd) != 0)
			break;
		if (res.clean && (from == 0 || res.anchored))
			from = res.end - 1 - TAIL_OVERLAP > 2 ? res.end - 1 - TAIL_OVERLAP : 2;
		else
			from = 0;
	}
out:
	listing_close(&listing);
	closer_flush(&closer);
	close_handle(&process);
	free(seen.slots);
	return ret;
}

/* ---- cgroups ------------------------------------------------------------------ */

bool targets_is_cgroup(const char *dir)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/cgroup.procs", dir);

	return n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0;
}

/* One pass over cgroup.procs: walk every process not seen before.
 * Returns the number of new processes, or -1 (errno set). */
static long scan_cgroup(const char *path, struct tidset *seen, bool all_threads,
			task_visit_fn visit, void *arg)
{
	char line[32];
	long fresh = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct pid_spec spec = { 0 };
		int added;

		spec.pid = (pid_t)atoi(line);
		if (spec.pid <= 0)
			continue;
		added = tidset_add(seen, spec.pid);
		if (added < 0 || (added && targets_walk(&spec, all_threads, visit, arg) < 0)) {
			fclose(f);
			errno = ENOMEM;
			return -1;
		}
		fresh += added;
	}
	if (ferror(f)) {
		fclose(f);
		errno = EIO;
		return -1;
	}
	fclose(f);
	return fresh;
}

int targets_walk_cgroup(const char *dir, bool all_threads, task_visit_fn visit, void *arg)
{
	struct tidset seen = { 0 };
	char path[4096];
	int ret = 0;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (int pass = 0; pass < MAX_RESCANS; pass++) {
		long fresh = scan_cgroup(path, &seen, all_threads, visit, arg);

		if (fresh < 0) {
			ret = -1;
			break;
		}
		if (fresh == 0)
			break;
	}
	free(seen.slots);
	return ret;
}
