/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pidmempolicy - set the NUMA memory policy of a running process.
 *
 * main.c owns the flow and nothing else:
 *   argv -> request -> policy -> setter (verified syscall) -> targets
 *        -> apply -> outcomes -> report -> exit status
 */
#include "config.h"

#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "cgroup.h"
#include "interrupt.h"
#include "nodes.h"
#include "options.h"
#include "output.h"
#include "policy.h"
#include "report.h"
#include "sys.h"
#include "targets.h"
#include "text.h"

struct run {
	struct applier applier;
	struct report report;
};

static void on_outcome(struct task_handle *h, const struct outcome *o, void *arg)
{
	struct run *run = arg;

	report_task(&run->report, h, o);
}

static void on_tasks(struct task_handle *hs, size_t n, void *arg)
{
	struct run *run = arg;

	apply_tasks(&run->applier, hs, n, on_outcome, run);
}

static void on_process_done(pid_t pid, void *arg)
{
	struct run *run = arg;

	apply_process_done(&run->applier, pid);
	if (run->applier.note[0])
		report_note(&run->report, run->applier.note);
	report_process_done(&run->report, pid);
}

/* request -> policy; 0, or -1 after one line on stderr. */
static int policy_from_request(const struct request *req, struct policy *pol)
{
	char why[512];

	pol->mode = req->mode;
	pol->flags = req->mode_flags;
	pol->nodes = NULL;
	if (req->nodes_arg && nodes_parse(req->nodes_arg, &pol->nodes, why, sizeof(why)) < 0)
		goto invalid;
	if (policy_check(pol, why, sizeof(why)) < 0)
		goto invalid;
	if (!sys_kernel_supports_mode(pol->mode)) {
		snprintf(why, sizeof(why), "this kernel does not support %s (needs Linux 6.9)",
			 policy_mode_option(pol->mode));
		goto invalid;
	}
	return 0;
invalid:
	fprintf(stderr, "pidmempolicy: %s\n", why);
	policy_release(pol);
	return -1;
}

/* The syscall where asked for (or, with auto, where the kernel provides
 * it), else ptrace; why, in *why, for -v.  -1 when the syscall was
 * required and is missing.  --backend=ptrace probes nothing. */
static int choose_backend(const struct request *req, struct setter *setter, enum backend *backend,
			  char *why, size_t len)
{
	*backend = BACKEND_PTRACE;
	if (req->backend == CHOOSE_PTRACE) {
		snprintf(why, len, "%s", req->backend_given ? "--backend=ptrace" : "the configured default");
		return 0;
	}
	if (sys_setter_resolve(setter, getenv("PIDMEMPOLICY_SYSCALL_NR")) == 0) {
		*backend = BACKEND_SYSCALL;
		snprintf(why, len, "the kernel provides pidfd_set_mempolicy(2) as syscall %ld (number from %s)", setter->nr,
			 setter->source);
		return 0;
	}
	snprintf(why, len, "this kernel does not provide pidfd_set_mempolicy(2): %s", setter->why);
	if (req->backend == CHOOSE_AUTO)
		return 0;
	*backend = BACKEND_SYSCALL;	/* what a dry run foresees, for a real run's exit 2 */
	return -1;
}

static enum action action_of(const struct request *req)
{
	if (req->show)
		return ACTION_SHOW;
	if (req->migrate_only)
		return ACTION_MIGRATE;
	return req->dry_run ? ACTION_DRY_RUN : ACTION_SET;
}

/* What main works out before the first target: the run's settings. */
struct setup {
	enum action action;
	struct policy policy;
	char policy_text[1200];
	struct setter setter;
	enum backend backend;
	char backend_why[300];
	bool show_path;			/* --show's PATH column can be foreseen */
	struct show_table *table;	/* --show without --json, until the report takes it */
	char unit_dir[4096];
};

/* --unit as its cgroup; the cgroup checked.  -1 after one line on stderr. */
static int resolve_cgroup(struct request *req, struct setup *su)
{
	char why[400];

	if (req->unit) {
		if (cgroup_of_unit(req->unit, su->unit_dir, sizeof(su->unit_dir), why, sizeof(why)) < 0) {
			char name[300];

			fprintf(stderr, "pidmempolicy: --unit=%s: %s\n",
				text_printable(req->unit, (size_t)-1, name, sizeof(name)), why);
			return -1;
		}
		req->cgroup = su->unit_dir;
	}
	if (req->cgroup && cgroup_check(req->cgroup, why, sizeof(why)) < 0) {
		fprintf(stderr, "pidmempolicy: %s is not a cgroup v2 directory (%s)\n", req->cgroup, why);
		return -1;
	}
	return 0;
}

/* --show's table, its columns checked before any target is read. */
static int open_table(const struct request *req, struct setup *su)
{
	char why[200];
	int max_node;

	if (su->action != ACTION_SHOW || req->json)
		return 0;
	max_node = numa_max_node();
	su->table = show_new(req->show_view, req->show_columns, req->noheadings, req->raw,
			     max_node > 0 ? (unsigned int)max_node : 0, why, sizeof(why));
	if (!su->table) {
		fprintf(stderr, "pidmempolicy: %s\n", why);
		return -1;
	}
	return 0;
}

/* The policy and its text for the report; none for --show. */
static int resolve_policy(const struct request *req, struct setup *su)
{
	if (su->action == ACTION_SHOW)
		return 0;
	if (policy_from_request(req, &su->policy) < 0)
		return -1;
	if (policy_format(&su->policy, su->policy_text, sizeof(su->policy_text)) < 0) {
		fprintf(stderr, "pidmempolicy: node list too long to print\n");
		return -1;
	}
	return 0;
}

