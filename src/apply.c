/*
 * apply.c - a task handle to an outcome, for each action: set the policy
 * (pidfd_set_mempolicy, or the ptrace backend), foresee what a dry run can,
 * read the task's state for --show, move pages for --migrate; and when the
 * kernel refuses, gather the context that tells the admin why.  Prints
 * nothing.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "apply.h"
#include "compat.h"
#include "nodes.h"
#include "privs.h"
#include "ptrace.h"
#include "procfs.h"

static enum failure_reason reason_of_problem(enum handle_problem p)
{
	switch (p) {
	case HANDLE_NO_SUCH_PROCESS: return REASON_NO_SUCH_PROCESS;
	case HANDLE_NOT_A_PROCESS:   return REASON_NOT_A_PROCESS;
	case HANDLE_CANNOT_PIN:      return REASON_CANNOT_PIN;
	case HANDLE_INODE_MISMATCH:  return REASON_INODE_MISMATCH;
	case HANDLE_GONE:            return REASON_EXITED;
	case HANDLE_NO_THREAD_PIDFD: return REASON_NO_THREAD_PIDFD;
	case HANDLE_UNSETTLED:       return REASON_UNSETTLED;
	case HANDLE_OPEN_FAILED:     return REASON_ERRNO;
	case HANDLE_PROC_HIDDEN:     return REASON_PROC_HIDDEN;
	case HANDLE_OK:              break;
	}
	return REASON_NONE;
}

/* Would the target's cpuset leave none of the nodes?  The kernel
 * intersects them with the target's Mems_allowed (after remapping them for
 * --relative, which so never comes out empty) and refuses an empty result. */
static bool cpuset_refuses(const struct applier *a, struct task_handle *h,
			   struct outcome *o)
{
	char path[64], buf[4096], why[256];
	struct bitmask *allowed = NULL, *refused = NULL;
	bool refuses = false;
	ssize_t len;

	if (!a->policy->nodes || (a->policy->flags & MPOL_F_RELATIVE_NODES))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)h->pid, (int)h->tid);
	len = sys_read_file(path, buf, sizeof(buf));
	if (len < 0 || procfs_status_value(buf, (size_t)len, "Mems_allowed_list",
					   o->allowed, sizeof(o->allowed)) < 0)
		return false;
	if (nodes_parse(o->allowed, &allowed, why, sizeof(why)) < 0)
		return false;
	refused = numa_allocate_nodemask();
	if (!refused)
		goto out;
	for (unsigned int n = 0; n < a->policy->nodes->size; n++)
		if (numa_bitmask_isbitset(a->policy->nodes, n) &&
		    (n >= allowed->size || !numa_bitmask_isbitset(allowed, n)))
			numa_bitmask_setbit(refused, n);
	refuses = nodes_count(refused) == nodes_count(a->policy->nodes) &&
		  nodes_format(refused, o->refused, sizeof(o->refused)) == 0;
out:
	if (refused)
		numa_bitmask_free(refused);
	numa_bitmask_free(allowed);
	return refuses;
}

/* --dry-run: foresee the refusals that can be foreseen without the call
 * (kernel thread, missing CAP_SYS_NICE, nodes outside the target's cpuset);
 * the ptrace access check can only be known by the kernel. */
/* Whether the caller lacks CAP_SYS_NICE, asked of libcap once per run:
 * its capabilities do not change while it runs. */
static bool caller_lacks_sys_nice(struct applier *a)
{
	if (!a->asked_sys_nice) {
		a->have_sys_nice = privs_have_sys_nice();
		a->asked_sys_nice = true;
	}
	return a->have_sys_nice == 0;
}

static void foresee_refusal(struct applier *a, struct task_handle *h,
			    struct outcome *o)
{
	o->kind = OUTCOME_FAILED;
	if (targets_task_stat(h)->flags & PMP_PF_KTHREAD)
		o->reason = REASON_KERNEL_THREAD;
	else if (caller_lacks_sys_nice(a))
		o->reason = REASON_NEEDS_CAP;
	else if (cpuset_refuses(a, h, o))
		o->reason = REASON_NODES_NOT_ALLOWED;
	else
		o->kind = OUTCOME_WOULD_APPLY;
}

