/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inspect.h - what a task has now, read from /proc: its task policy as the
 * kernel prints it, its cpuset's allowed nodes, and its process's resident
 * pages per node.  Read-only; works on any kernel.
 */
#ifndef PMP_INSPECT_H
#define PMP_INSPECT_H

#include <sys/types.h>

#define INSPECT_MAX_NODES 64

struct task_state {
	char policy[128];		/* e.g. "interleave:0-3" */
	char mems_allowed[128];		/* Mems_allowed_list */
	unsigned long long pages[INSPECT_MAX_NODES];	/* of the process, in 4 KiB pages */
	unsigned int nnodes;		/* entries of pages[] that mean something */
};

/* Pages per node of process pid, summed over the numa_maps of its task
 * tid (a live one: a main thread that has exited shows no map).  Returns
 * 0, or -1 with errno. */
int inspect_process_pages(pid_t pid, pid_t tid, struct task_state *st);

/* The thread's policy and allowed nodes.  The task policy is what numa_maps
 * prints for a mapping without a policy of its own; it is read from the
 * first mapping (the program's text), which programs do not mbind().
 * Returns 0, or -1 with errno. */
int inspect_thread(pid_t pid, pid_t tid, struct task_state *st);

#endif
