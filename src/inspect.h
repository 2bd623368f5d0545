/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inspect.h - what a task has now, read from /proc: its task policy as far
 * as numa_maps can prove it, its cpuset's allowed nodes, and its process's
 * resident pages per node.  Read-only; works on any kernel.
 */
#ifndef PMP_INSPECT_H
#define PMP_INSPECT_H

#include <stdbool.h>
#include <sys/types.h>

#define INSPECT_MAX_NODES 64

/* How numa_maps told the task policy, or why it could not. */
enum policy_evidence {
	POLICY_SHOWN_DEFAULT,	/* a mapping shows "default": no mapping policy
				 * prints so, hence the task's */
	POLICY_ALL_AGREE,	/* every mapping shows the same policy */
	POLICY_MAPPINGS_DIFFER,	/* none shows default and they differ: unknown */
	POLICY_NO_MAPPING,	/* a zombie or a kernel thread: unknown */
};

struct task_state {
	char policy[128];		/* e.g. "interleave:0-3"; "" when unknown */
	enum policy_evidence evidence;
	char mems_allowed[128];		/* Mems_allowed_list; "" when unknown */
	unsigned long long pages[INSPECT_MAX_NODES];	/* of the process, in 4 KiB pages */
	unsigned int nnodes;		/* entries of pages[] that mean something */
};

static inline bool inspect_policy_known(const struct task_state *st)
{
	return st->evidence == POLICY_SHOWN_DEFAULT || st->evidence == POLICY_ALL_AGREE;
}

/* Pages per node of process pid, summed over the numa_maps of its task
 * tid (a live one: a main thread that has exited shows no map).  Returns
 * 0, or -1 with errno. */
int inspect_process_pages(pid_t pid, pid_t tid, struct task_state *st);

/* What the first thread read of a process tells about the others: the
 * address of a mapping that shows the task policy (one that showed
 * "default"; or, when every mapping agreed, the first), so that each other
 * thread's numa_maps is read only up to that line, not through the
 * thousands of mappings a process of thousands of threads has. */
struct policy_witness {
	pid_t pid;			/* 0: none yet */
	bool known;
	unsigned long long start;
};

/* The thread's task policy and allowed nodes.  numa_maps prints, for each
 * mapping, the mapping's own policy (mbind) or, if it has none, the
 * reading thread's task policy; nothing marks which.  A mapping policy is
 * never "default" (mbind with MPOL_DEFAULT removes it), so one "default"
 * line proves the task policy; else, if all lines agree, that policy
 * governs every mapping the process has and is taken as the task's (a
 * process that gave each of its mappings the same policy looks the
 * same); else it is unknown.  w, if not NULL, carries what one thread's
 * read teaches about the next of the same process.  Returns 0, or -1 with
 * errno. */
int inspect_thread(pid_t pid, pid_t tid, struct task_state *st, struct policy_witness *w);

/* Only the task policy, as inspect_thread reads it. */
int inspect_policy(pid_t pid, pid_t tid, struct task_state *st, struct policy_witness *w);

#endif
