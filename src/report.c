/*
 * report.c - outcomes to text or JSON, and the exit status.  Decides
 * nothing about what failed: apply() did.
 */
#include "config.h"

#include <numa.h>
#include <string.h>

#include "json.h"
#include "report.h"

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
	if (!json)
		return;
	fprintf(out, "{\"action\":\"%s\",\"policy\":", action_names[action]);
	if (policy_text)
		json_string(out, policy_text);
	else
		fputs("null", out);
	fputs(",\"threads\":[", out);
}

void report_task_name(struct task_handle *h, char *buf, size_t len)
{
	char comm[80] = "";

	const char *known = targets_task_stat(h)->comm;

	if (known[0] && strcmp(known, "?") != 0)
		snprintf(comm, sizeof(comm), " (%s)", known);
	if (h->per_thread && h->problem != HANDLE_UNSETTLED)
		snprintf(buf, len, "tid %d%s of pid %d", (int)h->tid, comm, (int)h->pid);
	else
		snprintf(buf, len, "pid %d%s", (int)h->pid, comm);
}

void report_reason(const struct task_handle *h, const struct outcome *o, char *buf, size_t len)
{
	switch (o->reason) {
	case REASON_NO_SUCH_PROCESS:
		snprintf(buf, len, "no such process");
		break;
	case REASON_NOT_A_PROCESS:
		snprintf(buf, len, "%d is a thread of pid %d, not a process (use -p %d -a for every thread)",
			 (int)h->pid, (int)h->owner, (int)h->owner);
		break;
	case REASON_CANNOT_PIN:
		snprintf(buf, len, "this kernel cannot pin PID:INODE (pidfd inodes are unique only since Linux 6.9); use the PID alone");
		break;
	case REASON_INODE_MISMATCH:
		snprintf(buf, len, "pid %d is another process now (its pidfd inode is %llu)",
			 (int)h->pid, (unsigned long long)h->inode);
		break;
	case REASON_EXITED:
		snprintf(buf, len, "%s %d has exited", h->per_thread ? "tid" : "pid",
			 (int)(h->per_thread ? h->tid : h->pid));
		break;
	case REASON_NO_THREAD_PIDFD:
		snprintf(buf, len, "this kernel cannot address single threads (needs PIDFD_THREAD, Linux 6.9)");
		break;
	case REASON_UNSETTLED:
		snprintf(buf, len, "threads kept appearing; gave up re-scanning, newer threads may keep the old policy");
		break;
	case REASON_NEEDS_CAP:
		snprintf(buf, len, "needs CAP_SYS_NICE (try sudo)");
		break;
	case REASON_KERNEL_THREAD:
		snprintf(buf, len, "%s %d is a kernel thread; its policy cannot be changed",
			 h->per_thread ? "tid" : "pid", (int)(h->per_thread ? h->tid : h->pid));
		break;
	case REASON_PTRACE_DENIED:
		snprintf(buf, len, "not allowed to access pid %d (ptrace access mode check; see PERMISSIONS in pidmempolicy(8))",
			 (int)h->pid);
		break;
	case REASON_NODES_NOT_ALLOWED:
		snprintf(buf, len, "nodes %s not allowed for pid %d (its Mems_allowed_list: %s)",
			 o->refused, (int)h->pid, o->allowed);
		break;
	case REASON_PROC_HIDDEN:
		snprintf(buf, len, "/proc hides pid %d from this user (mounted with hidepid?); see PERMISSIONS in pidmempolicy(8)",
			 (int)h->pid);
		break;
	case REASON_ERRNO:
		snprintf(buf, len, "%s (%s)", strerror(o->err), o->err ? strerrorname_np(o->err) : "0");
		break;
	case REASON_TRACE_DENIED:
		if (o->yama_scope > 0)
			snprintf(buf, len, "not allowed to trace tid %d (%s; Yama ptrace_scope is %d, see PERMISSIONS in pidmempolicy(8))",
				 (int)h->tid, strerrorname_np(o->err) ? strerrorname_np(o->err) : "denied", o->yama_scope);
		else
			snprintf(buf, len, "not allowed to trace tid %d (%s; see PERMISSIONS in pidmempolicy(8))",
				 (int)h->tid, strerrorname_np(o->err) ? strerrorname_np(o->err) : "denied");
		break;
	case REASON_ALREADY_TRACED:
		snprintf(buf, len, "tid %d is already traced by pid %d (a debugger?); left alone",
			 (int)h->tid, (int)o->tracer);
		break;
	case REASON_SECCOMP:
		snprintf(buf, len, "tid %d runs under a seccomp filter that might kill it on set_mempolicy(2); "
			 "left alone (--allow-seccomp overrides)", (int)h->tid);
		break;
	case REASON_COMPAT_TASK:
		snprintf(buf, len, "tid %d is a 32-bit task; the ptrace backend does not inject into it", (int)h->tid);
		break;
	case REASON_PTRACE_UNSUPPORTED:
		snprintf(buf, len, "the ptrace backend is not supported on this architecture");
		break;
	case REASON_INJECTION_FAILED:
		snprintf(buf, len, "ptrace injection failed: %s%s%s", o->detail,
			 o->err ? ": " : "", o->err ? strerror(o->err) : "");
		break;
	case REASON_NONE:
		snprintf(buf, len, "no error");
		break;
	}
}

