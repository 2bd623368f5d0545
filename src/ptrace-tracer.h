/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-tracer.h - the task a ptrace session's requests are made from.
 *
 * The kernel ties a tracee to the task that seized it, and when that
 * task exits it lets go of every tracee it still has, one that never
 * stopped included (PTRACE_DETACH cannot: it needs a stopped tracee), one
 * whose registers are still pointed at an injected call included.  So the
 * requests are made from a task of their own, and the tool does not own
 * it in the way that matters:
 *
 *   - it ends with the session, so a thread of the target that never
 *     stopped (uninterruptible sleep, a vfork parent) is let go when the
 *     tool moves on to the next process, not when the tool exits;
 *   - it is a process of its own (clone(2) with CLONE_VM, without
 *     CLONE_THREAD), with every signal blocked, so SIGKILL of the tool
 *     does not end it: the call in hand runs to its end (the thread's
 *     registers and signal mask put back, the thread released), then it
 *     sees that its parent is gone and exits.  Only a SIGKILL aimed at it
 *     too (the tool's process group, its cgroup) can cut an injection.
 *
 * Calls run one at a time, in order, while the caller waits: as if
 * inline.  The process runs on the C library state (errno, malloc's
 * per-thread cache) of a host thread that made it and does nothing else
 * until it exits, so the two never use that state at once.  Where the
 * process cannot be made (valgrind refuses such clones), the host thread
 * itself serves the calls; where no thread can be made, the caller does.
 */
#ifndef PMP_PTRACE_TRACER_H
#define PMP_PTRACE_TRACER_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tracer {
	bool running;		/* a host thread exists; else calls run inline */
	volatile bool quit;
	volatile bool gone;	/* the serving task ended before it was told to */
	pid_t parent;		/* the tool's process, as the survivor sees it */
	pid_t pid;		/* the task that traces: the survivor or the host */
	pthread_t host;
	sem_t go, done;
	void (*fn)(void *);
	void *arg;
	void *stack;		/* the survivor's stack, mapped by the host */
	size_t stack_size;
	void (*orphan)(void *arg);	/* the survivor's last call, when the tool is gone */
	void *orphan_arg;
	volatile bool orphaned;	/* it is making it: calls run inline */
};

/* Start the host thread and the survivor process, with every signal
 * blocked in them (the caller's signals stay the caller's).  Never fails:
 * it falls back as the header comment says.  A survivor that finds the
 * tool gone calls orphan(arg) (which may call tracer_call: it runs
 * inline) before it exits. */
void tracer_start(struct tracer *tr, void (*orphan)(void *arg), void *arg);

/* Run fn(arg) where the session traces from and return when it has
 * returned: 0; -1 if the tracing task ended unexpectedly (fn did not run,
 * or did not finish). */
int tracer_call(struct tracer *tr, void (*fn)(void *), void *arg);

/* Whether task tid is the session's tracer (a thread of the caller when
 * calls run inline). */
bool tracer_is(const struct tracer *tr, pid_t tid);

/* End the serving task (the kernel lets go of what it still traces) and
 * wait for it. */
void tracer_stop(struct tracer *tr);

#endif
