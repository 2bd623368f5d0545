/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c - outcomes to text or JSON, and the exit status.  Decides
 * nothing about what failed: apply() did.
 */
#include "config.h"

#include <numa.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	r->progress = isatty(fileno(err)) == 1;
}

void report_backend(struct report *r, const char *name, const char *why)
{
	r->backend = name;
	r->backend_why = why;
}

/* --show: a process's threads as they are read, summed up when the
 * process is done (report_process_done). */
struct tally {
	pid_t pid;			/* 0: none in hand */
	bool main_read;			/* the main thread was read */
	char comm[sizeof(((struct proc_stat *)0)->comm)];
	char policy[sizeof(((struct task_state *)0)->policy)];
	bool policy_known;
	char mems[sizeof(((struct task_state *)0)->mems_allowed)];
	unsigned long long pages[INSPECT_MAX_NODES];
	unsigned int nnodes;
	unsigned long threads;
	struct kind {			/* each policy seen, with how many have it */
		char policy[sizeof(((struct task_state *)0)->policy)];	/* "" unknown */
		unsigned long n;
	} *kinds;
	size_t nkinds;
	bool short_of_memory;		/* a kind could not be counted */
};

int report_show(struct report *r, struct show_table *table, enum show_view view)
{
	r->table = table;
	r->view = view;
	r->tally = calloc(1, sizeof(*r->tally));
	if (r->json && r->tally)
		r->processes = open_memstream(&r->processes_text, &r->processes_len);
	if (!r->tally || (r->json && !r->processes)) {
		fprintf(r->err, "pidmempolicy: out of memory\n");
		return -1;
	}
	return 0;
}

static void tally_count(struct tally *t, const char *policy)
{
	struct kind *k;

	for (size_t i = 0; i < t->nkinds; i++)
		if (strcmp(t->kinds[i].policy, policy) == 0) {
			t->kinds[i].n++;
			return;
		}
	k = reallocarray(t->kinds, t->nkinds + 1, sizeof(*k));
	if (!k) {
		t->short_of_memory = true;
		return;
	}
	t->kinds = k;
	snprintf(k[t->nkinds].policy, sizeof(k->policy), "%s", policy);
	k[t->nkinds++].n = 1;
}

static void tally_thread(struct report *r, struct task_handle *h, const struct task_state *st)
{
	struct tally *t = r->tally;

	if (t->pid != h->pid)
		report_process_done(r, t->pid);
	t->pid = h->pid;
	t->threads++;
	tally_count(t, inspect_policy_known(st) ? st->policy : "");
	/* the pages are the process's: any thread's read gives them */
	memcpy(t->pages, st->pages, sizeof(t->pages));
	t->nnodes = st->nnodes;
	if (targets_comm_known(h) && (h->tid == h->pid || !t->comm[0]))
		snprintf(t->comm, sizeof(t->comm), "%s", targets_task_stat(h)->comm);
	if (h->tid == h->pid) {
		t->main_read = true;
		t->policy_known = inspect_policy_known(st);
		snprintf(t->policy, sizeof(t->policy), "%s", st->policy);
		snprintf(t->mems, sizeof(t->mems), "%s", st->mems_allowed);
	}
}

static void json_pages(FILE *f, const unsigned long long *pages, unsigned int nnodes);

