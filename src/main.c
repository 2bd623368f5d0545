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

int main(int argc, char **argv)
{
	struct request req;
	struct policy policy = { 0 };
	struct setter setter = { .nr = -1 };
	struct run run = { 0 };
	const struct task_visitor visitor = { .tasks = on_tasks, .process_done = on_process_done, .arg = &run };
	char policy_text[1200];
	enum action action;
	enum backend backend = BACKEND_SYSCALL;
	char backend_why[300] = "";
	struct show_table *table = NULL;
	char unit_dir[4096];
	bool all_threads, walked = false;
	int status = EXIT_NONE_APPLIED;

	output_init();
	options_parse(argc, argv, &req);
	action = action_of(&req);
	interrupt_catch();

	if (req.unit) {
		char why[400];

		if (cgroup_of_unit(req.unit, unit_dir, sizeof(unit_dir), why, sizeof(why)) < 0) {
			char name[300];

			fprintf(stderr, "pidmempolicy: --unit=%s: %s\n",
				text_printable(req.unit, (size_t)-1, name, sizeof(name)), why);
			goto out;
		}
		req.cgroup = unit_dir;
	}
	if (req.cgroup) {
		char why[200];

		if (cgroup_check(req.cgroup, why, sizeof(why)) < 0) {
			fprintf(stderr, "pidmempolicy: %s is not a cgroup v2 directory (%s)\n", req.cgroup, why);
			goto out;
		}
	}
	if (action == ACTION_SHOW && !req.json) {
		char why[200];
		int max_node = numa_max_node();

		table = show_new(req.show_view, req.show_columns, req.noheadings, req.raw,
				 max_node > 0 ? (unsigned int)max_node : 0, why, sizeof(why));
		if (!table) {
			fprintf(stderr, "pidmempolicy: %s\n", why);
			goto out;
		}
	}
	if (action != ACTION_SHOW) {
		if (policy_from_request(&req, &policy) < 0)
			goto out;
		if (policy_format(&policy, policy_text, sizeof(policy_text)) < 0) {
			fprintf(stderr, "pidmempolicy: node list too long to print\n");
			goto out;
		}
	}
	if (action == ACTION_SET || action == ACTION_DRY_RUN) {
		if (choose_backend(&req, &setter, &backend, backend_why, sizeof(backend_why)) < 0) {
			if (action == ACTION_SET) {
				fprintf(stderr, "pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): %s "
					"(--backend=ptrace works without it)\n", setter.why);
				status = EXIT_NOT_PROVIDED;
				goto out;
			}
			fprintf(stderr, "pidmempolicy: note: this kernel does not provide pidfd_set_mempolicy(2) "
				"(%s); a real run would exit %d\n", setter.why, EXIT_NOT_PROVIDED);
		}
	}

	/* a syscall backend required and missing: a run sets nothing, each
	 * thread's PATH is "-" */
	if (action == ACTION_SHOW && table && show_has_path(table))
		run.applier.show_path = choose_backend(&req, &setter, &backend, backend_why,
						       sizeof(backend_why)) == 0;
	run.applier.action = action;
	run.applier.setter = &setter;
	run.applier.policy = action == ACTION_SHOW ? NULL : &policy;
	run.applier.migrate = req.migrate;
	run.applier.spreading.rate = req.rate;
	run.applier.spreading.shared = req.migrate_shared;
	run.applier.spreading.progress = report_progress;
	run.applier.spreading.arg = &run.report;
	run.applier.backend = backend;
	run.applier.allow_seccomp = req.allow_seccomp;
	run.applier.no_signal = req.no_signal;
	run.applier.read_before = req.verbose || req.json || action == ACTION_DRY_RUN;
	report_init(&run.report, stdout, stderr, action, req.verbose, req.json,
		    action == ACTION_SHOW ? NULL : policy_text);
	if (action == ACTION_SET || action == ACTION_DRY_RUN)
		report_backend(&run.report, backend == BACKEND_PTRACE ? "ptrace" : "syscall", backend_why);
	if (action == ACTION_SHOW) {
		/* the report owns the table from here */
		int shown = report_show(&run.report, table, req.show_view);

		table = NULL;
		if (shown < 0)
			goto out;
	}
	report_begin(&run.report);
	/* pages belong to the process: --migrate-only needs no thread; a
	 * process's row counts every thread */
	all_threads = (req.all_threads && action != ACTION_MIGRATE) ||
		      (action == ACTION_SHOW && req.show_view == SHOW_PROCESSES);
	for (size_t i = 0; i < req.npids; i++) {
		if (targets_walk(&req.pids[i], all_threads, &visitor) < 0) {
			char what[96];

			snprintf(what, sizeof(what), "out of memory while listing threads of pid %d",
				 (int)req.pids[i].pid);
			report_failure(&run.report, what);
		}
	}
	if (req.cgroup) {
		long found = cgroup_walk(req.cgroup, req.pids, req.npids, all_threads, &visitor);
		char what[4200];

		if (found < 0)
			snprintf(what, sizeof(what), "cannot list the processes of cgroup %s: %s",
				 req.cgroup, strerror(errno));
		else if (found == 0 && !interrupt_signal())
			snprintf(what, sizeof(what), "cgroup %s has no processes (nor has any cgroup below it)",
				 req.cgroup);
		if (found < 0 || (found == 0 && !interrupt_signal()))
			report_failure(&run.report, what);
	}
	/* a signal caught from here on comes too late to stop anything */
	walked = true;
	if (interrupt_signal())
		report_interrupted(&run.report, interrupt_signal(), interrupt_unreached());
	status = report_finish(&run.report);
	/* What a run changed stays changed whatever became of its lines: its
	 * status still says so.  A run that changes nothing has only its
	 * output to give. */
	if (!output_close() && (action == ACTION_SHOW || action == ACTION_DRY_RUN))
		status = EXIT_NONE_APPLIED;
out:
	show_free(table);
	policy_release(&policy);
	options_release(&req);
	if (!walked || run.report.signal)
		interrupt_die();
	return status;
}
