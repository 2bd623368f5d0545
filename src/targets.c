/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * targets.c - a PID or PID:INODE into confirmed task handles: the process,
 * or with -a each of its threads, each visited once.
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
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "compat.h"
#include "interrupt.h"
#include "sys.h"
#include "targets.h"
#include "tasklist.h"
#include "tidset.h"

#define MAX_RESCANS 64
/* Pidfds waiting for one close_range(2); fewer when RLIMIT_NOFILE is low. */
#define CLOSE_BATCH_MAX 256
/* Entries re-read before the end of the last pass: that many threads
 * already seen may exit and shift the list, and the next pass holds. */
#define TAIL_OVERLAP 64

/* ---- a task's /proc ------------------------------------------------------- */

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
		if (procfs_task_stat(h->pid, h->tid, &h->stat) < 0 ||
		    (h->pidfd >= 0 && h->stat.state != 'Z' && sys_pidfd_exited(h->pidfd) != 0))
			unknown_comm(&h->stat);
		h->stat_read = true;
	}
	return &h->stat;
}

bool targets_is_kernel_thread(struct task_handle *h)
{
	return (targets_task_stat(h)->flags & PMP_PF_KTHREAD) != 0;
}

bool targets_alive(const struct task_handle *h)
{
	if (h->pidfd >= 0)
		return sys_pidfd_exited(h->pidfd) == 0;
	return sys_is_thread_of(h->pid, h->tid);
}

enum failure targets_proc_failure(const struct task_handle *h, int err)
{
	if ((err == ENOENT || err == EACCES) && targets_alive(h))
		/* without hidepid, EACCES is the ptrace check of numa_maps */
		return err == EACCES && !procfs_hides_pids() ? FAIL_PROC_DENIED : FAIL_PROC_HIDDEN;
	if (err == ENOENT || err == ESRCH)
		return FAIL_EXITED;
	return FAIL_ERRNO;
}

struct failure_subject targets_subject(const struct task_handle *h)
{
	return (struct failure_subject){
		.pid = h->pid, .tid = h->tid,
		.per_thread = h->per_thread && h->problem != FAIL_UNSETTLED,
		.owner = h->owner, .inode = h->inode,
	};
}

