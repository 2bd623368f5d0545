/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigengine-unsupported.c - the signal engine where the ptrace backend
 * does not exist (any architecture but x86_64 and aarch64): no engine is
 * ever started, and its first thread is set the ptrace backend's way
 * (which answers it unsupported), as every thread after it.
 */
#include "config.h"

#include "sigengine.h"

#if !PMP_SIGENGINE_SUPPORTED

#include <stdio.h>
#include <string.h>

struct sigengine *sigengine_start(struct ptrace_session *s, const struct sigplan *plan,
				  const struct task_handle *h, const struct ptrace_request *req,
				  struct ptrace_result *res, char *why, size_t len)
{
	ptrace_set_thread_policy(s, h, req, res);
	snprintf(why, len, "%s", plan->why);
	return NULL;
}

void sigengine_send(struct sigengine *e, const struct task_handle *h, struct sigticket *t)
{
	(void)e;
	(void)h;
	memset(t, 0, sizeof(*t));
}

int sigengine_collect(struct sigengine *e, struct sigticket *t, const struct task_handle *h,
		      struct ptrace_result *res, long *delay_us, bool *interrupted)
{
	(void)e, (void)t, (void)h, (void)res, (void)delay_us, (void)interrupted;
	return -1;
}

void sigengine_end(struct sigengine *e, char *note, size_t len)
{
	(void)e;
	if (len)
		note[0] = '\0';
}

#endif /* !PMP_SIGENGINE_SUPPORTED */
