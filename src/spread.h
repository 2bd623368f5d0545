/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spread.h - --migrate for an interleave: the pages a process already has
 * (private anonymous memory: its heap, stacks and anonymous mappings;
 * shared and file pages are other processes' too) re-spread so that each
 * node of the set holds an equal share, moving only the excess of the
 * nodes over their share (and every page on a node outside the set).
 */
#ifndef PMP_SPREAD_H
#define PMP_SPREAD_H

#include <stdbool.h>
#include <sys/types.h>

struct bitmask;

struct spread_result {
	long pages;		/* resident pages found */
	long moved;		/* pages moved */
	long not_moved;		/* pages asked to move that the kernel kept */
	bool interrupted;	/* a signal stopped it between batches */
	int err;		/* the errno that ended it, 0 if none */
};

/* The share of each node: excess[n] pages to move off node n, deficit[n]
 * pages it should receive, for count[n] pages now on each of nnodes
 * nodes and the set to spread over (the remainder goes to its first
 * nodes). */
void spread_plan(const long *count, int nnodes, const struct bitmask *set, long *excess, long *deficit);

/* Re-spread process pid's pages over set with move_pages(2), in batches.
 * 0, or -1 with res->err; res says how far it got either way. */
int spread_process(pid_t pid, const struct bitmask *set, struct spread_result *res);

#endif
