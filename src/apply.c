/* SPDX-License-Identifier: GPL-2.0-or-later */
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
#include <unistd.h>

#include "apply.h"
#include "cgroup.h"
#include "compat.h"
#include "nodes.h"
#include "privs.h"
#include "ptrace.h"
#include "procfs.h"
#include "spread.h"
#include "text.h"

/* The one rule for how a failure counts: a thread found by -a that has
 * exited meanwhile is gone, not failed. */
static void fail(struct outcome *o, const struct task_handle *h, enum failure f, int err)
{
	o->kind = h->per_thread && failure_is_gone(f) ? OUTCOME_GONE : OUTCOME_FAILED;
	o->failure = f;
	o->detail.err = err;
}

/* A task that is a zombie: a thread that has exited, or, named by -p, a
 * main thread that has exited (pthread_exit) while the process lives on
 * in its other threads, which -a would reach. */
static enum failure exited(const struct task_handle *h)
{
	return !h->per_thread && targets_alive(h) ? FAIL_LEADER_EXITED : FAIL_EXITED;
}

/* Would the target's cpuset leave none of the nodes?  The kernel
 * intersects them with the target's Mems_allowed (after remapping them for
 * --relative, which so never comes out empty) and refuses an empty result. */
static bool cpuset_refuses(struct applier *a, struct task_handle *h, struct outcome *o)
{
	struct bitmask *allowed = NULL, *refused = NULL;
	struct proc_status st;
	bool refuses = false;
	char why[256];

	if (!a->policy->nodes || (a->policy->flags & MPOL_F_RELATIVE_NODES))
		return false;
	if (procfs_task_status(h->pid, h->tid, &st) < 0 || !st.mems_allowed[0])
		return false;
	snprintf(a->allowed, sizeof(a->allowed), "%s", st.mems_allowed);
	if (nodes_parse(a->allowed, &allowed, why, sizeof(why)) < 0)
		return false;
	refused = numa_allocate_nodemask();
	if (!refused)
		goto out;
	for (unsigned int n = 0; n < a->policy->nodes->size; n++)
		if (numa_bitmask_isbitset(a->policy->nodes, n) &&
		    (n >= allowed->size || !numa_bitmask_isbitset(allowed, n)))
			numa_bitmask_setbit(refused, n);
	refuses = nodes_count(refused) == nodes_count(a->policy->nodes) &&
		  nodes_format(refused, a->refused, sizeof(a->refused)) == 0;
	if (refuses) {
		o->detail.allowed = a->allowed;
		o->detail.refused = a->refused;
	}
out:
	if (refused)
		numa_bitmask_free(refused);
	numa_bitmask_free(allowed);
	return refuses;
}

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

/* --dry-run, syscall backend: foresee the refusals that can be foreseen
 * without the call (kernel thread, missing CAP_SYS_NICE, nodes outside the
 * target's cpuset); its ptrace access check can only be known by the
 * kernel. */
static void foresee_refusal(struct applier *a, struct task_handle *h,
			    struct outcome *o)
{
	const struct proc_stat *st = targets_task_stat(h);

	if (targets_is_kernel_thread(h))
		fail(o, h, FAIL_KERNEL_THREAD, 0);
	else if (st->state == 'Z')
		fail(o, h, exited(h), ESRCH);
	else if (caller_lacks_sys_nice(a))
		fail(o, h, FAIL_NEEDS_CAP, 0);
	else if (cpuset_refuses(a, h, o))
		fail(o, h, FAIL_NODES_NOT_ALLOWED, 0);
	else
		o->kind = OUTCOME_WOULD_APPLY;
}

/* The kernel (or the thread itself, through ptrace) refused the policy
 * with err: say why in the terms an admin can act on. */
static void explain_refusal(struct applier *a, struct task_handle *h,
			    int err, struct outcome *o)
{
	enum failure f = FAIL_ERRNO;

	switch (err) {
	case ESRCH:
		f = FAIL_EXITED;
		break;
	case EPERM:
		if (targets_is_kernel_thread(h))
			f = FAIL_KERNEL_THREAD;
		else if (caller_lacks_sys_nice(a))
			f = FAIL_NEEDS_CAP;
		else
			f = FAIL_ACCESS_DENIED;
		break;
	case EACCES:
		f = FAIL_ACCESS_DENIED;
		break;
	case EINVAL:
		if (cpuset_refuses(a, h, o))
			f = FAIL_NODES_NOT_ALLOWED;
		break;
	default:
		break;
	}
	fail(o, h, f, err);
}

/* --show: the thread's policy and allowed nodes, its process's pages
 * (read once per process, not once per thread). */