static void explain_read_failure(struct task_handle *h, int err, struct outcome *o)
{
	o->kind = OUTCOME_FAILED;
	o->err = err;
	o->reason = REASON_ERRNO;
	if ((err == ENOENT || err == EACCES) && targets_alive(h)) {
		o->reason = REASON_PROC_HIDDEN;
	} else if (err == ENOENT || err == ESRCH) {
		o->kind = h->per_thread ? OUTCOME_GONE : OUTCOME_FAILED;
		o->reason = REASON_EXITED;
	}
}

static void explain_refusal(struct applier *a, struct task_handle *h,
			    int err, struct outcome *o)
{
	o->kind = OUTCOME_FAILED;
	o->err = err;
	o->reason = REASON_ERRNO;
	switch (err) {
	case ESRCH:
		o->kind = h->per_thread ? OUTCOME_GONE : OUTCOME_FAILED;
		o->reason = REASON_EXITED;
		break;
	case EPERM:
		if (targets_task_stat(h)->flags & PMP_PF_KTHREAD)
			o->reason = REASON_KERNEL_THREAD;
		else if (caller_lacks_sys_nice(a))
			o->reason = REASON_NEEDS_CAP;
		else
			o->reason = REASON_PTRACE_DENIED;
		break;
	case EACCES:
		o->reason = REASON_PTRACE_DENIED;
		break;
	case EINVAL:
		if (cpuset_refuses(a, h, o))
			o->reason = REASON_NODES_NOT_ALLOWED;
		break;
	default:
		break;
	}
}

/* --show: the thread's policy and allowed nodes, its process's pages
 * (read once per process, not once per thread). */
static void read_state(struct applier *a, struct task_handle *h, struct outcome *o)
{
	if (a->pages_of != h->pid) {
		a->pages_of = 0;
		if (inspect_process_pages(h->pid, &a->pages) < 0) {
			explain_read_failure(h, errno, o);
			return;
		}
		a->pages_of = h->pid;
	}
	if (inspect_thread(h->pid, h->tid, &o->state) < 0) {
		explain_read_failure(h, errno, o);
		return;
	}
	memcpy(o->state.pages, a->pages.pages, sizeof(o->state.pages));
	o->state.nnodes = a->pages.nnodes;
	o->kind = OUTCOME_SHOWN;
}

/* Move the pages the process already has onto the policy's nodes:
 * migrate_pages(2) from every other node to them.  Done on the main
 * thread's handle, while its pidfd is held and alive, so the PID still
 * names the process that was confirmed. */
static void migrate_process(const struct applier *a, struct task_handle *h, struct outcome *o)
{
	struct bitmask *from;
	long r;

	if (h->tid != h->pid || !a->policy->nodes)
		return;
	from = numa_allocate_nodemask();
	if (!from) {
		o->migrate_err = ENOMEM;
		return;
	}
	for (unsigned int n = 0; n < numa_nodes_ptr->size && n < from->size; n++)
		if (numa_bitmask_isbitset(numa_nodes_ptr, n) && !numa_bitmask_isbitset(a->policy->nodes, n))
			numa_bitmask_setbit(from, n);
	if (nodes_count(from) == 0) {
		o->nothing_to_move = true;
	} else if (sys_pidfd_exited(h->pidfd) != 0) {
		o->migrate_err = ESRCH;
	} else {
		r = numa_migrate_pages(h->pid, from, a->policy->nodes);
		if (r < 0) {
			o->migrate_err = errno;
		} else {
			o->migrated = true;
			o->not_moved = r;
		}
	}
	numa_bitmask_free(from);
}

