/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * targets.h - from what the user named (PIDs, PID:INODE) to a stream of
 * task handles: one thread each, with an open pidfd whose identity has been
 * confirmed.  Handles are produced one at a time; their pidfds are closed
 * after use in batches, so the tool holds at most 256 pidfds (a quarter of
 * RLIMIT_NOFILE when that is lower) whatever the number of threads.
 */
#ifndef PMP_TARGETS_H
#define PMP_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "failure.h"
#include "procfs.h"

struct pid_spec {
	pid_t pid;
	bool pinned;		/* PID:INODE given */
	uint64_t inode;
};

struct task_handle {
	pid_t pid;		/* the process */
	pid_t tid;		/* the thread; == pid for the leader */
	bool per_thread;	/* found by -a: name it as "tid T of pid P" */
	int pidfd;		/* open and confirmed when problem == FAIL_NONE */
	struct proc_stat stat;	/* comm, state, flags: use targets_task_stat() */
	bool stat_read;		/* stat holds what /proc said (or "?") */
	enum failure problem;	/* why no confirmed handle could be made */
	int err;		/* the errno behind problem */
	pid_t owner;		/* FAIL_NOT_A_PROCESS: the real process */
	uint64_t inode;		/* FAIL_INODE_MISMATCH: what the pidfd has */
};

/* Handles a walk hands over at once, at most (fewer when RLIMIT_NOFILE is
 * low): their pidfds are open together. */
#define TARGETS_BATCH 64

/* What a walk calls: task for each handle, or, where tasks is not NULL,
 * tasks for the handles of one process found in one read of its thread
 * list, TARGETS_BATCH at most, in listing order; then process_done (if
 * not NULL) once the process's last handle has been visited, so that
 * whatever the visitor keeps per process can be let go. */
struct task_visitor {
	void (*task)(struct task_handle *h, void *arg);
	void (*process_done)(pid_t pid, void *arg);
	void *arg;
	void (*tasks)(struct task_handle *hs, size_t n, void *arg);
};

/* Whether the task's name (comm) could be read as its own: if not, its
 * stat says "?", and JSON says null. */
bool targets_comm_known(struct task_handle *h);

/* The task's name and flags, read from /proc on first use: a thread that
 * is set without a word said costs no read.  "?" when unreadable. */
const struct proc_stat *targets_task_stat(struct task_handle *h);

/* Whether h is a kernel thread, whose policy no one can change. */
bool targets_is_kernel_thread(struct task_handle *h);

/* Whether the task behind h is alive now: its pidfd, else a null-signal
 * probe.  Tells a task /proc hides (hidepid) from one that has exited. */
bool targets_alive(const struct task_handle *h);

/* Why reading the task's /proc files failed with err: it exited, /proc
 * hides it (alive, yet ENOENT, or EACCES where /proc is mounted hidepid),
 * the ptrace access check refused (alive, EACCES, no hidepid), or the
 * errno itself. */
enum failure targets_proc_failure(const struct task_handle *h, int err);

/* Who h names, for a failure's message. */
struct failure_subject targets_subject(const struct task_handle *h);

/* Visit the process named by spec (its leader), or with all_threads each of
 * its threads, re-scanning its task list until a pass finds no thread it
 * has not seen; then say the process is done.  Problems are visited as
 * handles too.  Returns 0, or -1 if memory ran out. */
int targets_walk(const struct pid_spec *spec, bool all_threads, const struct task_visitor *v);

#endif
