/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tidset.h - a set of task IDs, for the walks that must visit each thread
 * (or each process of a cgroup) once however often they re-read a list.
 * Open addressing in a power of two of slots, kept at most half full.
 */
#ifndef PMP_TIDSET_H
#define PMP_TIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tidset {
	pid_t *slots;		/* 0 = empty */
	size_t cap, used;	/* cap: 0 or a power of two */
};

/* Room for n IDs without growing.  0, or -1 out of memory. */
int tidset_reserve(struct tidset *s, size_t n);

/* 1 if id (> 0) was added, 0 if it was there, -1 out of memory. */
int tidset_add(struct tidset *s, pid_t id);

/* Whether id is in the set. */
bool tidset_has(const struct tidset *s, pid_t id);

void tidset_release(struct tidset *s);

#endif
