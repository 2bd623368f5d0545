/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inspect.c - a task's current policy, allowed nodes and page placement,
 * from /proc/PID/task/TID/numa_maps and status.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "inspect.h"
#include "procfs.h"

/* The first mapping's policy, from its numa_maps line. */
static int first_policy(const char *line, size_t len, void *arg)
{
	struct task_state *st = arg;
	struct numa_maps_line l;

	if (procfs_parse_numa_maps_line(line, len, &l) == 0)
		snprintf(st->policy, sizeof(st->policy), "%s", l.policy);
	return 1;
}

int inspect_thread(pid_t pid, pid_t tid, struct task_state *st)
{
	char path[96];
	struct proc_status status;

	if (procfs_task_status(pid, tid, &status) < 0)
		return -1;
	snprintf(st->mems_allowed, sizeof(st->mems_allowed), "%s",
		 status.mems_allowed[0] ? status.mems_allowed : "?");
	/* numa_maps is generated as it is read: the first piece walks only
	 * the first mappings */
	strcpy(st->policy, "-");	/* no mapping: a zombie or a kernel thread */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/numa_maps", (int)pid, (int)tid);
	return procfs_each_line(path, first_policy, st) < 0 ? -1 : 0;
}

/* Add one mapping's pages per node to the process's. */
static int add_pages(const char *line, size_t len, void *arg)
{
	struct task_state *st = arg;
	struct numa_maps_line l;

	if (procfs_parse_numa_maps_line(line, len, &l) == 0) {
		for (unsigned int n = 0; n < l.max_node && n < INSPECT_MAX_NODES; n++)
			st->pages[n] += l.pages[n];
		if (l.max_node > st->nnodes)
			st->nnodes = l.max_node;
	}
	return 0;
}

int inspect_process_pages(pid_t pid, pid_t tid, struct task_state *st)
{
	char path[96];

	memset(st->pages, 0, sizeof(st->pages));
	st->nnodes = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/numa_maps", (int)pid, (int)tid);
	return procfs_each_line(path, add_pages, st) < 0 ? -1 : 0;
}
