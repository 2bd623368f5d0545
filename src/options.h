/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.h - the command line into a request: what the user asked for,
 * checked for form, nothing resolved (node lists stay text, PIDs are not
 * looked up).  Usage errors exit 1 with argp's "Try ..." hint.
 */
#ifndef PMP_OPTIONS_H
#define PMP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "show.h"
#include "targets.h"

enum backend_choice {
	CHOOSE_SYSCALL,		/* pidfd_set_mempolicy(2), or exit 2 */
	CHOOSE_PTRACE,		/* each thread calls set_mempolicy(2), through ptrace */
	CHOOSE_AUTO,		/* the syscall where the kernel provides it, else ptrace */
};

struct request {
	int mode;			/* MPOL_*, -1 until a policy option is seen */
	const char *mode_option;	/* e.g. "--interleave", for messages */
	const char *nodes_arg;		/* the node list as typed, or NULL */
	unsigned int mode_flags;	/* MPOL_F_* */
	struct pid_spec *pids;
	size_t npids;
	bool all_threads;
	bool dry_run;
	bool verbose;
	bool show;			/* --show: read, change nothing */
	enum show_view show_view;	/* --show=threads|processes */
	const char *show_columns;	/* -o LIST, or NULL for the view's own */
	bool noheadings, raw;		/* --noheadings, --raw */
	bool json;			/* --json: one JSON document on stdout */
	bool migrate;			/* --migrate: also move existing pages */
	bool migrate_only;		/* --migrate-only: move pages, set no policy */
	unsigned long long rate;	/* --rate: bytes a second at most; 0 none */
	bool migrate_shared;		/* --migrate-shared: a re-spread moves shared and file pages too */
	const char *cgroup;		/* --cgroup=PATH, or NULL */
	const char *unit;		/* --unit=NAME, or NULL */
	enum backend_choice backend;	/* --backend, else the configured default */
	bool backend_given;		/* --backend was on the command line */
	bool allow_seccomp;		/* --allow-seccomp */
	bool no_signal;			/* --no-signal */
};

/* Parse "PID", "PID:INODE" or a comma list of them, appending to *specs.
 * Returns 0, or -1 with one sentence in why (nothing appended). */
int options_parse_pids(const char *arg, struct pid_spec **specs, size_t *n,
		       char *why, size_t whylen);

/* One entry per process, where it was first given: later entries of the
 * same PID are dropped, and a PID:INODE among them pins the one kept (the
 * stricter wins).  -1, with one sentence in why, if one PID is pinned to
 * two inodes, or out of memory. */
int options_merge_pids(struct pid_spec *specs, size_t *n, char *why, size_t whylen);

/* --rate's SIZE/s ("200M/s", "1GiB/s", "4096"): bytes a second, binary
 * units.  0, or -1 for anything else, 0 or too large. */
int options_parse_rate(const char *arg, unsigned long long *rate);

/* Fill req from argv; exits with status 1 on a usage error. */
void options_parse(int argc, char **argv, struct request *req);

void options_release(struct request *req);

#endif
