/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-unsupported.c - the ptrace backend where it does not exist (any
 * architecture but x86_64 and aarch64): sessions hold nothing, and every
 * thread is answered FAIL_ARCH_UNSUPPORTED untouched.
 */
#include "config.h"

#include "ptrace.h"

#if !PMP_PTRACE_SUPPORTED

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ptrace_session {
	pid_t pid;
};

struct ptrace_session *ptrace_session_begin(pid_t pid)
{
	struct ptrace_session *s = calloc(1, sizeof(*s));

	if (s)
		s->pid = pid;
	return s;
}

pid_t ptrace_session_pid(const struct ptrace_session *s)
{
	return s->pid;
}

void ptrace_session_end(struct ptrace_session *s)
{
	free(s);
}

void ptrace_set_thread_policy(struct ptrace_session *s, const struct task_handle *h,
			      const struct ptrace_request *req, struct ptrace_result *res)
{
	(void)s;
	(void)h;
	(void)req;
	memset(res, 0, sizeof(*res));
	res->failure = FAIL_ARCH_UNSUPPORTED;
	res->yama_scope = -1;
	res->held_us = -1;
	snprintf(res->detail, sizeof(res->detail), "the ptrace backend supports x86_64 and aarch64 only");
}

void ptrace_session_walk(struct ptrace_session *s, const pid_t *tids, size_t n)
{
	(void)s;
	(void)tids;
	(void)n;
}

void ptrace_foresee(const struct task_handle *h, const struct ptrace_request *req,
		    struct ptrace_result *res)
{
	ptrace_set_thread_policy(NULL, h, req, res);
}

#endif /* !PMP_PTRACE_SUPPORTED */
