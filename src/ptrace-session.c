/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-session.c - a ptrace session's life: made for one process, its
 * tracing process started, work run through any live thread of the
 * process, and at its end (or the tool's death) what it put into the
 * process taken out.  The per-thread engine is ptrace.c's.
 */
#include "config.h"

#include "ptrace.h"

#if PMP_PTRACE_SUPPORTED

#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ptrace-tracee.h"
#include "tasklist.h"

#define ANY_TRIES 8	/* threads asked before a work is given up */

static void orphan_job(void *arg);

struct ptrace_session *ptrace_session_begin(pid_t pid)
{
	struct ptrace_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pid = pid;
	if (getrandom(&s->cookie, sizeof(s->cookie), 0) != (ssize_t)sizeof(s->cookie)) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		s->cookie = ((uint64_t)now.tv_nsec << 32) ^ (uint64_t)now.tv_sec ^ (uint64_t)getpid();
	}
	ahead_init(&s->ahead, pid);
	tracer_start(&s->tracer, orphan_job, s);
	return s;
}

pid_t ptrace_session_pid(const struct ptrace_session *s)
{
	return s->pid;
}

void ptrace_session_signalled(struct ptrace_session *s, void (*orphan)(void *arg), void *arg)
{
	s->signalled = orphan != NULL;
	s->orphan_fn = orphan;
	s->orphan_arg = arg;
}

struct first {
	pid_t *tids;
	size_t n, max;
};

static bool take_first(pid_t tid, void *arg)
{
	struct first *f = arg;

	f->tids[f->n++] = tid;
	return f->n < f->max;
}

/* The first few threads of /proc/PID/task (the orphaned tracing process
 * asks too: tasklist_each takes no malloc lock). */
static size_t first_tids(pid_t pid, pid_t *tids, size_t max)
{
	struct first f = { tids, 0, max };

	(void)tasklist_each(pid, take_first, &f);
	return f.n;
}

int ptrace_work_any(struct ptrace_session *s, ptrace_work_fn work, void *arg)
{
	pid_t tids[ANY_TRIES];
	struct ptrace_result res;
	size_t n;

	if (s->via && ptrace_work(s, s->via, work, arg, &res) == 0)
		return 0;
	n = first_tids(s->pid, tids, ANY_TRIES);
	for (size_t i = 0; i < n; i++)
		if (tids[i] != s->via && ptrace_work(s, tids[i], work, arg, &res) == 0)
			return 0;
	return -1;
}

/* Done (0) once the page is let go of: unmapped, no longer provably
 * ours, or the process gone. */
static int unmap_work(struct tracee *t, void *arg)
{
	(void)arg;
	(void)scratch_unmap(t);
	return t->s->page ? -1 : 0;
}

static void unmap_scratch(struct ptrace_session *s)
{
	if (s->page)
		(void)ptrace_work_any(s, unmap_work, NULL);
}

/* The tool is gone (ptrace-tracer.h): what the session put into the
 * process is taken out, by the tracing process itself. */
static void orphan_job(void *arg)
{
	struct ptrace_session *s = arg;

	if (s->orphan_fn)
		s->orphan_fn(s->orphan_arg);
	unmap_scratch(s);
}

struct walk {
	struct ahead *ahead;
	const pid_t *tids;
	size_t n;
};

static void walk_job(void *arg)
{
	const struct walk *w = arg;

	ahead_relist(w->ahead, w->tids, w->n);
}

void ptrace_session_walk(struct ptrace_session *s, const pid_t *tids, size_t n)
{
	struct walk w = { NULL, tids, n };

	if (!s)
		return;
	w.ahead = &s->ahead;
	if (tracer_call(&s->tracer, walk_job, &w) == 0)
		s->walked = true;
}

static void end_job(void *arg)
{
	ahead_end(arg);
}

void ptrace_session_end(struct ptrace_session *s)
{
	if (!s)
		return;
	unmap_scratch(s);
	(void)tracer_call(&s->tracer, end_job, &s->ahead);
	tracer_stop(&s->tracer);
	free(s);
}

#endif /* PMP_PTRACE_SUPPORTED */
