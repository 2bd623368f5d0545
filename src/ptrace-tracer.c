/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-tracer.c - the session's tracing task: a host thread, and the
 * process it makes to survive the tool; each runs one call at a time for
 * the caller's thread.  Why they exist is in the header.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace-tracer.h"
#include "sys.h"

#define SURVIVOR_STACK	(1024 * 1024)
/* how soon a survivor whose tool died exits, if no call is in hand */
#define PARENT_CHECK_NS	(50 * 1000 * 1000)

static void wait_for(sem_t *sem)
{
	while (sem_wait(sem) < 0 && errno == EINTR)
		;
}

/* Wait for the next call; false when told to quit, or (survivor) when the
 * tool that made it is gone. */
static bool next_call(struct tracer *tr, bool survivor)
{
	while (survivor) {
		struct timespec until;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += PARENT_CHECK_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (sem_clockwait(&tr->go, CLOCK_MONOTONIC, &until) == 0)
			return !tr->quit;
		if (getppid() != tr->parent)
			return false;
	}
	wait_for(&tr->go);
	return !tr->quit;
}

static void serve(struct tracer *tr, bool survivor)
{
	while (next_call(tr, survivor)) {
		tr->fn(tr->arg);
		tr->fn = NULL;		/* served: what tracer_call looks at */
		sem_post(&tr->done);
	}
	if (survivor && !tr->quit && tr->orphan) {
		tr->orphaned = true;
		tr->orphan(tr->orphan_arg);
	}
}

static int survivor_main(void *arg)
{
	/* Its own signal handlers (no CLONE_SIGHAND): SIGCHLD at its default,
	 * so that each stop of a tracee queues one, which the engine waits
	 * for (ptrace.c), even when the tool was started with SIGCHLD
	 * ignored. */
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	(void)sigaction(SIGCHLD, &dfl, NULL);
	serve(arg, true);
	return 0;	/* the task exits; the kernel lets go of its tracees */
}

/* Make the survivor and wait for it without touching the C library's
 * per-thread state the survivor runs on (a raw wait4, no errno on
 * success, no signal to interrupt it); serve the calls itself if the
 * survivor cannot be made. */
static void *host_main(void *arg)
{
	struct tracer *tr = arg;
	pid_t child = -1;
	long r;
	int st;

	tr->stack = mmap(NULL, SURVIVOR_STACK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (tr->stack != MAP_FAILED) {
		tr->stack_size = SURVIVOR_STACK;
		/* a guard page below, as a thread's stack has */
		if (mprotect(tr->stack, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE) == 0)
			child = clone(survivor_main, (char *)tr->stack + SURVIVOR_STACK,
				      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM, tr);
	}
	if (child < 0) {
		tr->pid = (pid_t)syscall(SYS_gettid);
		sem_post(&tr->done);	/* started */
		serve(tr, false);
		return NULL;
	}
	tr->pid = child;
	sem_post(&tr->done);		/* started */
	do
		r = syscall(SYS_wait4, child, &st, __WALL, NULL);
	while (r < 0 && errno == EINTR);
	if (!tr->quit) {
		tr->gone = true;
		sem_post(&tr->done);	/* wake a caller waiting for a call */
	}
	return NULL;
}

void tracer_start(struct tracer *tr, void (*orphan)(void *arg), void *arg)
{
	sigset_t all, old;

	memset(tr, 0, sizeof(*tr));
	tr->orphan = orphan;
	tr->orphan_arg = arg;
	tr->parent = getpid();
	tr->stack = MAP_FAILED;
	if (sem_init(&tr->go, 0, 0) < 0)
		return;
	if (sem_init(&tr->done, 0, 0) < 0) {
		sem_destroy(&tr->go);
		return;
	}
	/* the host and the survivor inherit the mask in force when made */
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old) == 0) {
		int err = pthread_create(&tr->host, NULL, host_main, tr);

		(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err == 0) {
			wait_for(&tr->done);
			tr->running = true;
			return;
		}
	}
	sem_destroy(&tr->done);
	sem_destroy(&tr->go);
}

int tracer_call(struct tracer *tr, void (*fn)(void *), void *arg)
{
	if (!tr->running || tr->orphaned) {
		fn(arg);
		return 0;
	}
	if (tr->gone)
		return -1;
	tr->fn = fn;
	tr->arg = arg;
	sem_post(&tr->go);
	wait_for(&tr->done);
	return tr->fn ? -1 : 0;
}

bool tracer_is(const struct tracer *tr, pid_t tid)
{
	return tr->running ? tid == tr->pid : sys_is_thread_of(getpid(), tid);
}

void tracer_stop(struct tracer *tr)
{
	if (!tr->running)
		return;
	tr->quit = true;
	sem_post(&tr->go);
	(void)pthread_join(tr->host, NULL);
	if (tr->stack != MAP_FAILED)
		(void)munmap(tr->stack, tr->stack_size);
	sem_destroy(&tr->done);
	sem_destroy(&tr->go);
	tr->running = false;
}