void report_process_done(struct report *r, pid_t pid)
{
	struct tally *t = r->tally;
	char comm[TEXT_ESCAPED_SIZE(sizeof(t->comm))];
	struct show_process p = { 0 };

	if (!t || !t->pid || t->pid != pid)
		return;
	p.pid = t->pid;
	p.policy = t->main_read && t->policy_known ? t->policy : NULL;
	p.mems_allowed = t->main_read && t->mems[0] ? t->mems : NULL;
	p.threads = t->threads;
	for (size_t i = 0; i < t->nkinds; i++)
		if (t->main_read && strcmp(t->kinds[i].policy, t->policy_known ? t->policy : "") == 0)
			p.same = t->kinds[i].n;
	p.pages = t->pages;
	p.nnodes = t->nnodes;
	if (t->short_of_memory)
		report_failure(r, "out of memory while counting the threads' policies");
	if (r->processes) {
		FILE *f = r->processes;

		fprintf(f, "%s{\"pid\":%d,\"comm\":", ftell(f) > 0 ? "," : "", (int)p.pid);
		json_string_or_null(f, t->comm[0] ? t->comm : NULL);
		fputs(",\"policy\":", f);
		json_string_or_null(f, p.policy);
		fprintf(f, ",\"threads\":%lu,\"same\":%lu,\"differ\":%lu,\"mems_allowed\":", p.threads,
			p.same, p.threads - p.same);
		json_number_list(f, p.mems_allowed);
		fputs(",\"pages\":", f);
		json_pages(f, p.pages, p.nnodes);
		fputc('}', f);
	} else if (r->table && r->view == SHOW_PROCESSES) {
		p.comm = t->comm[0] ? text_escape(t->comm, sizeof(t->comm), comm, sizeof(comm)) : NULL;
		if (show_add_process(r->table, &p) < 0)
			report_failure(r, "out of memory while drawing the table");
	}
	free(t->kinds);
	memset(t, 0, sizeof(*t));
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

	if (targets_comm_known(h))
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

static void json_pages(FILE *f, const unsigned long long *pages, unsigned int nnodes)
{
	unsigned int nodes = (unsigned int)numa_max_node() + 1;

	if (nnodes > nodes)
		nodes = nnodes;
	fputc('{', f);
	for (unsigned int n = 0; n < nodes && n < INSPECT_MAX_NODES; n++)
		fprintf(f, "%s\"%u\":%llu", n ? "," : "", n, pages[n]);
	fputc('}', f);
}

/* A re-spread's detail: pages per node before and after, why pages
 * stayed, whether a signal stopped it. */
static void json_spread(FILE *f, const struct spread_result *d)
{
	fputs(",\"before\":{", f);
	for (int n = 0; n < d->nnodes; n++)
		fprintf(f, "%s\"%d\":%ld", n ? "," : "", n, d->before[n]);
	fputs("},\"after\":{", f);
	for (int n = 0; n < d->nnodes; n++)
		fprintf(f, "%s\"%d\":%ld", n ? "," : "", n, d->after[n]);
	fprintf(f, "},\"to_move\":%ld,\"not_moved_by\":{", d->to_move);
	for (int i = 0; i < SPREAD_MAX_REASONS && d->reasons[i].pages; i++) {
		fputs(i ? "," : "", f);
		json_string(f, failure_errname(d->reasons[i].err));
		fprintf(f, ":%ld", d->reasons[i].pages);
	}
	fprintf(f, "},\"interrupted\":%s", d->interrupted ? "true" : "false");
}

static const char *const path_names[] = {
	[PATH_NONE] = NULL, [PATH_SYSCALL] = "syscall", [PATH_PTRACE] = "ptrace", [PATH_SIGNAL] = "signal",
};

/* -v's and a dry run's ", by signal" or ", by ptrace: WHY", where the
 * signal engine ran (would run) in the thread's process: which way this
 * thread took. */
static const char *path_text(const struct outcome *o, char *buf, size_t len)
{
	if (!o->engine)
		return "";
	if (o->path == PATH_SIGNAL)
		snprintf(buf, len, ", by signal");
	else
		snprintf(buf, len, ", by ptrace%s%s", o->path_why ? ": " : "", o->path_why ? o->path_why : "");
	return buf;
}

static void json_path(FILE *f, const struct outcome *o)
{
	fputs(",\"path\":", f);
	json_string_or_null(f, path_names[o->path]);
	if (o->path_why) {
		fputs(",\"path_why\":", f);
		json_string(f, o->path_why);
	}
	if (o->path == PATH_SIGNAL && o->kind == OUTCOME_APPLIED)	/* not foreseen */
		fprintf(f, ",\"delay_us\":%ld,\"interrupted_call\":%s", o->delay_us,
			o->interrupted ? "true" : "false");
}

static void json_task(struct report *r, struct task_handle *h, const struct outcome *o,
		      const char *why)
{
	const struct migration *m = &o->migration;
	FILE *f = r->out;

	fprintf(f, "%s{\"pid\":%d,\"tid\":%d,\"comm\":", r->objects++ ? "," : "", (int)h->pid, (int)h->tid);
	json_string_or_null(f, targets_comm_known(h) ? targets_task_stat(h)->comm : NULL);
	fprintf(f, ",\"result\":\"%s\"", result_name(r, o));
	if (o->held_us >= 0)
		fprintf(f, ",\"held_us\":%ld", o->held_us);
	if (r->action == ACTION_SET || r->action == ACTION_DRY_RUN)
		json_path(f, o);
	if (o->kind == OUTCOME_SHOWN) {
		fputs(",\"policy\":", f);
		json_string_or_null(f, inspect_policy_known(o->state) ? o->state->policy : NULL);
		fputs(",\"mems_allowed\":", f);
		json_number_list(f, o->state->mems_allowed);
	}
	fputs(",\"policy_before\":", f);
	json_string_or_null(f, o->before && inspect_policy_known(o->before) ? o->before->policy : NULL);
	if (m->moved || m->err || m->nothing_to_move) {
		fprintf(f, ",\"migration\":{\"moved\":%s,\"not_moved\":%ld,\"errno\":",
			m->moved ? "true" : "false", m->not_moved);
		if (m->err)
			json_string(f, failure_errname(m->err));
		else
			fputs("null", f);
		if (m->spread)
			fprintf(f, ",\"pages\":%ld,\"pages_moved\":%ld", m->pages, m->moved_pages);
		if (m->detail)
			json_spread(f, m->detail);
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

/* --show: a thread's row, or its share of its process's. */
static void show_thread(struct report *r, struct task_handle *h, const struct outcome *o)
{
	const struct task_state *st = o->state;
	char comm[SHOWN_COMM_SIZE], policy[TEXT_ESCAPED_SIZE(sizeof(st->policy))],
	     mems[TEXT_ESCAPED_SIZE(sizeof(st->mems_allowed))];
	struct show_thread row = { .pid = h->pid, .tid = h->tid, .path = path_names[o->path] };

	tally_thread(r, h, st);
	if (!r->table || r->view != SHOW_THREADS)
		return;
	if (targets_comm_known(h))
		row.comm = text_escape(targets_task_stat(h)->comm, (size_t)-1, comm, sizeof(comm));
	if (inspect_policy_known(st))
		row.policy = text_escape(st->policy, sizeof(st->policy), policy, sizeof(policy));
	if (st->mems_allowed[0])
		row.mems_allowed = text_escape(st->mems_allowed, sizeof(st->mems_allowed), mems, sizeof(mems));
	if (show_add_thread(r->table, &row) < 0)
		report_failure(r, "out of memory while drawing the table");
}

/* "(was interleave:0-3)": the policy before, for -v */
static const char *before_text(const struct outcome *o, char *buf, size_t len)
{
	char policy[TEXT_ESCAPED_SIZE(sizeof(o->before->policy))];

	if (!o->before)
		return "";
	snprintf(buf, len, " (was %s)", inspect_policy_known(o->before) ?
		 text_escape(o->before->policy, sizeof(o->before->policy), policy, sizeof(policy)) :
		 "unknown");
	return buf;
}

void report_progress(const struct spread_progress *p, void *arg)
{
	struct report *r = arg;
	double rate = p->seconds > 0 ? (double)p->done * 4096.0 / p->seconds / 1048576.0 : 0;

	if (!r->progress || (p->seconds - r->progress_at < 0.1 && p->done < p->total))
		return;
	r->progress_at = p->seconds;
	fprintf(r->err, "\rpidmempolicy: moving the pages of pid %d: %ld of %ld (%.1f MiB/s", (int)p->pid,
		p->done, p->total, rate);
	if (p->done > 0 && p->done < p->total)
		fprintf(r->err, ", %.0f s left", p->seconds * (double)(p->total - p->done) / (double)p->done);
	fputs(")\033[K", r->err);
	fflush(r->err);
	r->progress_drawn = true;
}

/* The pages that stayed, by the kernel's reason: "EBUSY 3, ENOMEM 1". */
static void reasons_text(const struct spread_result *d, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; d && i < SPREAD_MAX_REASONS && d->reasons[i].pages && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s %ld", i ? ", " : "",
				       failure_errname(d->reasons[i].err), d->reasons[i].pages);
}

/* --migrate / --migrate-only, on the main thread's outcome. */
static void report_migration(struct report *r, const struct migration *m, const char *name)
{
	const struct spread_result *d = m->detail;
	char reasons[200];

	if (r->progress_drawn) {
		fputs("\r\033[K", r->err);	/* the progress line's place */
		r->progress_drawn = false;
	}
	if (m->err) {
		r->failed++;
		fprintf(r->err, "pidmempolicy: failed to move the pages of %s: %s (%s)\n", name,
			strerror(m->err), failure_errname(m->err));
		return;
	}
	reasons_text(d, reasons, sizeof(reasons));
	if (d && d->interrupted)
		fprintf(r->err, "pidmempolicy: interrupted while moving the pages of %s: %ld of %ld moved\n",
			name, d->moved, d->to_move);
	if (m->not_moved > 0)
		fprintf(r->err, "pidmempolicy: %s: %ld pages could not be moved%s%s%s\n", name, m->not_moved,
			reasons[0] ? " (" : "", reasons, reasons[0] ? ")" : "");
	if (!r->verbose || r->json)
		return;
	if (m->spread) {
		fprintf(r->out, "re-spread the pages of %s over the policy's nodes: %ld of %ld moved (%ld not moved)\n",
			name, m->moved_pages, m->pages, m->not_moved);
		fputs("  pages per node:", r->out);
		for (int n = 0; d && n < d->nnodes; n++)
			fprintf(r->out, " N%d %ld->%ld", n, d->before[n], d->after[n]);
		fputc('\n', r->out);
	} else if (m->nothing_to_move) {
		fprintf(r->out, "nothing to move for %s: the policy's nodes are every node\n", name);
	} else if (m->moved) {
		fprintf(r->out, "moved the pages of %s to the policy's nodes (%ld not moved)\n", name,
			m->not_moved);
	}
}

void report_note(struct report *r, const char *text)
{
	fprintf(r->err, "pidmempolicy: note: %s\n", text);
	if (!r->json)
		return;
	if (!r->notes)
		r->notes = open_memstream(&r->notes_text, &r->notes_len);
	if (r->notes) {
		fputs(r->notes_count++ ? "," : "", r->notes);
		json_string(r->notes, text);
	}
}

static void report_applied(struct report *r, const struct outcome *o, const char *name)
{
	char before[300], path[160];

	r->applied++;
	if (r->verbose && !r->json && r->action == ACTION_SET)
		fprintf(r->out, "set %s to %s%s%s\n", name, r->policy_text,
			before_text(o, before, sizeof(before)), path_text(o, path, sizeof(path)));
	if (o->interrupted) {
		char note[REPORT_NAME_SIZE + 120];

		snprintf(note, sizeof(note), "%s: the signal ended a system call it had just entered "
			 "(EINTR)", name);
		report_note(r, note);
	}
	report_migration(r, &o->migration, name);
}

/* One line on stderr per failed thread; a frozen cgroup holds the whole
 * process, so one line says it for all of its threads. */
static void report_failed(struct report *r, const struct task_handle *h, const struct outcome *o,
			  char *name, const char *why)
{
	r->failed++;
	if (o->failure == FAIL_FROZEN && r->frozen_named == h->pid)
		return;
	if (o->failure == FAIL_FROZEN) {
		struct task_handle process = *h;

		process.per_thread = false;
		report_task_name(&process, name, REPORT_NAME_SIZE);
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
}

void report_task(struct report *r, struct task_handle *h, const struct outcome *o)
{
	char name[REPORT_NAME_SIZE], why[1024], path[160];

	/* the name costs a read of /proc: only when a line says it */
	name[0] = '\0';
	if (o->kind == OUTCOME_FAILED || o->kind == OUTCOME_WOULD_APPLY || o->interrupted ||
	    (r->verbose && !r->json) || o->migration.moved || o->migration.err || o->migration.not_moved)
		report_task_name(h, name, sizeof(name));
	why[0] = '\0';
	if (o->kind == OUTCOME_GONE || o->kind == OUTCOME_FAILED)
		report_reason(h, o, why, sizeof(why));
	switch (o->kind) {
	case OUTCOME_APPLIED:
		report_applied(r, o, name);
		break;
	case OUTCOME_WOULD_APPLY:
		r->applied++;
		if (!r->json)
			fprintf(r->out, "would set %s to %s%s\n", name, r->policy_text,
				path_text(o, path, sizeof(path)));
		break;
	case OUTCOME_SHOWN:
		r->applied++;
		show_thread(r, h, o);
		break;
	case OUTCOME_GONE:
		r->gone++;
		if (r->verbose && !r->json)
			fprintf(r->out, "%s exited before it could be %s\n", name,
				r->action == ACTION_SHOW ? "read" : "set");
		break;
	case OUTCOME_FAILED:
		report_failed(r, h, o, name, why);
		break;
	}
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

static int exit_status(const struct report *r)
{
	if (r->signal)
		return 128 + r->signal;	/* what the shell sees of a death by it */
	if (r->failed == 0 && r->applied > 0)
		return EXIT_ALL_APPLIED;
	return r->applied > 0 ? EXIT_PARTIAL : EXIT_NONE_APPLIED;
}

/* The document's tail: the processes and notes kept aside, the totals. */
static void json_finish(struct report *r, int status)
{
	fputs("],\"processes\":", r->out);
	if (r->processes && fflush(r->processes) == 0)
		fprintf(r->out, "[%.*s]", (int)r->processes_len, r->processes_text);
	else
		fputs("null", r->out);
	fputs(",\"notes\":[", r->out);
	if (r->notes && fflush(r->notes) == 0)
		fprintf(r->out, "%.*s", (int)r->notes_len, r->notes_text);
	fputc(']', r->out);
	fprintf(r->out, ",\"totals\":{\"done\":%lu,\"failed\":%lu,\"exited\":%lu,\"not_reached\":%lu}",
		r->applied, r->failed, r->gone, r->signal ? r->unreached : 0);
	if (r->signal)
		fprintf(r->out, ",\"interrupted\":true,\"signal\":\"SIG%s\"", sigabbrev_np(r->signal));
	else
		fputs(",\"interrupted\":false,\"signal\":null", r->out);
	fprintf(r->out, ",\"exit_status\":%d}\n", status);
}

/* -v: the backend with the totals, so that each thread's line is where
 * it would be without it */
static void verbose_totals(const struct report *r)
{
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

static void report_free(struct report *r)
{
	if (r->processes)
		fclose(r->processes);
	free(r->processes_text);
	if (r->notes)
		fclose(r->notes);
	free(r->notes_text);
	show_free(r->table);
	if (r->tally)
		free(r->tally->kinds);
	free(r->tally);
}

int report_finish(struct report *r)
{
	int status = exit_status(r);

	if (r->tally)
		report_process_done(r, r->tally->pid);
	if (r->table && show_print(r->table, r->out) < 0)
		fprintf(r->err, "pidmempolicy: cannot print the table\n");
	if (r->json)
		json_finish(r, status);
	else if (r->verbose)
		verbose_totals(r);
	if (r->signal)
		report_interruption(r);
	report_free(r);
	return status;
}
