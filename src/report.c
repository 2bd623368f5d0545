/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c - outcomes to text or JSON, and the exit status.  Decides
 * nothing about what failed: apply() did.
 */
#include "config.h"

#include <numa.h>
#include <signal.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "text.h"

static const char *const action_names[] = {
	[ACTION_SET] = "set", [ACTION_DRY_RUN] = "dry-run", [ACTION_SHOW] = "show",
	[ACTION_MIGRATE] = "migrate",
};


void report_init(struct report *r, FILE *out, FILE *err, enum action action, bool verbose,
		 bool json, const char *policy_text)
{
	memset(r, 0, sizeof(*r));
	r->out = out;
	r->err = err;
	r->action = action;
	r->verbose = verbose;
	r->json = json;
	r->policy_text = policy_text;
}

void report_backend(struct report *r, const char *name, const char *why)
{
	r->backend = name;
	r->backend_why = why;
}

void report_begin(struct report *r)
{
	if (!r->json)
		return;
	/* schema 1: the same keys for every action, null where one does
	 * not apply (pidmempolicy(8), --json) */
	fprintf(r->out, "{\"schema\":1,\"action\":\"%s\",\"backend\":", action_names[r->action]);
	if (r->backend)
		fprintf(r->out, "\"%s\",", r->backend);
	else
		fputs("null,", r->out);
	fputs("\"policy\":", r->out);
	if (r->policy_text)
		json_string(r->out, r->policy_text);
	else
		fputs("null", r->out);
	fputs(",\"threads\":[", r->out);
}

/* A name the target chose, as a terminal may show it. */
#define SHOWN_COMM_SIZE TEXT_ESCAPED_SIZE(sizeof(((struct proc_stat *)0)->comm))

void report_task_name(struct task_handle *h, char *buf, size_t len)
{
	char comm[SHOWN_COMM_SIZE + 3] = "", shown[SHOWN_COMM_SIZE];
	const char *known = targets_task_stat(h)->comm;

	if (known[0] && strcmp(known, "?") != 0)
		snprintf(comm, sizeof(comm), " (%s)", text_escape(known, (size_t)-1, shown, sizeof(shown)));
	if (h->per_thread && h->problem != FAIL_UNSETTLED)
		snprintf(buf, len, "tid %d%s of pid %d", (int)h->tid, comm, (int)h->pid);
	else
		snprintf(buf, len, "pid %d%s", (int)h->pid, comm);
}

void report_reason(const struct task_handle *h, const struct outcome *o, char *buf, size_t len)
{
	struct failure_subject who = targets_subject(h);

	failure_format(o->failure, &who, &o->detail, buf, len);
}

static const char *result_name(const struct report *r, const struct outcome *o)
{
	switch (o->kind) {
	case OUTCOME_APPLIED:     return r->action == ACTION_MIGRATE ? "migrated" : "set";
	case OUTCOME_WOULD_APPLY: return "would-set";
	case OUTCOME_GONE:        return "exited";
	case OUTCOME_SHOWN:       return "shown";
	case OUTCOME_FAILED:      break;
	}
	return r->action == ACTION_DRY_RUN ? "would-fail" : "failed";
}

static void json_pages(FILE *f, const struct task_state *st)
{
	unsigned int nodes = (unsigned int)numa_max_node() + 1;

	if (st->nnodes > nodes)
		nodes = st->nnodes;
	fputc('{', f);
	for (unsigned int n = 0; n < nodes && n < INSPECT_MAX_NODES; n++)
		fprintf(f, "%s\"%u\":%llu", n ? "," : "", n, st->pages[n]);
	fputc('}', f);
}

