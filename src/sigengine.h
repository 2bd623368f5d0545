/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigengine.h - the signal engine: one injection per process, then one
 * signal per thread.  Where a process has enough threads and a real-time
 * signal it neither catches, ignores nor has pending, the ptrace backend
 * stops ONE thread (which it sets as usual) and has it make, in the same
 * stop: memfd_create(2); mmap(2) of it read+exec, with its data part
 * mprotect(2)ed read+write; close(2) of the descriptor (the tool holds its
 * own, taken with pidfd_getfd(2) and sealed against shrinking); and
 * rt_sigaction(2) of that signal to the handler of sighandler.h
 * (SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_RESTORER, every signal
 * blocked while it runs).  Each other thread is then sent the signal,
 * with its slot in the value, through its pidfd where the kernel has
 * thread pidfds (pidfd_send_signal(2)), else rt_tgsigqueueinfo(2); its
 * handler sets its policy in its own context and writes its slot, which
 * the tool reads from its own mapping, sleeping on a futex shared with
 * the handler.  No ptrace stop per thread.
 *
 * Which thread takes the signal (sigengine_route, from /proc just before
 * the signal): one running or runnable, or blocked in a call that a
 * handler with SA_RESTART restarts, or in one that a ptrace stop ends
 * with EINTR too (sigcalls.h).  A thread that blocks the signal or has it
 * pending, is stopped, traced, under seccomp, in uninterruptible sleep,
 * or blocked in a call a handler would end (nanosleep, poll, pause, timed
 * futex waits...), and one that does not answer within
 * SIGENGINE_DEADLINE_MS, is set by the ptrace path, thread by thread.  A
 * thread that enters such a call between the read and the signal (a few
 * microseconds) sees that call end with EINTR: its slot shows it (the
 * interrupted return register -EINTR right after a system call
 * instruction), and the outcome says so.
 *
 * The end (sigengine_end, or the tracing process if the tool was killed):
 * through a held thread, the disposition is swapped for SIG_IGN, which
 * discards the signal wherever it is still pending, then the one found at
 * the start is put back (not if the target has put its own in the
 * meantime: that one stays); once every handler run has passed its last
 * store (entered == left), the region is unmapped, if it is still the
 * one mapped.  The tool's process group killed at once leaves at most
 * the region and a handler that sets the requested policy on a stray
 * signal of that number.
 */
#ifndef PMP_SIGENGINE_H
#define PMP_SIGENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "ptrace.h"
#include "targets.h"

#if defined(__x86_64__) || defined(__aarch64__)
# define PMP_SIGENGINE_SUPPORTED 1
#else
# define PMP_SIGENGINE_SUPPORTED 0
#endif

/* Processes with fewer threads are set thread by thread: putting the
 * handler in and taking it out costs about what that many stops do. */
#define SIGENGINE_MIN_THREADS	8
/* How long a thread has to answer before the ptrace path takes it. */
#define SIGENGINE_DEADLINE_MS	500

/* What a process offers the engine, from /proc/PID/status. */
struct sigplan {
	pid_t pid;
	int sig;		/* the free real-time signal; 0: no engine */
	char why[96];		/* sig 0: why not */
};

/* Whether process pid may take the engine, and with which signal: the
 * highest real-time signal above SIGRTMIN + 2 (the C libraries keep the
 * lowest for themselves) that it does not catch, ignore or have pending;
 * and enough threads, not stopped. */
void sigengine_plan(pid_t pid, struct sigplan *plan);

/* Whether thread tid of the planned process would take the signal now:
 * 0, or -1 with why the ptrace path takes it ("in nanosleep, which a
 * signal would end").  *eintr: it is blocked in a call that ends with
 * EINTR either way. */
int sigengine_route(const struct sigplan *plan, pid_t tid, char *why, size_t len, bool *eintr);

/* Whether thread tid of process pid, which answered, may still be on the
 * handler's last instructions (past its count of leaving, before
 * rt_sigreturn: preempted, stopped or frozen there), where it would fault
 * once the code is unmapped.  false once its mask proves it out or it has
 * ended. */
bool sigengine_may_be_leaving(pid_t pid, pid_t tid);

/* Whether any thread of process pid but `except' (the thread held, whose
 * registers tell) may be (sigengine_may_be_leaving): after a run without
 * a slot, whose thread is not known.  true also when the threads cannot
 * be listed. */
bool sigengine_any_may_be_leaving(pid_t pid, pid_t except);

struct sigengine;

/* Put the handler into the planned process through the thread h names,
 * which the ptrace path sets in the same stop (*res: its own result, as
 * ptrace_set_thread_policy gives it).  The engine, or NULL with why (the
 * process's threads then all take the ptrace path). */
struct sigengine *sigengine_start(struct ptrace_session *s, const struct sigplan *plan,
				  const struct task_handle *h, const struct ptrace_request *req,
				  struct ptrace_result *res, char *why, size_t len);

/* One thread's signal. */
struct sigticket {
	bool sent;
	uint32_t slot;
	bool eintr;		/* its call ends with EINTR either way */
	struct timespec at;	/* when it was sent */
	char why[96];		/* not sent, or not answered: why */
};

/* Route the thread h names (sigengine_route) and send it the signal, or
 * say in t->why why the ptrace path takes it. */
void sigengine_send(struct sigengine *e, const struct task_handle *h, struct sigticket *t);

/* The thread's answer, waited for until SIGENGINE_DEADLINE_MS after the
 * signal: 0 with *res as the ptrace path gives it (FAIL_NONE, err the
 * call's errno), *delay_us from the signal to the answer, *interrupted if
 * the signal ended a system call with EINTR that the route did not
 * expect to; -1 if none came (t->why says so). */
int sigengine_collect(struct sigengine *e, struct sigticket *t, const struct task_handle *h,
		      struct ptrace_result *res, long *delay_us, bool *interrupted);

/* Take the handler out (see above) and free the engine; what could not be
 * taken out, in note ("" if nothing). */
void sigengine_end(struct sigengine *e, char *note, size_t len);

#endif
