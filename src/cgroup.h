/*
 * cgroup.h - --cgroup: the processes of a cgroup v2 directory as targets.
 */
#ifndef PMP_CGROUP_H
#define PMP_CGROUP_H

#include <stdbool.h>

#include "targets.h"

/* Whether dir looks like a cgroup v2 directory (has cgroup.procs). */
bool cgroup_is_dir(const char *dir);

/* Every process of the cgroup directory `dir` (its cgroup.procs), with
 * all_threads each of their threads, re-reading the list until a pass
 * finds no new process.  Returns 0, or -1 with errno. */
int cgroup_walk(const char *dir, bool all_threads, const struct task_visitor *v);

#endif
