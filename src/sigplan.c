/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigplan.c - the signal engine's plan and route (sigengine.h), both read
 * from /proc: whether a process can take the engine and on which
 * real-time signal, and whether one of its threads can take that signal
 * now.  Which blocked calls a handler ends is sigcalls.h's.
 */
#include "config.h"

#include "sigengine.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if PMP_SIGENGINE_SUPPORTED

#include "procfs.h"
#include "sigcalls.h"
#include "tasklist.h"

#define SIG_LOWEST	35		/* SIGRTMIN + 3: glibc and musl keep 32-34 */
#define SIG_HIGHEST	64		/* SIGRTMAX */

static uint64_t bit_of(int sig)
{
	return 1ULL << (sig - 1);
}

void sigengine_plan(pid_t pid, struct sigplan *plan)
{
	struct proc_status st;

	memset(plan, 0, sizeof(*plan));
	plan->pid = pid;
	if (procfs_task_status(0, pid, &st) < 0) {
		snprintf(plan->why, sizeof(plan->why), "its /proc status cannot be read (%s)", strerror(errno));
		return;
	}
	if (st.threads < SIGENGINE_MIN_THREADS) {
		snprintf(plan->why, sizeof(plan->why), "fewer than %d threads", SIGENGINE_MIN_THREADS);
		return;
	}
	if (st.state == 'T' || st.state == 't') {
		snprintf(plan->why, sizeof(plan->why), "the process is stopped");
		return;
	}
	if (st.seccomp != 0) {	/* its injected calls would pass the filter */
		snprintf(plan->why, sizeof(plan->why), "its main thread runs under seccomp");
		return;
	}
	for (int sig = SIG_HIGHEST; sig >= SIG_LOWEST; sig--)
		if (!((st.sig_cgt | st.sig_ign | st.shd_pnd) & bit_of(sig))) {
			plan->sig = sig;
			return;
		}
	snprintf(plan->why, sizeof(plan->why),
		 "no free real-time signal (it catches or ignores every one from %d to %d)", SIG_LOWEST,
		 SIG_HIGHEST);
}

/* The route of a thread blocked (State S): by what it is blocked in. */
static int route_blocked(pid_t pid, pid_t tid, char *why, size_t len, bool *eintr)
{
	struct proc_syscall sc;
	const char *name;
	char num[32];

	if (procfs_task_syscall(pid, tid, &sc) < 0) {
		snprintf(why, len, "its /proc syscall cannot be read (%s)", strerror(errno));
		return -1;
	}
	if (sc.kind == SYSCALL_RUNNING)
		return 0;
	if (sc.kind == SYSCALL_NONE) {
		snprintf(why, len, "waiting outside a system call (a page fault?)");
		return -1;
	}
	switch (sigcalls_verdict(sc.nr, sc.args, &name, num, sizeof(num))) {
	case SIGCALL_EINTR_ANYWAY:
		*eintr = true;
		return 0;
	case SIGCALL_RESTARTS:
	case SIGCALL_NO_WAIT:
		return 0;
	case SIGCALL_ENDS:
		break;
	}
	snprintf(why, len, "in %s, which a signal handler would end", name);
	return -1;
}

int sigengine_route(const struct sigplan *plan, pid_t tid, char *why, size_t len, bool *eintr)
{
	struct proc_status st;

	*eintr = false;
	if (!plan->sig) {
		snprintf(why, len, "%s", plan->why);
		return -1;
	}
	if (procfs_task_status(plan->pid, tid, &st) < 0) {
		snprintf(why, len, "its /proc status cannot be read (%s)", strerror(errno));
		return -1;
	}
	if (st.tracer > 0) {
		snprintf(why, len, "traced by pid %d", (int)st.tracer);
		return -1;
	}
	if (st.seccomp != 0) {
		snprintf(why, len, "under seccomp");
		return -1;
	}
	if (st.sig_blk & bit_of(plan->sig)) {
		snprintf(why, len, "it blocks signal %d", plan->sig);
		return -1;
	}
	if (st.sig_pnd & bit_of(plan->sig)) {
		snprintf(why, len, "signal %d is pending in it", plan->sig);
		return -1;
	}
	switch (st.state) {
	case 'R':	/* /proc shows no call of a running task: it takes the signal */
		return 0;
	case 'S':
		return route_blocked(plan->pid, tid, why, len, eintr);
	case 'D':
		snprintf(why, len, "in uninterruptible sleep");
		return -1;
	default:
		snprintf(why, len, "in state %c", st.state ? st.state : '?');
		return -1;
	}
}

/* In the handler a thread blocks every signal (the action's mask is
 * full); rt_sigreturn puts back the mask it had when the signal came,
 * which did not block this one (sigengine_route).  So a mask that lacks
 * any blockable signal proves it out, as does its end; one that blocks
 * everything of its own accord is not proven.  stat, not status: the
 * cheaper read, and signals 1 to 31 are enough to tell. */
bool sigengine_may_be_leaving(pid_t pid, pid_t tid)
{
	const unsigned long all = 0x7fffffffUL, unblockable = bit_of(SIGKILL) | bit_of(SIGSTOP);
	struct proc_stat st;

	if (procfs_task_stat(pid, tid, &st) < 0)
		return errno != ENOENT && errno != ESRCH;
	return ((st.blocked | unblockable) & all) == all;
}

struct leaving_scan {
	pid_t pid, except;
	bool found;
};

static bool check_leaving(pid_t tid, void *arg)
{
	struct leaving_scan *sc = arg;

	if (tid != sc->except && sigengine_may_be_leaving(sc->pid, tid))
		sc->found = true;
	return !sc->found;
}

bool sigengine_any_may_be_leaving(pid_t pid, pid_t except)
{
	struct leaving_scan sc = { pid, except, false };

	return tasklist_each(pid, check_leaving, &sc) < 0 || sc.found;
}

#else /* !PMP_SIGENGINE_SUPPORTED */

void sigengine_plan(pid_t pid, struct sigplan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->pid = pid;
	snprintf(plan->why, sizeof(plan->why), "no signal engine on this architecture");
}

int sigengine_route(const struct sigplan *plan, pid_t tid, char *why, size_t len, bool *eintr)
{
	(void)tid;
	*eintr = false;
	snprintf(why, len, "%s", plan->why);
	return -1;
}

#endif /* PMP_SIGENGINE_SUPPORTED */