bool targets_comm_known(struct task_handle *h)
{
	return targets_task_stat(h)->state != 0;	/* every stat line has a state */
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
		struct proc_status st;
		int err = errno;

		if (err == ESRCH) {
			h->problem = FAIL_NO_SUCH_PROCESS;
			h->err = ESRCH;
		} else if ((err == EINVAL || err == ENOENT) && procfs_task_status(0, spec->pid, &st) == 0 &&
			   st.tgid > 0 && st.tgid != spec->pid) {
			h->problem = FAIL_NOT_A_PROCESS;
			h->owner = st.tgid;
		} else {
			h->problem = FAIL_ERRNO;
			h->err = err;
		}
		return;
	}
	if (spec->pinned) {
		bool unique;

		if (sys_pidfd_inode(h->pidfd, &h->inode, &unique) < 0) {
			h->problem = FAIL_ERRNO;
			h->err = errno;
			return;
		}
		if (!unique) {
			h->problem = FAIL_CANNOT_PIN;
			return;
		}
		if (h->inode != spec->inode) {
			h->problem = FAIL_INODE_MISMATCH;
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
		h->problem = FAIL_EXITED;
		h->err = ESRCH;
		break;
	default:
		h->problem = FAIL_ERRNO;
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

/* ---- the walk over a process's threads ------------------------------------ */

struct walk {
	struct task_handle process;	/* the leader, with the process pidfd */
	bool thread_pidfds;		/* pidfd_open takes PIDFD_THREAD (Linux 6.9) */
	bool by_signal;			/* confirm with tgkill(PID, TID, 0); else faccessat */
	struct tidset seen;
	struct task_listing listing;
	struct closer closer;
	const struct task_visitor *v;
	struct task_handle batch[TARGETS_BATCH];	/* handles not yet handed over */
	size_t nbatch, batch_cap;
};

/* Hand the batch over, then let its pidfds go (but the leader's: it is
 * the process pidfd, closed with the walk). */
static void flush_batch(struct walk *w)
{
	if (!w->nbatch)
		return;
	w->v->tasks(w->batch, w->nbatch, w->v->arg);
	for (size_t i = 0; i < w->nbatch; i++)
		if (w->batch[i].tid != w->process.pid)
			closer_take(&w->closer, &w->batch[i]);
	w->nbatch = 0;
}

/* A handle of the process as a whole (a failure of the walk): alone. */
static void visit_alone(const struct walk *w, struct task_handle *h)
{
	if (w->v->tasks)
		w->v->tasks(h, 1, w->v->arg);
	else
		w->v->task(h, w->v->arg);
}

/* Visit h now, or with the next batch; its pidfd is the walk's to close
 * afterwards (but the leader's). */
static void visit(struct walk *w, struct task_handle *h)
{
	if (!w->v->tasks) {
		w->v->task(h, w->v->arg);
		if (h->tid != w->process.pid)
			closer_take(&w->closer, h);
		return;
	}
	w->batch[w->nbatch++] = *h;
	if (w->nbatch == w->batch_cap)
		flush_batch(w);
}

static bool is_member(const struct walk *w, pid_t tid)
{
	char name[16];

	if (w->by_signal)
		return sys_is_thread_of(w->process.pid, tid);
	snprintf(name, sizeof(name), "%d", (int)tid);
	return faccessat(w->listing.fd, name, F_OK, 0) == 0;
}

/* Open thread tid of the process and confirm it: pidfd first, then tid
 * must be a thread of the process.  If the pidfd's thread died and its
 * TID went to another thread of the same process, the call on the stale
 * pidfd fails with ESRCH and the newcomer is met by the next scan; a TID
 * taken by another process fails the check.  Name and flags are read
 * only when needed. */
static void open_thread(const struct walk *w, pid_t tid, struct task_handle *h)
{
	memset(h, 0, sizeof(*h));
	h->pid = w->process.pid;
	h->tid = tid;
	h->per_thread = true;
	h->pidfd = -1;

	if (!w->thread_pidfds) {
		h->problem = FAIL_NO_THREAD_PIDFD;
	} else {
		h->pidfd = sys_pidfd_open(tid, PIDFD_THREAD);
		if (h->pidfd < 0) {
			int err = errno;

			/* EINVAL: the TID was found, then lost its task before the
			 * pidfd was made (the thread exited meanwhile) */
			if (err == ESRCH || err == EINVAL) {
				h->problem = FAIL_EXITED;
				h->err = ESRCH;
				return;
			}
			h->problem = FAIL_ERRNO;
			h->err = err;
		}
	}
	if (!is_member(w, tid)) {
		close_handle(h);
		h->problem = FAIL_EXITED;
		h->err = ESRCH;
	}
}

/* ---- passes over /proc/PID/task ---------------------------------------------
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

/* One pass: where it is, and what it found. */
struct pass {
	off_t pos;		/* directory position of the next entry */
	bool first;		/* no thread met yet */
	long fresh;		/* threads not seen before, each visited */
	bool anchored;		/* its first thread had been seen before */
	off_t end;		/* directory position after its last entry */
	struct {		/* its last thread, to tell whether it reached the end */
		pid_t tid;
		off_t pos, next;
		bool fresh, gone;
	} last;
};

/* Visit every thread not seen before among the entries in buf. */
static int visit_entries(struct walk *w, const char *buf, size_t len, struct pass *p)
{
	for (size_t at = 0; at < len;) {
		const struct dirent64 *de = (const void *)(buf + at);
		struct task_handle h;
		pid_t tid = tasklist_tid(de->d_name);
		off_t here = p->pos;
		int added;

		at += de->d_reclen;
		p->pos = p->end = de->d_off;
		if (!tid)
			continue;
		added = tidset_add(&w->seen, tid);
		if (added < 0) {
			errno = ENOMEM;
			return -1;
		}
		if (p->first)
			p->anchored = !added;
		p->first = false;
		p->last.tid = tid;
		p->last.pos = here;
		p->last.next = de->d_off;
		p->last.fresh = added;
		p->last.gone = false;
		if (!added)
			continue;
		if (interrupt_signal()) {	/* found, not reached: counted, not visited */
			interrupt_left(1);
			continue;
		}
		p->fresh++;
		if (tid == w->process.pid) {
			h = w->process;	/* the leader: the process pidfd itself */
			h.per_thread = true;
			visit(w, &h);
			continue;
		}
		open_thread(w, tid, &h);
		p->last.gone = h.problem == FAIL_EXITED;
		visit(w, &h);
	}
	flush_batch(w);
	return 0;
}

/* One pass over /proc/PID/task from directory position from: visit every
 * thread not seen before.  Returns whether it was clean (see above), or
 * -1 (errno set). */
static int scan_threads(struct walk *w, off_t from, struct pass *p)
{
	bool eof = false;
	int calls = 0, fills = 0;

	memset(p, 0, sizeof(*p));
	p->pos = p->end = from;
	p->first = true;
	if (lseek(w->listing.fd, from, SEEK_SET) < 0)
		return -1;
	while (!eof) {
		ssize_t len = tasklist_fill(&w->listing, &calls, &eof);

		if (len < 0)
			return -1;
		fills++;
		if (visit_entries(w, w->listing.buf, (size_t)len, p) < 0)
			return -1;
	}
	if (fills > 1)
		tasklist_grow(&w->listing);
	/* one walk, which ended because the list did: not for want of room
	 * (it fit in one fill, with room left for the read that found the
	 * end), its last thread is alive (a walk stops after a thread found
	 * exiting), no position went to a thread that vanished unlisted */
	return calls == 1 && fills == 1 && p->last.tid && p->last.next == p->last.pos + 1 &&
	       (p->last.fresh ? !p->last.gone :
		p->last.tid == w->process.pid || is_member(w, p->last.tid));
}

/* The process as a handle that says why its threads could not be listed. */
static void visit_listing_failure(struct walk *w, int err)
{
	struct task_handle h = w->process;

	h.problem = sys_pidfd_exited(w->process.pidfd) == 1 ? FAIL_EXITED : FAIL_ERRNO;
	if (h.problem == FAIL_ERRNO && (err == ENOENT || err == EACCES))
		h.problem = FAIL_PROC_HIDDEN;
	h.err = err;
	visit_alone(w, &h);
}

/* Pass after pass until one finds no new thread.  0, or -1 out of memory. */
static int walk_threads(struct walk *w)
{
	off_t from = 0;

	w->thread_pidfds = sys_thread_pidfds_supported();
	w->by_signal = sys_null_signal_works();
	for (int n = 0; n < MAX_RESCANS; n++) {
		struct pass p = { 0 };
		int clean;

		if (w->listing.fd < 0 && (tasklist_open(w->process.pid, TAIL_OVERLAP, &w->listing) < 0 ||
					  tidset_reserve(&w->seen, w->listing.threads) < 0))
			clean = -1;
		else
			clean = scan_threads(w, from, &p);
		if (clean < 0) {
			if (errno == ENOMEM)
				return -1;
			if (!interrupt_signal())
				visit_listing_failure(w, errno);
			return 0;
		}
		/* done when a whole listing, or a pass over the end of the list
		 * that holds (see above), finds no new thread */
		if (p.fresh == 0 && (from == 0 || (clean && p.anchored)))
			return 0;
		if (interrupt_signal())
			return 0;
		if (sys_pidfd_exited(w->process.pidfd) != 0)
			return 0;
		if (clean && (from == 0 || p.anchored))
			from = p.end - 1 - TAIL_OVERLAP > 2 ? p.end - 1 - TAIL_OVERLAP : 2;
		else
			from = 0;
	}
	{
		struct task_handle h = w->process;

		h.problem = FAIL_UNSETTLED;
		visit_alone(w, &h);
	}
	return 0;
}

int targets_walk(const struct pid_spec *spec, bool all_threads, const struct task_visitor *v)
{
	struct walk w = { .v = v, .listing = { .fd = -1 } };
	int ret = 0;

	closer_init(&w.closer);
	w.batch_cap = w.closer.cap < TARGETS_BATCH ? w.closer.cap : TARGETS_BATCH;
	open_process(spec, &w.process);
	if (interrupt_signal() && (w.process.problem != FAIL_NONE || !all_threads)) {
		/* interrupted: what is not reached is counted, not visited */
		if (w.process.problem == FAIL_NONE)
			interrupt_left(1);
	} else if (w.process.problem != FAIL_NONE || !all_threads) {
		visit_alone(&w, &w.process);
	} else
		ret = walk_threads(&w);
	if (v->process_done)
		v->process_done(w.process.pid, v->arg);
	tasklist_close(&w.listing);
	closer_flush(&w.closer);
	close_handle(&w.process);
	tidset_release(&w.seen);
	return ret;
}
