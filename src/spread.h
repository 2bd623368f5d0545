/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spread.h - --migrate for an interleave: the pages a process already has
 * (private anonymous memory: its heap, stacks and anonymous mappings;
 * shared and file pages are other processes' too) re-spread so that each
 * node of the set holds its share (equal, or by the weighted interleave's
 * node weights), moving only the excess of the nodes over their share (and
 * every page on a node outside the set), at a capped rate if asked.
 */
#ifndef PMP_SPREAD_H
#define PMP_SPREAD_H

#include <stdbool.h>
#include <sys/types.h>

struct bitmask;

#define SPREAD_MAX_NODES 64
#define SPREAD_MAX_REASONS 6

struct spread_result {
	long pages;		/* resident pages found */
	long to_move;		/* pages the plan moves */
	long moved;		/* pages moved */
	long not_moved;		/* pages asked to move that the kernel kept */
	int nnodes;		/* entries of before[] and after[] */
	long before[SPREAD_MAX_NODES];	/* pages per node when counted */
	long after[SPREAD_MAX_NODES];	/* and after the moves, as the kernel reported them */
	struct {		/* why pages stayed: move_pages' per-page status */
		int err;	/* EBUSY (pinned, locked), ENOMEM (node full), EFAULT ... */
		long pages;
	} reasons[SPREAD_MAX_REASONS];
	bool interrupted;	/* a signal stopped it between batches */
	int err;		/* the errno that ended it, 0 if none */
};

/* How far a re-spread has got, after each batch: for a progress line. */
struct spread_progress {
	pid_t pid;
	long done, total;	/* pages moved or refused, of to_move */
	double seconds;		/* since the first move */
};

struct spread_options {
	const unsigned int *weights;	/* per node (weighted interleave); NULL: equal shares */
	unsigned long long rate;	/* bytes per second at most; 0: no cap */
	void (*progress)(const struct spread_progress *p, void *arg);	/* or NULL */
	void *arg;
};

/* The share of each node: excess[n] pages to move off node n, deficit[n]
 * pages it should receive, for count[n] pages now on each of nnodes
 * nodes and the set to spread over: shares in proportion to weights[n]
 * (NULL: equal), the remainder one page each to the first nodes. */
void spread_plan(const long *count, int nnodes, const struct bitmask *set, const unsigned int *weights,
		 long *excess, long *deficit);

/* The weighted interleave's node weights, from
 * /sys/kernel/mm/mempolicy/weighted_interleave/nodeN (1 where a node has
 * none to read).  0, or -1 where the kernel has no weighted interleave. */
int spread_read_weights(unsigned int *weights, int nnodes);

/* Re-spread process pid's pages over set with move_pages(2), in batches.
 * 0, or -1 with res->err; res says how far it got either way. */
int spread_process(pid_t pid, const struct bitmask *set, const struct spread_options *opt,
		   struct spread_result *res);

#endif
