/*
 * report.c - outcomes to text and the exit status.  Decides nothing about
 * what failed: apply() did.
 */
#include "config.h"

#include <string.h>

#include "report.h"

void report_init(struct report *r, FILE *out, FILE *err, bool verbose, bool dry_run,
		 const char *policy_text)
{
	memset(r, 0, sizeof(*r));
	r->out = out;
	r->err = err;
	r->verbose = verbose;
	r->dry_run = dry_run;
	r->policy_text = policy_text;
}

void report_task_name(const struct task_handle *h, char *buf, size_t len)
{
	char comm[80] = "";

	if (h->stat.comm[0] && strcmp(h->stat.comm, "?") != 0)
		snprintf(comm, sizeof(comm), " (%s)", h->stat.comm);
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
	case REASON_ERRNO:
		snprintf(buf, len, "%s (%s)", strerror(o->err), o->err ? strerrorname_np(o->err) : "0");
		break;
	case REASON_NONE:
		snprintf(buf, len, "no error");
		break;
	}
}

void report_task(struct report *r, const struct task_handle *h, const struct outcome *o)
{
	char name[128], why[320];

	report_task_name(h, name, sizeof(name));
	switch (o->kind) {
	case OUTCOME_APPLIED:
		r->applied++;
		if (r->verbose)
			fprintf(r->out, "set %s to %s\n", name, r->policy_text);
		break;
	case OUTCOME_WOULD_APPLY:
		r->applied++;
		fprintf(r->out, "would set %s to %s\n", name, r->policy_text);
		break;
	case OUTCOME_GONE:
		r->gone++;
		if (r->verbose)
			fprintf(r->out, "%s exited before it could be set\n", name);
		break;
	case OUTCOME_FAILED:
		r->failed++;
		report_reason(h, o, why, sizeof(why));
		if (r->dry_run)
			fprintf(r->err, "pidmempolicy: would fail to set %s: %s\n", name, why);
		else
			fprintf(r->err, "pidmempolicy: failed to set %s: %s\n", name, why);
		break;
	}
}

int report_finish(struct report *r)
{
	if (r->verbose)
		fprintf(r->out, r->dry_run ? "%lu would be set, %lu would fail, %lu exited\n"
					   : "%lu set, %lu failed, %lu exited\n",
			r->applied, r->failed, r->gone);
	if (fflush(r->out) != 0)
		return EXIT_NONE_APPLIED;
	if (r->failed == 0 && r->applied > 0)
		return EXIT_ALL_APPLIED;
	if (r->applied > 0)
		return EXIT_PARTIAL;
	return EXIT_NONE_APPLIED;
}
