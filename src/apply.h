/*
 * apply.h - one task handle in, one outcome out.  The outcome carries what
 * is needed to explain a failure (the target's allowed nodes, whether it is
 * a kernel thread, whether the caller had CAP_SYS_NICE); it prints nothing.
 */
#ifndef PMP_APPLY_H
#define PMP_APPLY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "inspect.h"
#include "policy.h"
#include "sys.h"
#include "targets.h"

enum outcome_kind {
	OUTCOME_APPLIED,
	OUTCOME_WOULD_APPLY,	/* --dry-run */
	OUTCOME_GONE,		/* a thread found by -a exited first: not a failure */
	OUTCOME_FAILED,
	OUTCOME_SHOWN,		/* --show: state holds what the task has now */
};

enum failure_reason {
	REASON_NONE,
	REASON_NO_SUCH_PROCESS,
	REASON_NOT_A_PROCESS,
	REASON_CANNOT_PIN,
	REASON_INODE_MISMATCH,
	REASON_EXITED,
	REASON_NO_THREAD_PIDFD,
	REASON_UNSETTLED,
	REASON_NEEDS_CAP,
	REASON_KERNEL_THREAD,
	REASON_PTRACE_DENIED,
	REASON_NODES_NOT_ALLOWED,
	REASON_ERRNO,
	REASON_PROC_HIDDEN,	/* alive, but /proc hides it from the caller */
	/* the ptrace backend's own reasons */
	REASON_TRACE_DENIED,
	REASON_ALREADY_TRACED,
	REASON_SECCOMP,
	REASON_COMPAT_TASK,
	REASON_PTRACE_UNSUPPORTED,
	REASON_INJECTION_FAILED,
};

struct outcome {
	enum outcome_kind kind;
	enum failure_reason reason;
	int err;		/* the errno behind it, 0 if none */
	/* --migrate, on the process's main thread: */
	bool migrated;		/* migrate_pages(2) was called and succeeded */
	int migrate_err;	/* or failed with this errno */
	long not_moved;		/* pages it could not move */
	bool nothing_to_move;	/* the policy's nodes cover every node */
	/* the ptrace backend: */
	pid_t tracer;		/* REASON_ALREADY_TRACED */
	int yama_scope;		/* REASON_TRACE_DENIED: -1 without Yama */
	/* Buffers, last: apply_task() zeroes what comes before them and
	 * leaves them empty, not cleared; each is written where its reason or
	 * kind needs it, and read only then. */
	char allowed[128];	/* REASON_NODES_NOT_ALLOWED: target's Mems_allowed_list */
	char refused[128];	/* REASON_NODES_NOT_ALLOWED: asked-for nodes outside it */
	char detail[96];	/* REASON_INJECTION_FAILED */
	struct task_state state;	/* OUTCOME_SHOWN */
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

struct applier {
	enum action action;
	const struct setter *setter;
	const struct policy *policy;	/* NULL for ACTION_SHOW */
	bool migrate;			/* ACTION_SET: also move existing pages */
	enum backend backend;		/* ACTION_SET: how */
	bool allow_seccomp;		/* BACKEND_PTRACE: inject despite a seccomp filter */
	bool asked_sys_nice;		/* have_sys_nice holds privs_have_sys_nice() */
	int have_sys_nice;
	pid_t pages_of;			/* ACTION_SHOW: process whose pages are in pages */
	struct task_state pages;
};

void apply_task(struct applier *a, struct task_handle *h, struct outcome *o);

#endif
