/*
 * ptrace-tracee.h - what the pieces of the ptrace backend share about the
 * one thread under injection: its state (struct tracee: what is known of
 * it and what must be put back when it is released) and the few helpers
 * every piece uses to make a request of it and to say how it went.  Only
 * the ptrace files include it (ptrace.c, ptrace-mem.c, ptrace-<arch>.c);
 * the rest of the tool sees ptrace.h.  The helpers are defined in ptrace.c.
 */
#ifndef PMP_PTRACE_TRACEE_H
#define PMP_PTRACE_TRACEE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "failure.h"
#include "ptrace.h"
#include "targets.h"

#define SCRATCH_MAX	8192	/* largest node mask accepted (65536 nodes) */

/* The general registers, as PTRACE_GETREGSET NT_PRSTATUS gives them. */
typedef struct user_regs_struct regs_t;

struct tracee {
	const struct task_handle *h;
	pid_t pid, tid;
	const struct ptrace_request *req;
	struct ptrace_result *res;

	bool seized;		/* we are its tracer */
	bool stopped;		/* it sits in a ptrace stop we have waited for */
	bool timed_out;

	regs_t regs0;		/* at the first stop */
	uint64_t mask0;		/* its signal mask at the first stop */
	bool mask_blocked;	/* its mask is currently "everything blocked" */
	bool have_restore;	/* write restore back before releasing */
	regs_t restore;
	int held_stop;		/* a stop signal held back, re-sent at release */

	unsigned long scratch;	/* where the node mask is, 0 if nowhere */
	size_t scratch_len;
	bool scratch_dirty;	/* the old bytes must be written back */
	unsigned char saved[SCRATCH_MAX];
};

/* Say how it went in t->res; returns -1, so that a failure can be
 * returned in one statement. */
int tracee_verdict(struct tracee *t, enum failure f, int err, const char *detail);

/* A request that failed with err: FAIL_EXITED for ESRCH, else
 * FAIL_INJECTION with `what' as the detail.  Returns -1. */
int tracee_failed(struct tracee *t, int err, const char *what);

/* ptrace(2) on the thread. */
long tracee_ptrace(int request, const struct tracee *t, unsigned long addr, void *data);

/* Write the thread's general registers.  0, or -1 with the verdict said. */
int tracee_set_regs(struct tracee *t, const regs_t *r);

#endif
