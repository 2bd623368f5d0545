/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spread.h - --migrate for an interleave: the pages a process already has
 * (private anonymous memory: its heap, stacks and anonymous mappings;
 * shared and file pages are other processes' too) re-spread so that each
 * node of the set holds its share (equal, or by the weighted interleave's
 * node weights), moving only the excess of the nodes over their share (and
 * every page on a node outside the set), at a capped rate if asked.
 * A transparent huge page moves whole: its pages all go to the same node
 * (spread_assign).  hugetlbfs pages never move (spread.c says why).
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
	bool shared;			/* shared and file pages too (MPOL_MF_MOVE_ALL) */
	void (*progress)(const struct spread_progress *p, void *arg);	/* or NULL */
	void *arg;
};

/* The share of each node: excess[n] pages to move off node n, deficit[n]
 * pages it should receive, for count[n] pages now on each of nnodes
 * nodes and the set to spread over: shares in proportion to weights[n]
 * (NULL: equal), the remainder one page each to the first nodes. */
void spread_plan(const long *count, int nnodes, const struct bitmask *set, const unsigned int *weights,
		 long *excess, long *deficit);

/* One part of a group's move: pages to node `to'. */
struct spread_piece {
	int to;
	long pages;
};

/* How a group of pages may move (see spread_assign). */
enum spread_unit {
	SPREAD_PAGES,		/* small pages: split over nodes as they have room */
	SPREAD_HUGE_FIT,	/* a huge page: whole, where all of it fits */
	SPREAD_HUGE_NEAR,	/* a huge page: whole, where at least half of it fits */
};

/* Where g pages that sit on node `from', within one aligned block of a
 * huge page's size, go: to the node with the most room left (deficit),
 * no more than from's excess.  A transparent huge page moves as a unit in
 * the kernel: it goes whole to one node or stays, and only if at least
 * half of it is excess.  spread_process plans in three rounds: huge pages
 * that fit, then small pages to fill each share exactly, then huge pages
 * that fit by half where small pages ran out (each node then ends within
 * half a huge page of its share).  excess[] and deficit[] are taken down
 * by what moves.  Fills out[] (nnodes entries at most), returns how many. */
int spread_assign(int from, long g, enum spread_unit unit, int nnodes, long *excess, long *deficit,
		  struct spread_piece *out);

/* The weighted interleave's node weights, from
 * /sys/kernel/mm/mempolicy/weighted_interleave/nodeN (1 where a node has
 * none to read).  0, or -1 where the kernel has no weighted interleave. */
int spread_read_weights(unsigned int *weights, int nnodes);

/* Re-spread process pid's pages over set with move_pages(2), in batches.
 * 0, or -1 with res->err; res says how far it got either way. */
int spread_process(pid_t pid, const struct bitmask *set, const struct spread_options *opt,
		   struct spread_result *res);

#endif
