/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.h - --cgroup: the processes of a cgroup v2 subtree as targets.
 */
#ifndef PMP_CGROUP_H
#define PMP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "targets.h"

/* Whether dir is a cgroup v2 directory: on a cgroup2 file system (a v1
 * hierarchy is refused: its controller root would hold every process),
 * with a readable cgroup.procs.  0, or -1 with why in why. */
int cgroup_check(const char *dir, char *why, size_t len);

/* The cgroup directory systemd gave the system unit `unit` (a bare name
 * is a .service), found as systemd lays them out: each unit in the
 * directory of its slice, slices in slices, on the cgroup2 hierarchy at
 * /sys/fs/cgroup (or /sys/fs/cgroup/unified).  0 with the path in dir, or
 * -1 with one sentence in why (not a unit name, systemd not running, no
 * such cgroup). */
int cgroup_of_unit(const char *unit, char *dir, size_t len, char *why, size_t whylen);

/* Every process of the cgroup directory `dir` and of every cgroup below
 * it, with all_threads each of their threads, re-reading the lists until
 * a pass finds no new process; but not the nnamed processes of `named`,
 * which the caller walks (-p): each process is acted on once.  Returns
 * how many processes were found (those of `named` among them), or -1
 * with errno. */
long cgroup_walk(const char *dir, const struct pid_spec *named, size_t nnamed, bool all_threads,
		 const struct task_visitor *v);

/* Whether process pid sits in a frozen cgroup, whose threads would never
 * reach a ptrace stop: cgroup v2 (its cgroup.events says "frozen 1", or
 * its cgroup.freeze asks for it), else the cgroup v1 freezer (freezer.state
 * FROZEN or FREEZING).  1 with the directory that holds the freeze (for
 * v2 the nearest ancestor whose cgroup.freeze is 1) in dir and *v1 set,
 * 0 if not frozen or it cannot tell. */
int cgroup_frozen(pid_t pid, char *dir, size_t len, bool *v1);

#endif