/* The backend of a run that sets or foresees, or the one --show's PATH
 * column foresees.  EXIT_NOT_PROVIDED when a run that sets required the
 * syscall and the kernel lacks it (a dry run only says what a real run
 * would do), else 0. */
static int resolve_backend(const struct request *req, struct setup *su)
{
	if (su->action == ACTION_SHOW) {
		/* a syscall backend required and missing: a run sets
		 * nothing, each thread's PATH is "-" */
		if (su->table && show_has_path(su->table))
			su->show_path = choose_backend(req, &su->setter, &su->backend, su->backend_why,
						       sizeof(su->backend_why)) == 0;
		return 0;
	}
	if (su->action == ACTION_MIGRATE ||
	    choose_backend(req, &su->setter, &su->backend, su->backend_why, sizeof(su->backend_why)) == 0)
		return 0;
	if (su->action == ACTION_SET) {
		fprintf(stderr, "pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): %s "
			"(--backend=ptrace works without it)\n", su->setter.why);
		return EXIT_NOT_PROVIDED;
	}
	fprintf(stderr, "pidmempolicy: note: this kernel does not provide pidfd_set_mempolicy(2) "
		"(%s); a real run would exit %d\n", su->setter.why, EXIT_NOT_PROVIDED);
	return 0;
}

static void applier_init(struct applier *a, const struct request *req, struct setup *su, struct report *r)
{
	a->action = su->action;
	a->setter = &su->setter;
	a->policy = su->action == ACTION_SHOW ? NULL : &su->policy;
	a->show_path = su->show_path;
	a->migrate = req->migrate;
	a->spreading.rate = req->rate;
	a->spreading.shared = req->migrate_shared;
	a->spreading.progress = report_progress;
	a->spreading.arg = r;
	a->backend = su->backend;
	a->allow_seccomp = req->allow_seccomp;
	a->no_signal = req->no_signal;
	a->read_before = req->verbose || req->json || su->action == ACTION_DRY_RUN;
}

/* The report's head: the policy, the backend, --show's table (which the
 * report owns from here).  -1 when the table could not be begun. */
static int begin_report(const struct request *req, struct setup *su, struct report *r)
{
	report_init(r, stdout, stderr, su->action, req->verbose, req->json,
		    su->action == ACTION_SHOW ? NULL : su->policy_text);
	if (su->action == ACTION_SET || su->action == ACTION_DRY_RUN)
		report_backend(r, su->backend == BACKEND_PTRACE ? "ptrace" : "syscall", su->backend_why);
	if (su->action == ACTION_SHOW) {
		int shown = report_show(r, su->table, req->show_view);

		su->table = NULL;
		if (shown < 0)
			return -1;
	}
	report_begin(r);
	return 0;
}

/* Every -p, then the cgroup's processes, through the visitor. */
static void walk_targets(const struct request *req, bool all_threads, const struct task_visitor *visitor,
			 struct report *r)
{
	for (size_t i = 0; i < req->npids; i++) {
		if (targets_walk(&req->pids[i], all_threads, visitor) < 0) {
			char what[96];

			snprintf(what, sizeof(what), "out of memory while listing threads of pid %d",
				 (int)req->pids[i].pid);
			report_failure(r, what);
		}
	}
	if (req->cgroup) {
		long found = cgroup_walk(req->cgroup, req->pids, req->npids, all_threads, visitor);
		char what[4200];

		if (found < 0)
			snprintf(what, sizeof(what), "cannot list the processes of cgroup %s: %s",
				 req->cgroup, strerror(errno));
		else if (found == 0 && !interrupt_signal())
			snprintf(what, sizeof(what), "cgroup %s has no processes (nor has any cgroup below it)",
				 req->cgroup);
		if (found < 0 || (found == 0 && !interrupt_signal()))
			report_failure(r, what);
	}
}

int main(int argc, char **argv)
{
	struct request req;
	struct setup su = { .setter.nr = -1, .backend = BACKEND_SYSCALL };
	struct run run = { 0 };
	const struct task_visitor visitor = { .tasks = on_tasks, .process_done = on_process_done, .arg = &run };
	bool all_threads, walked = false;
	int status = EXIT_NONE_APPLIED, refused;

	output_init();
	options_parse(argc, argv, &req);
	su.action = action_of(&req);
	interrupt_catch();

	if (resolve_cgroup(&req, &su) < 0 || open_table(&req, &su) < 0 || resolve_policy(&req, &su) < 0)
		goto out;
	if ((refused = resolve_backend(&req, &su)) != 0) {
		status = refused;
		goto out;
	}
	applier_init(&run.applier, &req, &su, &run.report);
	if (begin_report(&req, &su, &run.report) < 0)
		goto out;
	/* pages belong to the process: --migrate-only needs no thread; a
	 * process's row counts every thread */
	all_threads = (req.all_threads && su.action != ACTION_MIGRATE) ||
		      (su.action == ACTION_SHOW && req.show_view == SHOW_PROCESSES);
	walk_targets(&req, all_threads, &visitor, &run.report);
	/* a signal caught from here on comes too late to stop anything */
	walked = true;
	if (interrupt_signal())
		report_interrupted(&run.report, interrupt_signal(), interrupt_unreached());
	status = report_finish(&run.report);
	/* What a run changed stays changed whatever became of its lines: its
	 * status still says so.  A run that changes nothing has only its
	 * output to give. */
	if (!output_close() && (su.action == ACTION_SHOW || su.action == ACTION_DRY_RUN))
		status = EXIT_NONE_APPLIED;
out:
	show_free(su.table);
	policy_release(&su.policy);
	options_release(&req);
	if (!walked || run.report.signal)
		interrupt_die();
	return status;
}
