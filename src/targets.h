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

#include "procfs.h"

struct pid_spec {
	pid_t pid;
	bool pinned;		/* PID:INODE given */
	uint64_t inode;
};

enum handle_problem {
	HANDLE_OK = 0,
	HANDLE_NO_SUCH_PROCESS,	/* the PID named no process */
	HANDLE_NOT_A_PROCESS,	/* the PID is a thread of another process */
	HANDLE_CANNOT_PIN,	/* PID:INODE on a kernel without unique pidfd inodes */
	HANDLE_INODE_MISMATCH,	/* PID:INODE names another process now */
	HANDLE_GONE,		/* exited between listing and use */
	HANDLE_NO_THREAD_PIDFD,	/* kernel cannot open a pidfd for one thread */
	HANDLE_OPEN_FAILED,	/* pidfd_open or /proc failed otherwise: see err */
	HANDLE_UNSETTLED,	/* threads kept appearing; gave up re-scanning */
	HANDLE_PROC_HIDDEN,	/* alive, but /proc will not show it (hidepid) */
};

struct task_handle {
	pid_t pid;		/* the process */
	pid_t tid;		/* the thread; == pid for the leader */
	bool per_thread;	/* found by -a: name it as "tid T of pid P" */
	int pidfd;		/* open and confirmed when problem == HANDLE_OK */
	struct proc_stat stat;	/* comm, state, flags: use targets_task_stat() */
	bool stat_read;		/* stat holds what /proc said (or "?") */
	enum handle_problem problem;
	int err;		/* errno behind HANDLE_OPEN_FAILED */
	pid_t owner;		/* for HANDLE_NOT_A_PROCESS: the real process */
	uint64_t inode;		/* for HANDLE_INODE_MISMATCH: what the pidfd has */
};

typedef void (*task_visit_fn)(struct task_handle *h, void *arg);

/* The task's name and flags, read from /proc on first use: a thread that
 * is set without a word said costs no read.  "?" when unreadable. */
const struct proc_stat *targets_task_stat(struct task_handle *h);

/* Whether the task behind h is alive now: its pidfd, else a null-signal
 * probe.  Tells a task /proc hides (hidepid) from one that has exited. */
bool targets_alive(const struct task_handle *h);

/* Parse "PID", "PID:INODE" or a comma list of them, appending to *specs.
 * Returns 0, or -1 with one sentence in why (nothing appended). */
int targets_parse_pids(const char *arg, struct pid_spec **specs, size_t *n,
		       char *why, size_t whylen);

/* Visit the process named by spec (its leader), or with all_threads each of
 * its threads, re-scanning its task list until a pass finds no thread it
 * has not seen.  Problems are visited as handles too.  Returns 0, or -1 if
 * memory ran out. */
int targets_walk(const struct pid_spec *spec, bool all_threads,
		 task_visit_fn visit, void *arg);

/* Every process of the cgroup v2 directory `dir` (its cgroup.procs), with
 * all_threads each of their threads, re-reading the list until a pass
 * finds no new process.  Returns 0, or -1 with errno. */
int targets_walk_cgroup(const char *dir, bool all_threads, task_visit_fn visit, void *arg);

/* Whether dir looks like a cgroup v2 directory (has cgroup.procs). */
bool targets_is_cgroup(const char *dir);

#endif
