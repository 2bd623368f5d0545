/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * failure.h - the one vocabulary for why a task was not changed (or read).
 * Every layer speaks it: targets (a handle that could not be made or
 * confirmed), the backends (the kernel's or the thread's refusal), apply
 * (the context that explains a refusal) and report (the words).  Each
 * failure is one row of one table in failure.c: its name for scripts,
 * whether it counts as gone rather than failed, its message and the
 * message's what-to-do hint.  Adding a failure is a new enum value, its row, and the
 * place that detects it.
 */
#ifndef PMP_FAILURE_H
#define PMP_FAILURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum failure {
	FAIL_NONE = 0,
	/* naming and confirming the target */
	FAIL_NO_SUCH_PROCESS,	/* the PID named no process */
	FAIL_NOT_A_PROCESS,	/* the PID is a thread of another process */
	FAIL_CANNOT_PIN,	/* PID:INODE on a kernel without unique pidfd inodes */
	FAIL_INODE_MISMATCH,	/* PID:INODE names another process now */
	FAIL_EXITED,		/* the task exited (or is a zombie) */
	FAIL_NO_THREAD_PIDFD,	/* the kernel cannot open a pidfd for one thread */
	FAIL_UNSETTLED,		/* threads kept appearing; gave up re-scanning */
	FAIL_PROC_HIDDEN,	/* alive, but /proc will not show it (hidepid) */
	FAIL_PROC_DENIED,	/* alive, /proc not hidepid: the ptrace check refuses */
	FAIL_LEADER_EXITED,	/* -p: the main thread exited, other threads run */
	FAIL_SELF,		/* the tool itself, which it cannot trace */
	/* the kernel's refusal of the policy */
	FAIL_NEEDS_CAP,		/* the caller lacks CAP_SYS_NICE */
	FAIL_KERNEL_THREAD,	/* kernel threads have no settable policy */
	FAIL_ACCESS_DENIED,	/* the ptrace access mode check said no */
	FAIL_NODES_NOT_ALLOWED,	/* none of the nodes is in the target's cpuset */
	/* the ptrace backend's own */
	FAIL_TRACE_DENIED,	/* PTRACE_SEIZE refused */
	FAIL_ALREADY_TRACED,	/* another tracer holds the thread */
	FAIL_SECCOMP,		/* a seccomp filter might kill it on the call */
	FAIL_COMPAT_TASK,	/* a 32-bit task */
	FAIL_ARCH_UNSUPPORTED,	/* the backend does not exist on this architecture */
	FAIL_INJECTION,		/* the injection itself failed: detail says where */
	FAIL_FROZEN,		/* its cgroup is frozen: it would never stop */
	FAIL_NOT_STOPPED,	/* it did not stop for the tracer in time */
	FAIL_SECCOMP_REFUSED,	/* its seccomp filter refused its own set_mempolicy(2) */
	/* anything else: the errno says it */
	FAIL_ERRNO,
};

/* Who failed, as the message names it. */
struct failure_subject {
	pid_t pid, tid;
	bool per_thread;	/* "tid T" rather than "pid P" */
	pid_t owner;		/* FAIL_NOT_A_PROCESS: the real process */
	uint64_t inode;		/* FAIL_INODE_MISMATCH: what the pidfd has */
};

/* What the failure's message needs besides the subject; each field is
 * read only by the failures whose rows name it. */
struct failure_detail {
	int err;		/* the errno behind it, 0 if none */
	pid_t tracer;		/* FAIL_ALREADY_TRACED */
	int yama_scope;		/* FAIL_TRACE_DENIED: -1 without Yama */
	const char *allowed;	/* FAIL_NODES_NOT_ALLOWED: the target's Mems_allowed_list */
	const char *refused;	/* FAIL_NODES_NOT_ALLOWED: asked-for nodes outside it */
	const char *text;	/* FAIL_INJECTION: where it failed */
	const char *cgroup;	/* FAIL_FROZEN: the frozen cgroup's directory */
	bool cgroup_v1;		/* FAIL_FROZEN: a cgroup v1 freezer, not cgroup.freeze */
};

/* The symbolic name of errno err ("EPERM"); "unknown errno" where the C
 * library has none (strerrorname_np(3) gives NULL). */
const char *failure_errname(int err);

/* The failure's name for scripts and tests ("exited", "needs-cap", ...). */
const char *failure_name(enum failure f);

/* Whether a thread found by -a that fails so counts as gone (it exited
 * meanwhile), not as a failure. */
bool failure_is_gone(enum failure f);

/* The message, in one line with its hint: "needs CAP_SYS_NICE (try
 * sudo)".  Always NUL-terminates buf; cut if it is too small. */
void failure_format(enum failure f, const struct failure_subject *who,
		    const struct failure_detail *d, char *buf, size_t len);

/* The part of the message that says what to do ("try sudo"); false, and
 * buf empty, for a failure that has none. */
bool failure_hint(enum failure f, const struct failure_subject *who,
		  const struct failure_detail *d, char *buf, size_t len);

#endif