static void read_state(struct applier *a, struct task_handle *h, struct outcome *o)
{
	/* a main thread that exited has no memory map; the process's live
	 * threads have it */
	bool dead_leader = h->tid == h->pid && targets_task_stat(h)->state == 'Z';

	if (dead_leader && exited(h) == FAIL_LEADER_EXITED) {
		fail(o, h, FAIL_LEADER_EXITED, 0);
		return;
	}
	if (a->pages_of != h->pid) {
		a->pages_of = 0;
		if (inspect_process_pages(h->pid, h->tid, &a->pages) < 0) {
			fail(o, h, targets_proc_failure(h, errno), errno);
			return;
		}
		if (!dead_leader)
			a->pages_of = h->pid;
	}
	if (inspect_thread(h->pid, h->tid, &a->shown, &a->witness) < 0) {
		fail(o, h, targets_proc_failure(h, errno), errno);
		return;
	}
	memcpy(a->shown.pages, a->pages.pages, sizeof(a->shown.pages));
	a->shown.nnodes = a->pages.nnodes;
	o->state = &a->shown;
	o->kind = OUTCOME_SHOWN;
}

/* An interleave: the pages re-spread over its nodes, evenly or by the
 * weighted interleave's node weights (spread.h). */
static void spread_pages(struct applier *a, struct task_handle *h, struct migration *m)
{
	struct spread_options opt = a->spreading;
	struct spread_result *res = &a->spread;

	if (sys_pidfd_exited(h->pidfd) != 0) {
		m->err = ESRCH;
		return;
	}
	opt.weights = NULL;
	if (a->policy->mode == MPOL_WEIGHTED_INTERLEAVE &&
	    spread_read_weights(a->weights, SPREAD_MAX_NODES) == 0)
		opt.weights = a->weights;
	(void)spread_process(h->pid, a->policy->nodes, &opt, res);
	m->spread = true;
	m->moved = !res->err;
	m->err = res->err;
	m->pages = res->pages;
	m->moved_pages = res->moved;
	m->not_moved = res->not_moved;
	m->detail = res;
}

/* Move the pages the process already has onto the policy's nodes:
 * migrate_pages(2) from every other node to them; for an interleave, an
 * even share on each of its nodes.  Done on the main thread's handle,
 * while its pidfd is held and alive, so the PID still names the process
 * that was confirmed. */
static void migrate_process(struct applier *a, struct task_handle *h, struct migration *m)
{
	struct bitmask *from;
	long r;

	if (h->tid != h->pid || !a->policy->nodes)
		return;
	if (a->policy->mode == MPOL_INTERLEAVE || a->policy->mode == MPOL_WEIGHTED_INTERLEAVE) {
		spread_pages(a, h, m);
		return;
	}
	from = numa_allocate_nodemask();
	if (!from) {
		m->err = ENOMEM;
		return;
	}
	for (unsigned int n = 0; n < numa_nodes_ptr->size && n < from->size; n++)
		if (numa_bitmask_isbitset(numa_nodes_ptr, n) && !numa_bitmask_isbitset(a->policy->nodes, n))
			numa_bitmask_setbit(from, n);
	if (nodes_count(from) == 0) {
		m->nothing_to_move = true;
	} else if (sys_pidfd_exited(h->pidfd) != 0) {
		m->err = ESRCH;
	} else {
		r = numa_migrate_pages(h->pid, from, a->policy->nodes);
		if (r < 0) {
			m->err = errno;
		} else {
			m->moved = true;
			m->not_moved = r;
		}
	}
	numa_bitmask_free(from);
}

/* --migrate-only: the pages move, no policy is set. */
static void migrate_only(struct applier *a, struct task_handle *h, struct outcome *o)
{
	int err;

	migrate_process(a, h, &o->migration);
	err = o->migration.err;
	if (!err)
		o->kind = OUTCOME_APPLIED;
	else if (err == EPERM)
		fail(o, h, caller_lacks_sys_nice(a) ? FAIL_NEEDS_CAP : FAIL_ACCESS_DENIED, err);
	else
		fail(o, h, err == ESRCH ? FAIL_EXITED : FAIL_ERRNO, err);
}

static struct ptrace_request ptrace_request_of(const struct applier *a)
{
	return (struct ptrace_request){
		.mode = a->policy->mode | (int)a->policy->flags,
		.mask = policy_mask_words(a->policy),
		.maxnode = policy_maxnode(a->policy),
		.allow_seccomp = a->allow_seccomp,
	};
}

/* The ptrace backend's own refusal as an outcome. */
static void ptrace_failed(struct applier *a, struct task_handle *h, const struct ptrace_result *res,
			  struct outcome *o)
{
	o->detail.tracer = res->tracer;
	o->detail.yama_scope = res->yama_scope;
	snprintf(a->injection, sizeof(a->injection), "%s", res->detail);
	o->detail.text = a->injection;
	fail(o, h, res->failure, res->err);
}

/* The ptrace backend: the thread calls set_mempolicy(2) itself. */
static void set_by_ptrace(struct applier *a, struct task_handle *h, struct outcome *o)
{
	struct ptrace_request req = ptrace_request_of(a);
	struct ptrace_result res;

	if (a->session && ptrace_session_pid(a->session) != h->pid)
		apply_process_done(a, ptrace_session_pid(a->session));
	if (!a->session)
		a->session = ptrace_session_begin(h->pid);
	ptrace_set_thread_policy(a->session, h, &req, &res);
	o->held_us = res.held_us;
	if (res.failure == FAIL_NONE) {
		/* the call ran in the thread: the syscall's errors, from itself */
		if (res.err)
			explain_refusal(a, h, res.err, o);
		else
			o->kind = OUTCOME_APPLIED;
		return;
	}
	ptrace_failed(a, h, &res, o);
}

