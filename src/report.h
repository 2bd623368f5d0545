/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - outcomes into words and an exit status.  Failures are one line
 * each on stderr, always; --verbose, --dry-run and --show lines go to
 * stdout, or with --json one JSON document does.
 */
#ifndef PMP_REPORT_H
#define PMP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "apply.h"
#include "show.h"
#include "targets.h"

/* Exit statuses (documented in pidmempolicy(8)). */
enum {
	EXIT_ALL_APPLIED = 0,
	EXIT_NONE_APPLIED = 1,	/* also: usage errors */
	EXIT_NOT_PROVIDED = 2,	/* kernel lacks pidfd_set_mempolicy(2) */
	EXIT_PARTIAL = 64,	/* some applied, some failed (as kill(1)) */
};

struct report {
	FILE *out, *err;
	enum action action;
	bool verbose;
	bool json;
	const char *policy_text;	/* the policy in the kernel's text form; NULL for --show */
	const char *backend;		/* "syscall" or "ptrace" when setting; else NULL */
	const char *backend_why;	/* why that one, for -v */
	unsigned long applied, failed, gone;
	unsigned long objects;		/* JSON objects written */
	struct show_table *table;	/* --show without --json: printed at the end */
	enum show_view view;
	struct tally *tally;		/* --show: the process in hand's threads */
	FILE *processes;		/* --show --json: the "processes" array so far */
	char *processes_text;
	size_t processes_len;
	pid_t frozen_named;		/* the process last named as in a frozen cgroup */
	bool progress;			/* stderr is a terminal: draw the progress line */
	bool progress_drawn;		/* one is on it now */
	double progress_at;		/* when it was last drawn */
	FILE *notes;			/* --json: the "notes" array so far */
	char *notes_text;
	size_t notes_len;
	unsigned long notes_count;
	int signal;			/* the run was interrupted by it; 0 if not */
	unsigned long unreached;	/* threads found, not reached for it */
};

void report_init(struct report *r, FILE *out, FILE *err, enum action action, bool verbose,
		 bool json, const char *policy_text);

/* The backend that sets (or would set) the policy, and why that one:
 * --json names it, -v says both.  Before report_begin. */
void report_backend(struct report *r, const char *name, const char *why);

/* --show: the table to fill (NULL with --json) and its view.  Before
 * report_begin.  0, or -1 (out of memory) after one line on stderr. */
int report_show(struct report *r, struct show_table *table, enum show_view view);

/* Begin the output: the JSON document's head, or -v's backend line. */
void report_begin(struct report *r);

/* Room for any task's name as report_task_name gives it. */
#define REPORT_NAME_SIZE 320

/* "pid 1200 (java)" or "tid 1201 (worker) of pid 1200", the name the task
 * chose escaped for a terminal (text_escape). */
void report_task_name(struct task_handle *h, char *buf, size_t len);

/* Why it failed, in words that say what to do. */
void report_reason(const struct task_handle *h, const struct outcome *o, char *buf, size_t len);

void report_task(struct report *r, struct task_handle *h, const struct outcome *o);

/* The last task of process pid has been reported: --show sums it up. */
void report_process_done(struct report *r, pid_t pid);

/* A re-spread's progress (a spread_options callback, arg the report):
 * on a terminal, one line on stderr redrawn in place, at most ten times
 * a second; nothing elsewhere. */
void report_progress(const struct spread_progress *p, void *arg);

/* Something the admin should know that is no failure (what the signal
 * engine left in a process, a call it ended): "pidmempolicy: note: ..."
 * on stderr, and in --json's "notes". */
void report_note(struct report *r, const char *text);

/* A problem outside any one thread (e.g. out of memory): one line on
 * stderr, counted as a failure. */
void report_failure(struct report *r, const char *what);

/* The run was ended by signal sig before it reached `unreached` of the
 * threads it had found: report_finish says so. */
void report_interrupted(struct report *r, int sig, unsigned long unreached);

/* Close the output (the --show table, summary line, JSON totals, the
 * interruption) and free what the report holds; return the exit status
 * (for an interrupted run, 128 + the signal, which the caller dies of). */
int report_finish(struct report *r);

#endif
