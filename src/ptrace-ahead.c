/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-ahead.c - the window of threads seized ahead of the one in hand,
 * and the parked threads let go of as soon as they stop (see the header).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "ptrace-ahead.h"
#include "sys.h"
#include "tasklist.h"

void ahead_init(struct ahead *a, pid_t pid)
{
	memset(a, 0, sizeof(*a));
	a->pid = pid;
	a->width = AHEAD_WINDOW;
}

void ahead_widen(struct ahead *a)
{
	a->width = SIZE_MAX;
}

/* The threads of the process, in the order the walk meets them. */
static void list_threads(struct ahead *a)
{
	struct task_listing l;
	size_t cap = 0;
	int calls = 0;
	bool eof = false;

	a->listed = true;
	if (tasklist_open(a->pid, 0, &l) < 0)
		return;
	while (!eof) {
		ssize_t len = tasklist_fill(&l, &calls, &eof);

		if (len <= 0)
			break;
		for (size_t at = 0; at < (size_t)len;) {
			const struct dirent64 *de = (const void *)(l.buf + at);
			pid_t tid = tasklist_tid(de->d_name);

			at += de->d_reclen;
			if (!tid)
				continue;
			if (a->ntids == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				pid_t *grown = realloc(a->tids, ncap * sizeof(*grown));

				if (!grown)	/* look ahead as far as it got */
					goto out;
				a->tids = grown;
				cap = ncap;
			}
			a->tids[a->ntids++] = tid;
		}
	}
out:
	tasklist_close(&l);
}

void ahead_park(struct ahead *a, pid_t tid)
{
	if (a->nparked == a->capparked) {
		size_t ncap = a->capparked ? a->capparked * 2 : 16;
		struct held *grown = realloc(a->parked, ncap * sizeof(*grown));

		if (!grown)	/* let go of when the tracing process exits */
			return;
		a->parked = grown;
		a->capparked = ncap;
	}
	a->parked[a->nparked++] = (struct held){ .tid = tid };
}

/* Whether tid is let go of (or was never ours to hold): it exited, or it
 * stopped and was detached, a signal it stopped for handed back to it. */
static bool let_go(pid_t tid)
{
	int status, sig = 0;
	pid_t r = waitpid(tid, &status, __WALL | WNOHANG);

	if (r == 0)
		return false;
	if (r < 0)
		return errno != EINTR;
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return true;
	/* no PTRACE_SYSCALL was asked of it: a stop is our interrupt or a
	 * group stop (an event), or a signal being delivered */
	if ((status >> 16) == 0)
		sig = WSTOPSIG(status);
	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)sig) < 0)
		return errno != ESRCH;	/* killed meanwhile: its exit comes next */
	return true;
}

void ahead_reap(struct ahead *a)
{
	size_t kept = 0;

	for (size_t i = 0; i < a->nparked; i++)
		if (!let_go(a->parked[i].tid))
			a->parked[kept++] = a->parked[i];
	a->nparked = kept;
}

static void seize_ahead(struct ahead *a, size_t at)
{
	pid_t tid = a->tids[at];
	struct held *h;

	if (a->whead > 0 && a->whead == a->nwin)
		a->whead = a->nwin = 0;
	if (a->nwin == a->capwin) {
		size_t ncap = a->capwin ? a->capwin * 2 : AHEAD_WINDOW;
		struct held *grown;

		if (a->whead > 0) {	/* room at the front: move down */
			memmove(a->win, a->win + a->whead, (a->nwin - a->whead) * sizeof(*a->win));
			a->nwin -= a->whead;
			a->whead = 0;
			ncap = a->capwin;
		}
		grown = ncap == a->capwin ? a->win : realloc(a->win, ncap * sizeof(*grown));
		if (!grown)	/* the engine seizes it when the walk comes */
			return;
		a->win = grown;
		a->capwin = ncap;
	}

	/* refused (already traced, not allowed, exited): the engine meets
	 * it again when the walk does, and says why */
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(uintptr_t)PTRACE_O_TRACESYSGOOD) < 0)
		return;
	/* seized, its TID cannot pass to another task until we let go: if
	 * it is not a thread of the process now, it never will be */
	if (!sys_is_thread_of(a->pid, tid) || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		(void)ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
		ahead_park(a, tid);
		return;
	}
	h = &a->win[a->nwin++];
	h->tid = tid;
	h->at = at;
	clock_gettime(CLOCK_MONOTONIC, &h->since);
}

void ahead_fill(struct ahead *a, pid_t tid)
{
	size_t at;

	ahead_reap(a);
	if (!a->listed)
		list_threads(a);
	/* the walk follows the listing: look on from the last one in hand */
	at = a->cursor;
	while (at < a->ntids && a->tids[at] != tid)
		at++;
	if (at == a->ntids)	/* born after the listing: nothing listed after it */
		return;
	a->cursor = at;
	/* held threads the walk went past (they exited): let go of them */
	while (a->whead < a->nwin && a->win[a->whead].at <= at)
		ahead_park(a, a->win[a->whead++].tid);
	if (a->next <= at)
		a->next = at + 1;
	while (a->nwin - a->whead < a->width && a->next < a->ntids)
		seize_ahead(a, a->next++);
}

void ahead_relist(struct ahead *a, const pid_t *tids, size_t n)
{
	pid_t *copy = n ? malloc(n * sizeof(*copy)) : NULL;

	for (size_t i = a->whead; i < a->nwin; i++)
		ahead_park(a, a->win[i].tid);
	a->whead = a->nwin = 0;
	free(a->tids);
	a->tids = copy;
	a->ntids = copy ? n : 0;	/* without memory, nothing is held ahead */
	if (copy)
		memcpy(copy, tids, n * sizeof(*copy));
	a->listed = true;
	a->cursor = a->next = 0;
}

bool ahead_take(struct ahead *a, pid_t tid, struct timespec *since)
{
	for (size_t i = a->whead; i < a->nwin; i++) {
		if (a->win[i].tid != tid)
			continue;
		*since = a->win[i].since;
		if (i == a->whead) {	/* the walk's order: the usual case */
			a->whead++;
		} else {
			memmove(&a->win[i], &a->win[i + 1], (a->nwin - i - 1) * sizeof(a->win[0]));
			a->nwin--;
		}
		return true;
	}
	return false;
}

void ahead_end(struct ahead *a)
{
	for (size_t i = a->whead; i < a->nwin; i++)
		ahead_park(a, a->win[i].tid);
	ahead_reap(a);
	free(a->win);
	free(a->parked);
	free(a->tids);
	a->win = NULL;
	a->parked = NULL;
	a->tids = NULL;
	a->whead = a->nwin = a->capwin = 0;
	a->nparked = a->capparked = a->ntids = 0;
}