/* --dry-run, ptrace backend: what the engine would refuse, then what the
 * thread's own set_mempolicy(2) would (no capability is needed to set
 * one's own policy: only nodes outside its cpuset). */
static void foresee_by_ptrace(struct applier *a, struct task_handle *h, struct outcome *o)
{
	struct ptrace_request req = ptrace_request_of(a);
	struct ptrace_result res;

	ptrace_foresee(h, &req, &res);
	if (res.failure != FAIL_NONE)
		ptrace_failed(a, h, &res, o);
	else if (cpuset_refuses(a, h, o))
		fail(o, h, FAIL_NODES_NOT_ALLOWED, 0);
	else
		o->kind = OUTCOME_WOULD_APPLY;
}

/* Whether h's process is in a frozen cgroup, whose threads would never
 * stop for ptrace (each would cost the engine its stop timeout).  Asked
 * once per process. */
static bool frozen_refuses(struct applier *a, struct task_handle *h, struct outcome *o)
{
	if (a->frozen_of != h->pid) {
		char dir[4096];

		a->frozen_of = h->pid;
		a->frozen_cgroup[0] = '\0';
		if (cgroup_frozen(h->pid, dir, sizeof(dir), &a->frozen_v1) == 1)
			text_escape(dir, sizeof(dir), a->frozen_cgroup, sizeof(a->frozen_cgroup));
	}
	if (!a->frozen_cgroup[0])
		return false;
	o->detail.cgroup = a->frozen_cgroup;
	o->detail.cgroup_v1 = a->frozen_v1;
	fail(o, h, FAIL_FROZEN, 0);
	return true;
}

/* The syscall backend: pidfd_set_mempolicy(2) on the handle's pidfd. */
static void set_by_syscall(struct applier *a, struct task_handle *h, struct outcome *o)
{
	if (sys_pidfd_set_mempolicy(a->setter, h->pidfd, a->policy->mode | (int)a->policy->flags,
				    policy_mask_words(a->policy), policy_maxnode(a->policy)) < 0)
		explain_refusal(a, h, errno, o);
	else
		o->kind = OUTCOME_APPLIED;
}

/* getpid(2) once: it is asked for every thread, and the tool never forks. */
static pid_t self_pid(void)
{
	static pid_t self;

	if (!self)
		self = getpid();
	return self;
}

static void apply_one(struct applier *a, struct task_handle *h, struct outcome *o)
{
	*o = (struct outcome){ .detail.yama_scope = -1, .held_us = -1 };
	/* reading /proc needs no pidfd: a kernel without thread pidfds can
	 * still show every thread */
	if (a->action == ACTION_SHOW && h->problem == FAIL_NO_THREAD_PIDFD) {
		read_state(a, h, o);
		return;
	}
	/* nor does ptrace; a dry run foresees it by the same rules */
	if ((a->action == ACTION_SET || a->action == ACTION_DRY_RUN) && a->backend == BACKEND_PTRACE &&
	    (h->problem == FAIL_NONE || h->problem == FAIL_NO_THREAD_PIDFD)) {
		if (h->pid == self_pid()) {	/* PTRACE_SEIZE of oneself: EPERM */
			fail(o, h, FAIL_SELF, 0);
			return;
		}
		if (frozen_refuses(a, h, o))
			return;
		if (a->action == ACTION_DRY_RUN) {
			foresee_by_ptrace(a, h, o);
			if (o->kind == OUTCOME_FAILED && o->failure == FAIL_EXITED)
				o->failure = exited(h);
			return;
		}
		set_by_ptrace(a, h, o);
		if (o->kind == OUTCOME_FAILED && o->failure == FAIL_EXITED)
			o->failure = exited(h);
		if (o->kind == OUTCOME_APPLIED && a->migrate)
			migrate_process(a, h, &o->migration);
		return;
	}
	if (h->problem != FAIL_NONE) {
		fail(o, h, h->problem, h->err);
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
		migrate_only(a, h, o);
		return;
	case ACTION_SET:
		break;
	}
	set_by_syscall(a, h, o);
	if (o->kind == OUTCOME_FAILED && o->failure == FAIL_EXITED)
		o->failure = exited(h);
	if (o->kind == OUTCOME_APPLIED && a->migrate)
		migrate_process(a, h, &o->migration);
}

void apply_task(struct applier *a, struct task_handle *h, struct outcome *o)
{
	/* read before it changes, as numa_maps shows it */
	bool before = a->read_before && (a->action == ACTION_SET || a->action == ACTION_DRY_RUN) &&
		      h->problem == FAIL_NONE && inspect_policy(h->pid, h->tid, &a->before, &a->witness) == 0;

	apply_one(a, h, o);
	if (before)
		o->before = &a->before;
}

void apply_process_done(struct applier *a, pid_t pid)
{
	if (!a->session || ptrace_session_pid(a->session) != pid)
		return;
	ptrace_session_end(a->session);
	a->session = NULL;
}