static const char *result_name(const struct report *r, const struct outcome *o)
{
	switch (o->kind) {
	case OUTCOME_APPLIED:     return "set";
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
	FILE *f = r->out;

	fprintf(f, "%s{\"pid\":%d,\"tid\":%d,\"comm\":", r->objects++ ? "," : "", (int)h->pid, (int)h->tid);
	json_string(f, targets_task_stat(h)->comm);
	fprintf(f, ",\"result\":\"%s\"", result_name(r, o));
	if (o->kind == OUTCOME_SHOWN) {
		fputs(",\"policy\":", f);
		json_string(f, o->state.policy);
		fputs(",\"mems_allowed\":", f);
		json_string(f, o->state.mems_allowed);
		fputs(",\"pages\":", f);
		json_pages(f, &o->state);
	}
	if (o->migrated || o->migrate_err || o->nothing_to_move) {
		fprintf(f, ",\"migration\":{\"moved\":%s,\"not_moved\":%ld,\"errno\":",
			o->migrated ? "true" : "false", o->not_moved);
		if (o->migrate_err)
			json_string(f, strerrorname_np(o->migrate_err));
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs(",\"errno\":", f);
	if (o->err)
		json_string(f, strerrorname_np(o->err) ? strerrorname_np(o->err) : "?");
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

	if (st->nnodes > nodes)
		nodes = st->nnodes;
	if (!r->header_done) {
		fprintf(r->out, "%7s %7s %-15s %-24s %-12s %s\n",
			"PID", "TID", "COMMAND", "POLICY", "MEMS", "PAGES");
		r->header_done = true;
	}
	fprintf(r->out, "%7d %7d %-15s %-24s %-12s", (int)h->pid, (int)h->tid, targets_task_stat(h)->comm,
		st->policy, st->mems_allowed);
	for (unsigned int n = 0; n < nodes && n < INSPECT_MAX_NODES; n++)
		fprintf(r->out, " N%u=%llu", n, st->pages[n]);
	fputc('\n', r->out);
}

/* --migrate / --migrate-only, on the main thread's outcome. */
static void report_migration(struct report *r, struct task_handle *h, const struct outcome *o,
			     const char *name)
{
	(void)h;
	if (o->migrate_err) {
		r->failed++;
		fprintf(r->err, "pidmempolicy: failed to move the pages of %s: %s (%s)\n", name,
			strerror(o->migrate_err), strerrorname_np(o->migrate_err));
		return;
	}
	if (o->not_moved > 0)
		fprintf(r->err, "pidmempolicy: %s: %ld pages could not be moved\n", name, o->not_moved);
	if (!r->verbose || r->json)
		return;
	if (o->nothing_to_move)
		fprintf(r->out, "nothing to move for %s: the policy's nodes are every node\n", name);
	else if (o->migrated)
		fprintf(r->out, "moved the pages of %s to the policy's nodes (%ld not moved)\n", name,
			o->not_moved);
}

void report_task(struct report *r, struct task_handle *h, const struct outcome *o)
{
	char name[128], why[320];

	/* the name costs a read of /proc: only when a line says it */
	name[0] = '\0';
	if (o->kind == OUTCOME_FAILED || o->kind == OUTCOME_WOULD_APPLY ||
	    (r->verbose && !r->json) || o->migrated || o->migrate_err || o->not_moved)
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
			show_row(r, h, &o->state);
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
		report_migration(r, h, o, name);
	if (r->json)
		json_task(r, h, o, why[0] ? why : NULL);
}

void report_failure(struct report *r, const char *what)
{
	r->failed++;
	fprintf(r->err, "pidmempolicy: %s\n", what);
}

int report_finish(struct report *r)
{
	int status;

	if (r->failed == 0 && r->applied > 0)
		status = EXIT_ALL_APPLIED;
	else if (r->applied > 0)
		status = EXIT_PARTIAL;
	else
		status = EXIT_NONE_APPLIED;

	if (r->json)
		fprintf(r->out, "],\"totals\":{\"%s\":%lu,\"failed\":%lu,\"exited\":%lu},\"exit_status\":%d}\n",
			r->action == ACTION_SHOW ? "shown" : r->action == ACTION_DRY_RUN ? "would_set" :
			r->action == ACTION_MIGRATE ? "migrated" : "set",
			r->applied, r->failed, r->gone, status);
	else if (r->verbose && r->action == ACTION_DRY_RUN)
		fprintf(r->out, "%lu would be set, %lu would fail, %lu exited\n", r->applied, r->failed, r->gone);
	else if (r->verbose)
		fprintf(r->out, "%lu %s, %lu failed, %lu exited\n", r->applied,
			r->action == ACTION_SHOW ? "shown" : r->action == ACTION_MIGRATE ? "migrated" : "set",
			r->failed, r->gone);
	if (fflush(r->out) != 0)
		return EXIT_NONE_APPLIED;
	return status;
}
