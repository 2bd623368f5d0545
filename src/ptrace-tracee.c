/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-tracee.c - what every part of the ptrace backend does to the
 * thread it holds: say how the work went (the result in the one failure
 * vocabulary) and make a ptrace request of it.  Below the engine, the
 * target memory and the architecture files, which all use it.
 */
#include "config.h"

#include "ptrace.h"

#if PMP_PTRACE_SUPPORTED

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "ptrace-tracee.h"

int tracee_verdict(struct tracee *t, enum failure f, int err, const char *detail)
{
	t->res->failure = f;
	t->res->err = err;
	snprintf(t->res->detail, sizeof(t->res->detail), "%s", detail ? detail : "");
	return -1;
}

int tracee_failed(struct tracee *t, int err, const char *what)
{
	if (err == ESRCH)
		return tracee_verdict(t, FAIL_EXITED, ESRCH, NULL);
	return tracee_verdict(t, FAIL_INJECTION, err, what);
}

long tracee_ptrace(int request, const struct tracee *t, unsigned long addr, void *data)
{
	return ptrace(request, t->tid, (void *)addr, data);
}

int tracee_set_regs(struct tracee *t, const regs_t *r)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)r, .iov_len = sizeof(*r) };

	if (tracee_ptrace(PTRACE_SETREGSET, t, NT_PRSTATUS, &iov) < 0)
		return tracee_failed(t, errno, "PTRACE_SETREGSET");
	return 0;
}

#endif /* PMP_PTRACE_SUPPORTED */
