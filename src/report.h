/*
 * report.h - outcomes into words and an exit status.  Failures are one line
 * each on stderr; --verbose and --dry-run lines go to stdout.
 */
#ifndef PMP_REPORT_H
#define PMP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "apply.h"
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
	bool verbose;
	bool dry_run;			/* failures are foreseen, not met */
	const char *policy_text;	/* the policy, in the kernel's text form */
	unsigned long applied, failed, gone;
};

void report_init(struct report *r, FILE *out, FILE *err, bool verbose, bool dry_run,
		 const char *policy_text);

/* "pid 1200 (java)" or "tid 1201 (worker) of pid 1200". */
void report_task_name(const struct task_handle *h, char *buf, size_t len);

/* Why it failed, in words that say what to do. */
void report_reason(const struct task_handle *h, const struct outcome *o, char *buf, size_t len);

void report_task(struct report *r, const struct task_handle *h, const struct outcome *o);

/* Print a summary under --verbose; return the exit status. */
int report_finish(struct report *r);

#endif
