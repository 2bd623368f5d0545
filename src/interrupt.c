/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * interrupt.c - the signal noted by a handler that does nothing else, and
 * the death by that signal once the run has been reported.
 */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "interrupt.h"

static volatile sig_atomic_t caught;
static unsigned long unreached;

static void note(int sig)
{
	caught = sig;
}

void interrupt_catch(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = note;
	/* a write to a full pipe goes on rather than failing with EINTR */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		/* a signal the shell made us ignore (nohup, a background job
		 * of a shell without job control) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

int interrupt_signal(void)
{
	return caught;
}

void interrupt_left(unsigned long n)
{
	unreached += n;
}

unsigned long interrupt_unreached(void)
{
	return unreached;
}

void interrupt_die(void)
{
	int sig = caught;
	sigset_t set;

	if (!sig)
		return;
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}