/* The ptrace backend: the thread calls set_mempolicy(2) itself. */
static void inject(struct applier *a, struct task_handle *h, struct outcome *o)
{
	struct ptrace_request req = {
		.mode = a->policy->mode | (int)a->policy->flags,
		.mask = policy_mask_words(a->policy),
		.maxnode = policy_maxnode(a->policy),
		.allow_seccomp = a->allow_seccomp,
	};
	struct ptrace_result res;

	ptrace_set_thread_policy(h->pid, h->tid, &req, &res);
	o->kind = OUTCOME_FAILED;
	o->err = res.err;
	switch (res.verdict) {
	case PTRACE_SET:
		o->kind = OUTCOME_APPLIED;
		o->err = 0;
		break;
	case PTRACE_CALL_FAILED:	/* the same errors as the syscall's, from the thread itself */
		explain_refusal(a, h, res.err, o);
		break;
	case PTRACE_PROC_HIDDEN:
		o->reason = REASON_PROC_HIDDEN;
		break;
	case PTRACE_GONE:
	case PTRACE_ZOMBIE:
		o->kind = h->per_thread ? OUTCOME_GONE : OUTCOME_FAILED;
		o->reason = REASON_EXITED;
		o->err = ESRCH;
		break;
	case PTRACE_DENIED:
		o->reason = REASON_TRACE_DENIED;
		o->yama_scope = res.yama_scope;
		break;
	case PTRACE_ALREADY_TRACED:
		o->reason = REASON_ALREADY_TRACED;
		o->tracer = res.tracer;
		break;
	case PTRACE_SECCOMP:
		o->reason = REASON_SECCOMP;
		break;
	case PTRACE_COMPAT_TASK:
		o->reason = REASON_COMPAT_TASK;
		break;
	case PTRACE_KERNEL_THREAD:
		o->reason = REASON_KERNEL_THREAD;
		o->err = EPERM;
		break;
	case PTRACE_UNSUPPORTED:
		o->reason = REASON_PTRACE_UNSUPPORTED;
		break;
	case PTRACE_FAILED:
		o->reason = REASON_INJECTION_FAILED;
		snprintf(o->detail, sizeof(o->detail), "%s", res.detail);
		break;
	}
}

/* Zero up to the buffers and leave those empty: clearing them (a
 * kilobyte) was a fifth of the tool's own work per thread. */
static void outcome_init(struct outcome *o)
{
	memset(o, 0, offsetof(struct outcome, allowed));
	o->allowed[0] = o->refused[0] = o->detail[0] = '\0';
	o->state.policy[0] = o->state.mems_allowed[0] = '\0';
	o->state.nnodes = 0;
}

void apply_task(struct applier *a, struct task_handle *h, struct outcome *o)
{
	outcome_init(o);
	/* reading /proc needs no pidfd: a kernel without thread pidfds can
	 * still show every thread */
	if (a->action == ACTION_SHOW && h->problem == HANDLE_NO_THREAD_PIDFD) {
		read_state(a, h, o);
		return;
	}
	/* nor does ptrace */
	if (a->action == ACTION_SET && a->backend == BACKEND_PTRACE &&
	    (h->problem == HANDLE_OK || h->problem == HANDLE_NO_THREAD_PIDFD)) {
		inject(a, h, o);
		if (o->kind == OUTCOME_APPLIED && a->migrate)
			migrate_process(a, h, o);
		return;
	}
	if (h->problem != HANDLE_OK) {
		o->reason = reason_of_problem(h->problem);
		o->err = h->err ? h->err : (h->problem == HANDLE_GONE ? ESRCH : 0);
		o->kind = (h->problem == HANDLE_GONE && h->per_thread) ? OUTCOME_GONE : OUTCOME_FAILED;
		return;
	}
	switch (a->action) {
	case ACTION_SHOW:
		read_state(a, h, o);
		return;
	case ACTION_DRY_RUN:
		foresee_refusal(a, h, o);
		return;
	case ACTION_MIGRATE:
		migrate_process(a, h, o);
		o->kind = o->migrate_err ? OUTCOME_FAILED : OUTCOME_APPLIED;
		o->err = o->migrate_err;
		o->reason = REASON_ERRNO;
		if (o->migrate_err == EPERM)
			o->reason = caller_lacks_sys_nice(a) ? REASON_NEEDS_CAP : REASON_PTRACE_DENIED;
		else if (o->migrate_err == ESRCH)
			o->reason = REASON_EXITED;
		return;
	case ACTION_SET:
		break;
	}
	if (sys_pidfd_set_mempolicy(a->setter, h->pidfd, a->policy->mode | (int)a->policy->flags,
				    policy_mask_words(a->policy), policy_maxnode(a->policy)) < 0) {
		explain_refusal(a, h, errno, o);
		return;
	}
	o->kind = OUTCOME_APPLIED;
	if (a->migrate)
		migrate_process(a, h, o);
}
