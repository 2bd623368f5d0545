/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigcalls.h - what a signal handler does to a thread blocked in a system
 * call, next to what a ptrace stop does to it: one table row per call
 * (sigcalls.c), by the kernel's own rules.  A ptrace stop runs no handler,
 * so the kernel restarts every interrupted call (a relative sleep with its
 * remaining time); after a handler installed with SA_RESTART it restarts
 * only the calls that return -ERESTARTSYS or -ERESTARTNOINTR, and ends
 * the rest with EINTR (-ERESTARTNOHAND, -ERESTART_RESTARTBLOCK: pause,
 * sigsuspend, the sleeps, poll and select, timed futex waits; signal(7)).
 * The signal engine sends its signal only to a thread whose call keeps
 * what the ptrace path would give it.
 */
#ifndef PMP_SIGCALLS_H
#define PMP_SIGCALLS_H

enum sigcall_verdict {
	SIGCALL_RESTARTS,	/* restarted after the handler, as after a ptrace stop */
	SIGCALL_NO_WAIT,	/* never waits: the signal meets it at its return */
	SIGCALL_EINTR_ANYWAY,	/* ends with EINTR after a ptrace stop too (epoll_wait) */
	SIGCALL_ENDS,		/* a handler would end it with EINTR where a ptrace
				 * stop does not: the ptrace path's */
};

/* The verdict for a thread blocked in call nr with these arguments (the
 * native table of the architecture), and the call's name for messages
 * ("syscall NR" in buf for one the table does not know, which ENDS). */
enum sigcall_verdict sigcalls_verdict(long nr, const unsigned long long args[6], const char **name,
				      char *buf, unsigned long len);

/* Whether the verdict lets the thread take the signal. */
static inline int sigcalls_takes_signal(enum sigcall_verdict v)
{
	return v != SIGCALL_ENDS;
}

#endif