static void json_task(struct report *r, struct task_handle *h, const struct outcome *o,
		      const char *why)
{
	const struct migration *m = &o->migration;
	FILE *f = r->out;

	fprintf(f, "%s{\"pid\":%d,\"tid\":%d,\"comm\":", r->objects++ ? "," : "", (int)h->pid, (int)h->tid);
	json_string(f, targets_task_stat(h)->comm);
	fprintf(f, ",\"result\":\"%s\"", result_name(r, o));
	if (o->held_us >= 0)
		fprintf(f, ",\"held_us\":%ld", o->held_us);
	if (o->kind == OUTCOME_SHOWN) {
		fputs(",\"policy\":", f);
		json_string(f, o->state->policy);
		fputs(",\"mems_allowed\":", f);
		json_string(f, o->state->mems_allowed);
		fputs(",\"pages\":", f);
		json_pages(f, o->state);
	}
	if (m->moved || m->err || m->nothing_to_move) {
		fprintf(f, ",\"migration\":{\"moved\":%s,\"not_moved\":%ld,\"errno\":",
			m->moved ? "true" : "false", m->not_moved);
		if (m->err)
			json_string(f, failure_errname(m->err));
		else
			fputs("null", f);
		if (m->spread)
			fprintf(f, ",\"pages\":%ld,\"pages_moved\":%ld", m->pages, m->moved_pages);
		fputc('}', f);
	}
	fputs(",\"errno\":", f);
	if (o->detail.err)
		json_string(f, failure_errname(o->detail.err));
	else
		fputs("null", f);
	fputs(",\"message\":", f);
	if (why)
		json_string(f, why);
	else
		fputs("null", f);
	fputc('}', f);
}

static void show_row(struct report *r, struct task_handle *h, const struct task_state *st)
{
	unsigned int nodes = (unsigned int)numa_max_node() + 1;
	char comm[SHOWN_COMM_SIZE], policy[TEXT_ESCAPED_SIZE(sizeof(st->policy))],
	     mems[TEXT_ESCAPED_SIZE(sizeof(st->mems_allowed))];

	if (st->nnodes > nodes)
		nodes = st->nnodes;
	if (!r->header_done) {
		fprintf(r->out, "%7s %7s %-15s %-24s %-12s %s\n",
			"PID", "TID", "COMMAND", "POLICY", "MEMS", "PAGES");
		r->header_done = true;
	}
	fprintf(r->out, "%7d %7d %-15s %-24s %-12s", (int)h->pid, (int)h->tid,
		text_escape(targets_task_stat(h)->comm, (size_t)-1, comm, sizeof(comm)),
		text_escape(st->policy, sizeof(st->policy), policy, sizeof(policy)),
		text_escape(st->mems_allowed, sizeof(st->mems_allowed), mems, sizeof(mems)));
	for (unsigned int n = 0; n < nodes && n < INSPECT_MAX_NODES; n++)
		fprintf(r->out, " N%u=%llu", n, st->pages[n]);
	fputc('\n', r->out);
}

/* --migrate / --migrate-only, on the main thread's outcome. */
static void report_migration(struct report *r, const struct migration *m, const char *name)
{
	if (m->err) {
		r->failed++;
		fprintf(r->err, "pidmempolicy: failed to move the pages of %s: %s (%s)\n", name,
			strerror(m->err), failure_errname(m->err));
		return;
	}
	if (m->not_moved > 0)
		fprintf(r->err, "pidmempolicy: %s: %ld pages could not be moved\n", name, m->not_moved);
	if (!r->verbose || r->json)
		return;
	if (m->spread)
		fprintf(r->out, "re-spread the pages of %s over the policy's nodes: %ld of %ld moved (%ld not moved)\n",
			name, m->moved_pages, m->pages, m->not_moved);
	else if (m->nothing_to_move)
		fprintf(r->out, "nothing to move for %s: the policy's nodes are every node\n", name);
	else if (m->moved)
		fprintf(r->out, "moved the pages of %s to the policy's nodes (%ld not moved)\n", name,
			m->not_moved);
}

