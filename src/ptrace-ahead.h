/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-ahead.h - the threads a session holds without working on them.
 *
 * The window: with -a, the threads that come next in /proc/PID/task are
 * seized and interrupted AHEAD_WINDOW at a time ahead of the one in hand,
 * so that each one's wait to be scheduled and to stop is spent while the
 * ones before it are served, not in series with them.  The engine takes
 * each one over when the walk reaches it (its stop is then usually
 * there), checks its identity then as for any other, and has its stop
 * deadline run from the moment it was interrupted: threads that do not
 * stop (uninterruptible sleep, a vfork parent) are waited for alongside
 * the others.  Once one thread of the process has not stopped in time,
 * the window widens to every thread left in the listing: the rest that do
 * not stop either then time out together, one deadline later, instead of
 * AHEAD_WINDOW at a time.  Nothing is changed in a held thread: it only
 * stops.
 *
 * The parked: threads that were seized but never stopped (a timeout), or
 * held and not wanted after all, or found not to be a thread of the
 * process when seized.  Each is let go as soon as it stops (PTRACE_DETACH,
 * a signal it stopped for handed on, a group stop kept), and the rest when
 * the session's tracing process exits (ptrace-tracer.h).
 *
 * Every function runs in the session's tracing process.
 */
#ifndef PMP_PTRACE_AHEAD_H
#define PMP_PTRACE_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* One: its stop is over by the time the thread in hand is done, and a held
 * thread waits for one other at most.  Measured with make bench-host: 8
 * made each thread's pause 2-4 ms for the same wall time; 1 makes it about
 * 0.5 ms at p50 and about 1 ms at p99. */
#define AHEAD_WINDOW 1

struct held {
	pid_t tid;
	size_t at;		/* its place in the listing */
	struct timespec since;	/* when it was interrupted */
};

struct ahead {
	pid_t pid;
	bool listed;		/* tids holds the listing (maybe empty) */
	pid_t *tids;		/* /proc/PID/task when the first -a thread came */
	size_t ntids;
	size_t cursor;		/* the place of the last thread in hand */
	size_t next;		/* the first place not yet seized ahead */
	size_t width;		/* how many are held ahead at most */
	struct held *win;	/* held ahead, in listing order: [whead, nwin) */
	size_t whead, nwin, capwin;
	struct held *parked;
	size_t nparked, capparked;
};

void ahead_init(struct ahead *a, pid_t pid);

/* Thread tid (of a -a walk) is in hand: let go of held threads listed
 * before it, and seize and interrupt the ones after it until the window
 * is full.  A thread that cannot be seized is left for the engine, which
 * says why when it comes to it. */
void ahead_fill(struct ahead *a, pid_t tid);

/* The walk to come is tids[0..n) (the threads a signal engine left to
 * the ptrace path), not the listing: what is held now is let go of. */
void ahead_relist(struct ahead *a, const pid_t *tids, size_t n);

/* A thread did not stop in time: hold every thread left from now on. */
void ahead_widen(struct ahead *a);

/* Take tid over if it is held: true, with when it was interrupted. */
bool ahead_take(struct ahead *a, pid_t tid, struct timespec *since);

/* A thread seized and interrupted that nothing was done to (it did not
 * stop in time, or the engine refused it): let go of it once it stops. */
void ahead_park(struct ahead *a, pid_t tid);

/* Let go of every parked thread that has stopped or exited meanwhile. */
void ahead_reap(struct ahead *a);

/* The session ends: park what is held, let go of what has stopped, free
 * the rest of the state (what never stopped is let go with the thread). */
void ahead_end(struct ahead *a);

#endif
