/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-tracee.h - what the pieces of the ptrace backend share about the
 * one thread under injection: its state (struct tracee: what is known of
 * it and what must be put back when it is released), the process's
 * session it belongs to (struct ptrace_session: the scratch page), a
 * system call to be made in it (struct tracee_call), and the few helpers
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
#include <time.h>

#include "failure.h"
#include "ptrace-ahead.h"
#include "ptrace-tracer.h"
#include "ptrace.h"
#include "targets.h"

#define SCRATCH_MAX	8192	/* largest node mask accepted (65536 nodes) */
#define SCRATCH_MASK_AT	64	/* the mask's offset in the page, after the cookie */
#define SCRATCH_NAME_AT	(SCRATCH_MASK_AT + SCRATCH_MAX)	/* a name an injected call reads */
#define SCRATCH_NAME_MAX 64

/* The general registers, as PTRACE_GETREGSET NT_PRSTATUS gives them. */
typedef struct user_regs_struct regs_t;

/* What the engine keeps in one process between threads. */
struct ptrace_session {
	pid_t pid;
	unsigned long page;	/* the scratch mapping it made there, 0: none */
	size_t page_len;
	uint64_t cookie;	/* random, in the page's first bytes: proof it is ours */
	size_t mask_len;	/* the node mask written there when it was mapped */
	unsigned char mask[SCRATCH_MAX];
	pid_t via;		/* a thread that made calls for us: asked first to unmap */
	bool allow_seccomp;	/* as the last request said */
	struct tracer tracer;	/* the thread every request is made from */
	struct ahead ahead;	/* threads held ahead, and parked ones */
	bool signalled;		/* a signal engine runs: nothing is held ahead */
	bool walked;		/* ... but for the walk it was told of */
	void (*orphan_fn)(void *arg);	/* what the tool's death calls first */
	void *orphan_arg;
};

/* One system call for the thread to make: number and arguments. */
struct tracee_call {
	long nr;
	unsigned long arg[6];
};

struct tracee {
	struct ptrace_session *s;
	const struct task_handle *h;
	pid_t pid, tid;
	const struct ptrace_request *req;
	struct ptrace_result *res;

	bool look_ahead;	/* -a: hold the threads after it (ptrace-ahead.h) */
	bool seized;		/* we are its tracer */
	bool interrupted;	/* PTRACE_INTERRUPT was asked, at `since' */
	struct timespec since;
	bool stopped;		/* it sits in a ptrace stop we have waited for */
	bool timed_out;

	regs_t regs0;		/* at the first stop */
	uint64_t mask0;		/* its signal mask at the first stop */
	bool mask_blocked;	/* its mask is currently "everything blocked" */
	bool have_restore;	/* write restore back before releasing */
	regs_t restore;
	int held_stop;		/* a stop signal held back, re-sent at release */

	bool in_call;		/* path A: calls are made at the entry of its own */
	regs_t entry;		/* path A: the registers at that entry stop */
	unsigned long insn;	/* path B: the system call instruction it is aimed at */
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

/* Whether a system call's return value is an error (-4095..-1). */
static inline bool tracee_is_error(long rv)
{
	return rv < 0 && rv >= -4095;
}

/* ---- ptrace.c ---------------------------------------------------------------- */

/* The thread makes the system call c; *rv is what it returned.  0, or -1
 * with the verdict said. */
int tracee_make_call(struct tracee *t, const struct tracee_call *c, long *rv);

/* t made for h (s NULL for a dry run), and the checks made before
 * attaching (tracee_preflight): 0 when they pass, else -1 with *res
 * saying why. */
int tracee_check(struct tracee *t, struct ptrace_session *s, const struct task_handle *h,
		 const struct ptrace_request *req, struct ptrace_result *res);

/* Check, attach, stop and prove the thread h names, run work(t, arg),
 * release it: the work's result, or -1 if it did not run.  look_ahead:
 * hold the threads after it in the listing meanwhile (ptrace-ahead.h). */
int tracee_run(struct ptrace_session *s, const struct task_handle *h, const struct ptrace_request *req,
	       struct ptrace_result *res, ptrace_work_fn work, void *arg, bool look_ahead);

/* ---- ptrace-check.c ---------------------------------------------------------- */

/* Refuse what can be known to fail, or to be unsafe, before touching the
 * thread.  0, or -1 with the verdict said. */
int tracee_preflight(struct tracee *t);

/* PTRACE_SEIZE said err (EPERM or EACCES): the verdict, as well as /proc
 * can tell why.  Returns -1. */
int tracee_explain_seize_refusal(struct tracee *t, int err);

/* ---- ptrace-scratch.c -------------------------------------------------------- */

/* The scratch page's length: room for the largest mask after the cookie. */
size_t scratch_len(void);

/* The session's page, proven still its own, else a new one mapped by
 * the thread.  0, or -1 with the verdict said. */
int scratch_ensure(struct tracee *t);

/* The session's page unmapped by the thread, if it is still the one.  0,
 * or -1 with the verdict said. */
int scratch_unmap(struct tracee *t);

/* The bytes of the request's node mask (0: a policy without nodes). */
size_t scratch_mask_bytes(const struct ptrace_request *req);

/* The request's mask in the session's page (see ptrace-scratch.c), its
 * address in *at; renew: make sure of the page again.  0, or -1. */
int scratch_mask(struct tracee *t, size_t len, bool renew, unsigned long *at);

#endif
