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
#include "interrupt.h"
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

/* Whether the thread runs under a seccomp filter, which is what can refuse
 * it its own set_mempolicy(2) with EPERM (an LSM can too). */
static bool thread_under_seccomp(const struct task_handle *h)
{
	struct proc_status st;

	return procfs_task_status(h->pid, h->tid, &st) == 0 && st.seccomp > 0;
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
		else if (a->backend == BACKEND_PTRACE)	/* no capability is needed for one's own */
			f = thread_under_seccomp(h) ? FAIL_SECCOMP_REFUSED : FAIL_ACCESS_DENIED;
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

/* A thread's session: one per process, the one before ended first. */
static void ensure_session(struct applier *a, const struct task_handle *h)
{
	if (a->session && ptrace_session_pid(a->session) != h->pid)
		apply_process_done(a, ptrace_session_pid(a->session));
	if (!a->session)
		a->session = ptrace_session_begin(h->pid);
}

/* What the ptrace backend said of the thread (set through ptrace or by
 * its signal handler) as an outcome. */
static void ptrace_outcome(struct applier *a, struct task_handle *h, const struct ptrace_result *res,
			   struct outcome *o)
{
	if (res->failure == FAIL_NONE) {
		/* the call ran in the thread: the syscall's errors, from itself */
		if (res->err)
			explain_refusal(a, h, res->err, o);
		else
			o->kind = OUTCOME_APPLIED;
		return;
	}
	ptrace_failed(a, h, res, o);
}

/* The ptrace backend: the thread calls set_mempolicy(2) itself. */
static void set_by_ptrace(struct applier *a, struct task_handle *h, struct outcome *o)
{
	struct ptrace_request req = ptrace_request_of(a);
	struct ptrace_result res;

	ensure_session(a, h);
	ptrace_set_thread_policy(a->session, h, &req, &res);
	o->held_us = res.held_us;
	o->path = PATH_PTRACE;
	ptrace_outcome(a, h, &res, o);
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

/* The ptrace backend's refusals before any path: a handle that could not
 * be made (a kernel without thread pidfds still lets ptrace go by TID),
 * the tool itself (PTRACE_SEIZE of oneself: EPERM), a frozen cgroup.
 * true when one decided. */
static bool ptrace_refuses(struct applier *a, struct task_handle *h, struct outcome *o)
{
	if (h->problem != FAIL_NONE && h->problem != FAIL_NO_THREAD_PIDFD) {
		fail(o, h, h->problem, h->err);
		return true;
	}
	if (h->pid == self_pid()) {
		fail(o, h, FAIL_SELF, 0);
		return true;
	}
	return frozen_refuses(a, h, o);
}

/* The signal engine's plan of h's process, read once per process. */
static const struct sigplan *plan_of(struct applier *a, pid_t pid)
{
	if (a->plan_of != pid) {
		sigengine_plan(pid, &a->plan);
		a->plan_of = pid;
		a->engine_tries = 0;
		a->engine_why[0] = '\0';
	}
	return &a->plan;
}

/* --dry-run: the path a real run would take.  The signal engine is for
 * -a; its handler goes in through the first thread, which ptrace sets. */
static void foresee_path(struct applier *a, struct task_handle *h, struct outcome *o)
{
	const struct sigplan *plan;
	bool eintr;

	o->path = PATH_PTRACE;
	if (a->no_signal || !h->per_thread)
		return;
	plan = plan_of(a, h->pid);
	if (!plan->sig) {
		o->path_why = plan->why;
	} else if ((o->engine = true) && a->installer_of != h->pid) {
		a->installer_of = h->pid;
		o->path_why = "the signal handler would be put in through it";
	} else if (sigengine_route(plan, h->tid, a->path_why, sizeof(a->path_why), &eintr) == 0) {
		o->path = PATH_SIGNAL;
	} else {
		o->path_why = a->path_why;
	}
}

/* --show -o PATH: the path a run with the same options would take, by
 * the dry run's rules (no policy: only the engine's own refusals). */
static void foresee_shown_path(struct applier *a, struct task_handle *h, struct outcome *o)
{
	const struct ptrace_request req = { .allow_seccomp = a->allow_seccomp };
	struct outcome would = { .detail.yama_scope = -1 };
	struct ptrace_result res;

	if (a->backend == BACKEND_SYSCALL) {
		o->path = h->problem == FAIL_NONE ? PATH_SYSCALL : PATH_NONE;
		return;
	}
	if (ptrace_refuses(a, h, &would))
		return;
	ptrace_foresee(h, &req, &res);
	if (res.failure == FAIL_NONE)
		foresee_path(a, h, o);
}

/* The ptrace backend, one thread (a dry run foresees it by the same
 * rules). */
static void apply_ptrace(struct applier *a, struct task_handle *h, struct outcome *o)
{
	if (ptrace_refuses(a, h, o))
		return;
	if (a->action == ACTION_DRY_RUN) {
		foresee_by_ptrace(a, h, o);
		if (o->kind == OUTCOME_WOULD_APPLY)
			foresee_path(a, h, o);
	} else {
		set_by_ptrace(a, h, o);
	}
	if (o->kind == OUTCOME_FAILED && o->failure == FAIL_EXITED)
		o->failure = exited(h);
	if (o->kind == OUTCOME_APPLIED && a->migrate)
		migrate_process(a, h, &o->migration);
}

static void show_one(struct applier *a, struct task_handle *h, struct outcome *o)
{
	read_state(a, h, o);
	if (a->show_path && o->kind == OUTCOME_SHOWN)
		foresee_shown_path(a, h, o);
}

static void apply_one(struct applier *a, struct task_handle *h, struct outcome *o)
{
	*o = (struct outcome){ .detail.yama_scope = -1, .held_us = -1, .delay_us = -1 };
	/* reading /proc needs no pidfd: a kernel without thread pidfds can
	 * still show every thread */
	if (a->action == ACTION_SHOW && h->problem == FAIL_NO_THREAD_PIDFD) {
		show_one(a, h, o);
		return;
	}
	/* nor does ptrace */
	if ((a->action == ACTION_SET || a->action == ACTION_DRY_RUN) && a->backend == BACKEND_PTRACE) {
		apply_ptrace(a, h, o);
		return;
	}
	if (h->problem != FAIL_NONE) {
		fail(o, h, h->problem, h->err);
		return;
	}
	switch (a->action) {
	case ACTION_SHOW:
		show_one(a, h, o);
		return;
	case ACTION_DRY_RUN:
		foresee_refusal(a, h, o);
		if (o->kind == OUTCOME_WOULD_APPLY)
			o->path = PATH_SYSCALL;
		return;
	case ACTION_MIGRATE:
		migrate_only(a, h, o);
		return;
	case ACTION_SET:
		break;
	}
	set_by_syscall(a, h, o);
	o->path = o->kind == OUTCOME_APPLIED ? PATH_SYSCALL : PATH_NONE;
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

/* ---- a batch through the signal engine ----------------------------------- */

#define ENGINE_TRIES 3	/* threads the handler may be put in through, per process */

/* The first step of a batch's handle: refused, or the thread the handler
 * goes in through (set by ptrace in the same stop), or sent its signal,
 * or left to the ptrace path (why in its ticket). */
static void begin_item(struct applier *a, struct task_handle *h, struct apply_item *it)
{
	const struct sigplan *plan;

	memset(it, 0, sizeof(*it));
	it->o = (struct outcome){ .detail.yama_scope = -1, .held_us = -1, .delay_us = -1 };
	if (ptrace_refuses(a, h, &it->o)) {
		it->decided = true;
		return;
	}
	it->have_before = a->read_before && h->problem == FAIL_NONE &&
			  inspect_policy(h->pid, h->tid, &it->before, &a->witness) == 0;
	ensure_session(a, h);
	plan = plan_of(a, h->pid);
	if (!a->engine && plan->sig && a->engine_tries < ENGINE_TRIES) {
		struct ptrace_request req = ptrace_request_of(a);

		a->engine = sigengine_start(a->session, plan, h, &req, &it->res, a->engine_why,
					    sizeof(a->engine_why));
		/* a thread that was set had the handler tried: that answer stands */
		a->engine_tries = it->res.failure == FAIL_NONE ? ENGINE_TRIES : a->engine_tries + 1;
		it->installer = true;
		return;
	}
	if (a->engine) {
		sigengine_send(a->engine, h, &it->ticket);
		return;
	}
	snprintf(it->ticket.why, sizeof(it->ticket.why), "%s", plan->sig ? a->engine_why : plan->why);
}

/* The second step, for the threads that were sent the signal: their
 * answers; and the ptrace session told which threads are left to it, so
 * that those that do not stop (a vfork parent) time out together. */
static void collect_items(struct applier *a, struct task_handle *hs, size_t n)
{
	pid_t left[TARGETS_BATCH];
	size_t nleft = 0;

	for (size_t i = 0; i < n; i++) {
		struct apply_item *it = &a->items[i];

		if (it->decided || it->installer)
			continue;
		it->answered = it->ticket.sent &&
			       sigengine_collect(a->engine, &it->ticket, &hs[i], &it->res, &it->o.delay_us,
						 &it->o.interrupted) == 0;
		if (!it->answered)
			left[nleft++] = hs[i].tid;
	}
	if (nleft > 1)
		ptrace_session_walk(a->session, left, nleft);
}

/* The last step: the outcome, from the ptrace path, or from the thread's
 * answer (or from the ptrace path if none came).  false when an
 * interruption came first for a thread the ptrace path was still to do. */
static bool finish_item(struct applier *a, struct task_handle *h, struct apply_item *it)
{
	struct outcome *o = &it->o;

	if (it->decided)
		return true;
	if (it->installer) {
		o->held_us = it->res.held_us;
		o->path = PATH_PTRACE;
		o->path_why = a->engine ? "the signal handler was put in through it" : a->engine_why;
		ptrace_outcome(a, h, &it->res, o);
	} else if (it->answered) {
		o->path = PATH_SIGNAL;
		ptrace_outcome(a, h, &it->res, o);
	} else if (interrupt_signal()) {
		interrupt_left(1);
		return false;
	} else {
		set_by_ptrace(a, h, o);
		o->path_why = it->ticket.why;
	}
	o->engine = a->engine != NULL;
	if (o->kind == OUTCOME_FAILED && o->failure == FAIL_EXITED)
		o->failure = exited(h);
	if (o->kind == OUTCOME_APPLIED && a->migrate)
		migrate_process(a, h, &o->migration);
	if (it->have_before) {
		a->before = it->before;
		o->before = &a->before;
	}
	return true;
}

void apply_tasks(struct applier *a, struct task_handle *hs, size_t n, apply_done_fn done, void *arg)
{
	if (n > TARGETS_BATCH || a->action != ACTION_SET || a->backend != BACKEND_PTRACE || a->no_signal ||
	    !PMP_SIGENGINE_SUPPORTED || !hs[0].per_thread) {
		for (size_t i = 0; i < n; i++) {
			struct outcome o;

			apply_task(a, &hs[i], &o);
			done(&hs[i], &o, arg);
		}
		return;
	}
	for (size_t i = 0; i < n; i++)
		begin_item(a, &hs[i], &a->items[i]);
	collect_items(a, hs, n);
	for (size_t i = 0; i < n; i++)
		if (finish_item(a, &hs[i], &a->items[i]))
			done(&hs[i], &a->items[i].o, arg);
}

void apply_process_done(struct applier *a, pid_t pid)
{
	a->note[0] = '\0';
	if (!a->session || ptrace_session_pid(a->session) != pid)
		return;
	sigengine_end(a->engine, a->note, sizeof(a->note));
	a->engine = NULL;
	ptrace_session_end(a->session);
	a->session = NULL;
}
