/*
 * ptrace-unsupported.c - the ptrace backend where it does not exist (any
 * architecture but x86_64 and aarch64): the entry point answers
 * FAIL_ARCH_UNSUPPORTED and touches nothing.
 */
#include "config.h"

#include "ptrace.h"

#if !PMP_PTRACE_SUPPORTED

#include <stdio.h>
#include <string.h>

void ptrace_set_thread_policy(const struct task_handle *h, const struct ptrace_request *req,
			      struct ptrace_result *res)
{
	(void)h;
	(void)req;
	memset(res, 0, sizeof(*res));
	res->failure = FAIL_ARCH_UNSUPPORTED;
	res->yama_scope = -1;
	snprintf(res->detail, sizeof(res->detail), "the ptrace backend supports x86_64 and aarch64 only");
}

void ptrace_foresee(const struct task_handle *h, const struct ptrace_request *req,
		    struct ptrace_result *res)
{
	ptrace_set_thread_policy(h, req, res);
}

#endif /* !PMP_PTRACE_SUPPORTED */
