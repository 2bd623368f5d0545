/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * show.h - the --show table, drawn by libsmartcols as util-linux tools
 * draw theirs: its two views (a row per thread, or a row per process), its
 * columns and their -o names, --noheadings and --raw.  It formats what it
 * is given; reading the tasks is inspect's, counting them report's.
 */
#ifndef PMP_SHOW_H
#define PMP_SHOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum show_view {
	SHOW_THREADS,		/* a row per target thread */
	SHOW_PROCESSES,		/* a row per process, numastat -p style */
};

struct show_table;

/* One thread's row. */
struct show_thread {
	pid_t pid, tid;
	const char *comm;		/* escaped for a terminal */
	const char *policy;		/* NULL if unknown */
	const char *mems_allowed;	/* NULL if unknown */
	const char *path;		/* PATH: "syscall", "signal", "ptrace", or
					 * NULL where a run would not set it */
};

/* One process's row: its main thread's policy and how many of its
 * threads have the same one, and its resident pages per node. */
struct show_process {
	pid_t pid;
	const char *comm;		/* escaped for a terminal */
	const char *policy;		/* the main thread's; NULL if unknown */
	unsigned long threads, same;	/* threads read; those with policy */
	const char *mems_allowed;	/* the main thread's; NULL if unknown */
	const unsigned long long *pages;	/* per node, 4 KiB pages */
	unsigned int nnodes;
};

/* The view's table with the columns listed in `columns` (comma-separated
 * names, NULL for the view's defaults), for a machine whose highest node
 * is max_node.  NULL, with one sentence in why, for an unknown column or
 * out of memory. */
struct show_table *show_new(enum show_view view, const char *columns, bool noheadings,
			    bool raw, unsigned int max_node, char *why, size_t whylen);

/* Whether the table has the PATH column: what its rows cost to find out
 * is paid only then. */
bool show_has_path(const struct show_table *t);

/* A row.  Text is copied; NULL prints as "unknown" (PATH: "-").  0, or
 * -1 (out of memory). */
int show_add_thread(struct show_table *t, const struct show_thread *th);
int show_add_process(struct show_table *t, const struct show_process *p);

/* Print the table (nothing if it has no row) and free it.  0, or -1. */
int show_print(struct show_table *t, FILE *out);
void show_free(struct show_table *t);

/* The --help text that lists every column of both views (the table in
 * show.c has the same names). */
#define SHOW_COLUMNS_HELP \
	"Columns of --show (-o, --output=LIST):\n" \
	"  PID      process ID\n" \
	"  TID      thread ID (thread view only)\n" \
	"  COMMAND  the name the task gave itself, escaped\n" \
	"  POLICY   task policy as numa_maps proves it, or unknown\n" \
	"           (per process: the main thread's)\n" \
	"  MEMS     nodes the task's cpuset allows\n" \
	"  PATH     how a run with the same options would set the thread:\n" \
	"           syscall, signal, ptrace, or - (thread view only)\n" \
	"  THREADS  threads read (process view only)\n" \
	"  SAME     threads with the main thread's policy (process view only)\n" \
	"  DIFFER   threads with another or an unknown one (process view only)\n" \
	"  N<n>     the process's resident pages on node n, in 4 KiB pages\n" \
	"           (process view only)\n" \
	"Default: PID,TID,COMMAND,POLICY,MEMS; with --show=processes:\n" \
	"PID,COMMAND,POLICY,THREADS,SAME,DIFFER,MEMS,N0,N1,... (every node)."

#endif