void report_task(struct report *r, struct task_handle *h, const struct outcome *o)
{
	char name[REPORT_NAME_SIZE], why[1024];

	/* the name costs a read of /proc: only when a line says it */
	name[0] = '\0';
	if (o->kind == OUTCOME_FAILED || o->kind == OUTCOME_WOULD_APPLY ||
	    (r->verbose && !r->json) || o->migration.moved || o->migration.err || o->migration.not_moved)
		report_task_name(h, name, sizeof(name));
	why[0] = '\0';
	switch (o->kind) {
	case OUTCOME_APPLIED:
		r->applied++;
		if (r->verbose && !r->json && r->action == ACTION_SET)
			fprintf(r->out, "set %s to %s\n", name, r->policy_text);
		break;
	case OUTCOME_WOULD_APPLY:
		r->applied++;
		if (!r->json)
			fprintf(r->out, "would set %s to %s\n", name, r->policy_text);
		break;
	case OUTCOME_SHOWN:
		r->applied++;
		if (!r->json)
			show_row(r, h, o->state);
		break;
	case OUTCOME_GONE:
		r->gone++;
		report_reason(h, o, why, sizeof(why));
		if (r->verbose && !r->json)
			fprintf(r->out, "%s exited before it could be %s\n", name,
				r->action == ACTION_SHOW ? "read" : "set");
		break;
	case OUTCOME_FAILED:
		r->failed++;
		report_reason(h, o, why, sizeof(why));
		/* a frozen cgroup holds the whole process: one line says it */
		if (o->failure == FAIL_FROZEN && r->frozen_named == h->pid)
			break;
		if (o->failure == FAIL_FROZEN) {
			struct task_handle process = *h;

			process.per_thread = false;
			report_task_name(&process, name, sizeof(name));
			r->frozen_named = h->pid;
		}
		switch (r->action) {
		case ACTION_SET:
			fprintf(r->err, "pidmempolicy: failed to set %s: %s\n", name, why);
			break;
		case ACTION_DRY_RUN:
			fprintf(r->err, "pidmempolicy: would fail to set %s: %s\n", name, why);
			break;
		case ACTION_SHOW:
			fprintf(r->err, "pidmempolicy: failed to read %s: %s\n", name, why);
			break;
		case ACTION_MIGRATE:
			fprintf(r->err, "pidmempolicy: failed to move the pages of %s: %s\n", name, why);
			break;
		}
		break;
	}
	if (o->kind == OUTCOME_APPLIED)
		report_migration(r, &o->migration, name);
	if (r->json)
		json_task(r, h, o, why[0] ? why : NULL);
}

void report_failure(struct report *r, const char *what)
{
	r->failed++;
	fprintf(r->err, "pidmempolicy: %s\n", what);
}

void report_interrupted(struct report *r, int sig, unsigned long unreached)
{
	r->signal = sig;
	r->unreached = unreached;
}

/* "pidmempolicy: interrupted: N of M threads set, K left unchanged": M
 * counts every thread found, K those found and not reached (the failed
 * and the exited had their own lines). */
static void report_interruption(const struct report *r)
{
	static const char *const done[] = {
		[ACTION_SET] = "set", [ACTION_DRY_RUN] = "would be set", [ACTION_SHOW] = "shown",
		[ACTION_MIGRATE] = "moved",
	};
	static const char *const left[] = {
		[ACTION_SET] = "left unchanged", [ACTION_DRY_RUN] = "not looked at",
		[ACTION_SHOW] = "not read", [ACTION_MIGRATE] = "left unchanged",
	};
	unsigned long found = r->applied + r->failed + r->gone + r->unreached;

	fprintf(r->err, "pidmempolicy: interrupted: %lu of %lu %s %s, %lu %s\n", r->applied, found,
		r->action == ACTION_MIGRATE ? "processes" : "threads", done[r->action],
		r->unreached, left[r->action]);
}

int report_finish(struct report *r)
{
	int status;

	if (r->signal)
		status = 128 + r->signal;	/* what the shell sees of a death by it */
	else if (r->failed == 0 && r->applied > 0)
		status = EXIT_ALL_APPLIED;
	else if (r->applied > 0)
		status = EXIT_PARTIAL;
	else
		status = EXIT_NONE_APPLIED;

	if (r->json) {
		fprintf(r->out, "],\"totals\":{\"done\":%lu,\"failed\":%lu,\"exited\":%lu,\"not_reached\":%lu}",
			r->applied, r->failed, r->gone, r->signal ? r->unreached : 0);
		if (r->signal)
			fprintf(r->out, ",\"interrupted\":true,\"signal\":\"SIG%s\"", sigabbrev_np(r->signal));
		else
			fputs(",\"interrupted\":false,\"signal\":null", r->out);
		fprintf(r->out, ",\"exit_status\":%d}\n", status);
	} else if (r->verbose) {
		/* the backend with the totals, so that each thread's line is
		 * where it would be without it */
		if (r->backend)
			fprintf(r->out, "backend: %s (%s)\n", r->backend, r->backend_why);
		if (r->action == ACTION_DRY_RUN)
			fprintf(r->out, "%lu would be set, %lu would fail, %lu exited\n", r->applied,
				r->failed, r->gone);
		else
			fprintf(r->out, "%lu %s, %lu failed, %lu exited\n", r->applied,
				r->action == ACTION_SHOW ? "shown" : r->action == ACTION_MIGRATE ? "migrated" : "set",
				r->failed, r->gone);
	}
	if (r->signal)
		report_interruption(r);
	return status;
}
