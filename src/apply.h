/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * apply.h - one task handle in, one outcome out, through the backend the
 * run chose.  The outcome says what happened in the one failure
 * vocabulary (failure.h), with what is needed to explain a refusal (the
 * target's allowed nodes, whether it is a kernel thread, whether the
 * caller had CAP_SYS_NICE); it prints nothing.
 */
#ifndef PMP_APPLY_H
#define PMP_APPLY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "failure.h"
#include "inspect.h"
#include "policy.h"
#include "ptrace.h"
#include "sigengine.h"
#include "spread.h"
#include "sys.h"
#include "targets.h"

enum outcome_kind {
	OUTCOME_APPLIED,
	OUTCOME_WOULD_APPLY,	/* --dry-run */
	OUTCOME_GONE,		/* a thread found by -a exited first: not a failure */
	OUTCOME_FAILED,
	OUTCOME_SHOWN,		/* --show: state holds what the task has now */
};

/* --migrate and --migrate-only, on the process's main thread. */
struct migration {
	bool moved;		/* migrate_pages(2) was called and succeeded */
	int err;		/* or failed with this errno */
	long not_moved;		/* pages it could not move */
	bool nothing_to_move;	/* the policy's nodes cover every node */
	bool spread;		/* an interleave: re-spread with move_pages(2) */
	long pages, moved_pages;	/* spread: resident pages, pages moved */
	const struct spread_result *detail;	/* spread: per node, why pages stayed */
};

/* How a thread's policy was (or, in a dry run, would be) set. */
enum set_path {
	PATH_NONE,		/* not set, or not a setting */
	PATH_SYSCALL,		/* pidfd_set_mempolicy(2) */
	PATH_PTRACE,		/* its own set_mempolicy(2), in a ptrace stop of its own */
	PATH_SIGNAL,		/* its own set_mempolicy(2), in the signal engine's handler */
};

/* What became of one task.  Its texts point into the applier's buffers
 * and are valid until the applier's next task. */
struct outcome {
	enum outcome_kind kind;
	enum failure failure;		/* OUTCOME_FAILED and OUTCOME_GONE: why */
	struct failure_detail detail;	/* what the failure's message needs */
	struct migration migration;
	const struct task_state *state;	/* OUTCOME_SHOWN: what the task has now */
	const struct task_state *before;	/* setting, with read_before: the task
						 * policy before; NULL if not read */
	long held_us;			/* the ptrace backend: how long the thread was
					 * held (interrupt to release); -1 if not */
	enum set_path path;		/* setting, dry run, show_path: how */
	const char *path_why;		/* PATH_PTRACE under the ptrace backend: why
					 * not by signal; NULL if no engine was asked */
	long delay_us;			/* PATH_SIGNAL: from the signal to the answer; -1 */
	bool interrupted;		/* PATH_SIGNAL: the signal ended a system call
					 * it had just entered with EINTR */
	bool engine;			/* its process's threads went (would go) through
					 * the signal engine: path says this one's way */
};

enum backend {
	BACKEND_SYSCALL,	/* pidfd_set_mempolicy(2) */
	BACKEND_PTRACE,		/* each thread calls set_mempolicy(2) itself, through ptrace */
};

enum action {
	ACTION_SET,		/* call pidfd_set_mempolicy */
	ACTION_DRY_RUN,		/* check and foresee, call nothing that changes state */
	ACTION_SHOW,		/* read what the task has now */
	ACTION_MIGRATE,		/* --migrate-only: move pages, set no policy */
};

/* One handle of a batch, between the signals and the answers. */
struct apply_item {
	bool decided;			/* o holds its outcome already */
	bool installer;			/* set by ptrace with the handler put in: res */
	struct outcome o;
	struct ptrace_result res;
	struct sigticket ticket;
	bool answered;			/* the thread's own answer came: res */
	bool have_before;
	struct task_state before;
};

struct applier {
	enum action action;
	const struct setter *setter;
	const struct policy *policy;	/* NULL for ACTION_SHOW */
	bool migrate;			/* ACTION_SET: also move existing pages */
	struct spread_options spreading;	/* the rate cap and progress line of a re-spread */
	enum backend backend;		/* ACTION_SET: how */
	bool allow_seccomp;		/* BACKEND_PTRACE: inject despite a seccomp filter */
	bool read_before;		/* ACTION_SET, ACTION_DRY_RUN: read each task's
					 * policy before (for -v, a dry run, --json) */
	bool show_path;			/* ACTION_SHOW: foresee each thread's path
					 * under backend (the PATH column) */
	struct ptrace_session *session;	/* BACKEND_PTRACE: the process in hand's, or NULL */
	bool asked_sys_nice;		/* have_sys_nice holds privs_have_sys_nice() */
	int have_sys_nice;
	pid_t pages_of;			/* ACTION_SHOW: process whose pages are in pages */
	struct task_state pages;
	/* what the outcome of the task in hand points to */
	struct task_state shown;
	struct task_state before;
	struct policy_witness witness;	/* the process in hand's (inspect.h) */
	struct spread_result spread;	/* the process in hand's re-spread */
	unsigned int weights[SPREAD_MAX_NODES];
	char allowed[128];		/* the target's Mems_allowed_list */
	char refused[128];		/* asked-for nodes outside it */
	char injection[96];		/* where an injection failed */
	pid_t frozen_of;		/* BACKEND_PTRACE: the process frozen_cgroup was asked of */
	bool frozen_v1;
	char frozen_cgroup[1024];	/* its frozen cgroup, escaped, or "" */
	/* the signal engine (sigengine.h), with -a under the ptrace backend */
	bool no_signal;			/* --no-signal: every thread by its own stop */
	struct sigengine *engine;	/* the process in hand's, or NULL */
	pid_t plan_of;			/* the process plan is of */
	struct sigplan plan;
	int engine_tries;		/* starts tried in it */
	char engine_why[96];		/* why it has no engine, when it tried */
	pid_t installer_of;		/* dry run: the process whose installer is named */
	char path_why[96];		/* dry run: the route's reason */
	char note[256];			/* what the last process's engine left behind */
	struct apply_item items[TARGETS_BATCH];
};

void apply_task(struct applier *a, struct task_handle *h, struct outcome *o);

/* The handles of one batch (targets.h), each outcome handed to done in
 * their order: through the signal engine where it may run (setting, the
 * ptrace backend, -a), else one by one as apply_task.  A run interrupted
 * (interrupt.h) hands no outcome for what the ptrace path was still to
 * do, and counts it as not reached. */
typedef void (*apply_done_fn)(struct task_handle *h, const struct outcome *o, void *arg);
void apply_tasks(struct applier *a, struct task_handle *hs, size_t n, apply_done_fn done, void *arg);

/* The last task of process pid has been applied: let go of what the
 * backend keeps in it (the signal engine's handler, the ptrace backend's
 * scratch page); note says what could not be taken out, or is "". */
void apply_process_done(struct applier *a, pid_t pid);

#endif
