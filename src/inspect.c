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

struct weighing {
	struct task_state *st;
	const struct policy_witness *w;	/* NULL: read every line */
	unsigned long long first, shown_default;	/* addresses */
};

/* One mapping's policy, weighed as inspect.h says; stops at the first
 * "default", which settles it, or at the witness, which does too. */
static int weigh_policy(const char *line, size_t len, void *arg)
{
	struct weighing *wg = arg;
	struct task_state *st = wg->st;
	struct numa_maps_line l;

	if (procfs_parse_numa_maps_line(line, len, &l) < 0)
		return 0;
	if (strcmp(l.policy, "default") == 0) {
		st->evidence = POLICY_SHOWN_DEFAULT;
		snprintf(st->policy, sizeof(st->policy), "default");
		wg->shown_default = l.start;
		return 1;
	}
	if (wg->w && l.start == wg->w->start) {
		st->evidence = POLICY_ALL_AGREE;
		snprintf(st->policy, sizeof(st->policy), "%s", l.policy);
		return 1;
	}
	switch (st->evidence) {
	case POLICY_NO_MAPPING:
		st->evidence = POLICY_ALL_AGREE;
		snprintf(st->policy, sizeof(st->policy), "%s", l.policy);
		wg->first = l.start;
		break;
	case POLICY_ALL_AGREE:
		if (strcmp(st->policy, l.policy) != 0)
			st->evidence = POLICY_MAPPINGS_DIFFER;
		break;
	default:
		break;
	}
	return 0;
}

int inspect_policy(pid_t pid, pid_t tid, struct task_state *st, struct policy_witness *w)
{
	struct weighing wg = { .st = st };
	char path[96];
	int r;

	if (w && w->pid != pid)
		*w = (struct policy_witness){ .pid = pid };
	if (w && w->known)
		wg.w = w;
	st->policy[0] = '\0';
	st->evidence = POLICY_NO_MAPPING;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/numa_maps", (int)pid, (int)tid);
	r = procfs_each_line(path, weigh_policy, &wg);
	if (r < 0)
		return -1;
	if (st->evidence == POLICY_MAPPINGS_DIFFER)
		st->policy[0] = '\0';
	if (w && !w->known && (st->evidence == POLICY_SHOWN_DEFAULT || st->evidence == POLICY_ALL_AGREE)) {
		w->known = true;
		w->start = st->evidence == POLICY_SHOWN_DEFAULT ? wg.shown_default : wg.first;
	}
	return 0;
}

int inspect_thread(pid_t pid, pid_t tid, struct task_state *st, struct policy_witness *w)
{
	struct proc_status status;

	if (procfs_task_status(pid, tid, &status) < 0)
		return -1;
	snprintf(st->mems_allowed, sizeof(st->mems_allowed), "%s", status.mems_allowed);
	return inspect_policy(pid, tid, st, w);
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
