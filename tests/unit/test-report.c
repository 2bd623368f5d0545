/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: errno and problems into the admin's words; exit statuses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"
#include "tap.h"

static const char *reason(const struct task_handle *h, const struct outcome *o)
{
	static char buf[512];

	report_reason(h, o, buf, sizeof(buf));
	return buf;
}

int main(void)
{
	struct task_handle h = { .pid = 1200, .tid = 1201, .per_thread = true, .owner = 1200, .stat_read = true };
	struct outcome o = { .kind = OUTCOME_FAILED };
	struct report r;
	char name[128];
	FILE *sink = fopen("/dev/null", "w");

	if (!sink)
		return 99;
	strcpy(h.stat.comm, "java");
	h.stat.state = 'S';
	report_task_name(&h, name, sizeof(name));
	is_str(name, "tid 1201 (java) of pid 1200", "thread name");
	h.per_thread = false;
	h.tid = 1200;
	report_task_name(&h, name, sizeof(name));
	is_str(name, "pid 1200 (java)", "process name");
	strcpy(h.stat.comm, "?");
	h.stat.state = 0;	/* as targets.c leaves a stat it could not read */
	report_task_name(&h, name, sizeof(name));
	is_str(name, "pid 1200", "unknown comm left out");

	o.failure = FAIL_NEEDS_CAP;
	is_str(reason(&h, &o), "needs CAP_SYS_NICE (try sudo)", "EPERM without the capability");
	o.failure = FAIL_ACCESS_DENIED;
	is_str(reason(&h, &o),
	       "not allowed to access pid 1200 (ptrace access mode check; see PERMISSIONS in pidmempolicy(8))",
	       "ptrace denial");
	o.failure = FAIL_KERNEL_THREAD;
	is_str(reason(&h, &o), "pid 1200 is a kernel thread; its policy cannot be changed", "kernel thread");
	o.failure = FAIL_NODES_NOT_ALLOWED;
	o.detail.refused = "3";
	o.detail.allowed = "0-1";
	is_str(reason(&h, &o), "nodes 3 not allowed for pid 1200 (its Mems_allowed_list: 0-1)", "cpuset");
	o.failure = FAIL_NO_THREAD_PIDFD;
	is_str(reason(&h, &o), "this kernel cannot address single threads (needs PIDFD_THREAD, Linux 6.9)",
	       "no thread pidfds");
	o.failure = FAIL_EXITED;
	is_str(reason(&h, &o), "pid 1200 has exited", "exited");
	o.failure = FAIL_NO_SUCH_PROCESS;
	is_str(reason(&h, &o), "no such process", "no such process");
	h.pid = 1201;
	o.failure = FAIL_NOT_A_PROCESS;
	is_str(reason(&h, &o), "1201 is a thread of pid 1200, not a process (use -p 1200 -a for every thread)",
	       "a TID given as PID");
	o.failure = FAIL_ERRNO;
	o.detail.err = ENOMEM;
	is_str(reason(&h, &o), "Cannot allocate memory (ENOMEM)", "other errno, named");

	/* exit statuses */
	report_init(&r, sink, sink, ACTION_SET, false, false, "interleave:0");
	ok(report_finish(&r) == EXIT_NONE_APPLIED, "nothing done: 1");
	o.kind = OUTCOME_APPLIED;
	report_task(&r, &h, &o);
	ok(report_finish(&r) == EXIT_ALL_APPLIED, "all applied: 0");
	o.kind = OUTCOME_GONE;
	report_task(&r, &h, &o);
	ok(report_finish(&r) == EXIT_ALL_APPLIED, "a thread that exited is no failure: 0");
	o.kind = OUTCOME_FAILED;
	report_task(&r, &h, &o);
	ok(report_finish(&r) == EXIT_PARTIAL, "some applied, some failed: 64");
	report_init(&r, sink, sink, ACTION_SET, false, false, "interleave:0");
	report_task(&r, &h, &o);
	ok(report_finish(&r) == EXIT_NONE_APPLIED, "only failures: 1");
	fclose(sink);

	/* an errno the C library has no name for: strerrorname_np gives NULL */
	{
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);

		if (!mem)
			return 99;
		report_init(&r, mem, mem, ACTION_SET, false, false, "interleave:0");
		o.kind = OUTCOME_APPLIED;
		o.migration.err = 4000;
		report_task(&r, &h, &o);
		fflush(mem);
		ok(strstr(text, "(unknown errno)") != NULL, "migration errno without a name: %s", text);
		fclose(mem);
		free(text);
		text = NULL;
		mem = open_memstream(&text, &len);
		if (!mem)
			return 99;
		report_init(&r, mem, mem, ACTION_SET, false, true, "interleave:0");
		report_backend(&r, "ptrace", "this kernel does not provide pidfd_set_mempolicy(2): test");
		report_begin(&r);
		report_task(&r, &h, &o);
		report_finish(&r);
		fflush(mem);
		ok(strstr(text, "\"errno\":\"unknown errno\"") != NULL, "and in JSON: %s", text);
		ok(strncmp(text, "{\"schema\":1,\"action\":\"set\",\"backend\":\"ptrace\",\"policy\":\"interleave:0\",",
			   63) == 0, "JSON: its schema, then the backend: %s", text);
		ok(strstr(text, "\"totals\":{\"done\":1,\"failed\":1,\"exited\":0,\"not_reached\":0},"
			  "\"interrupted\":false,\"signal\":null,") != NULL, "JSON: the same keys for every run: %s", text);
		fclose(mem);
		free(text);

		/* -v: the backend and why, with the totals */
		text = NULL;
		mem = open_memstream(&text, &len);
		if (!mem)
			return 99;
		report_init(&r, mem, mem, ACTION_SET, true, false, "interleave:0");
		report_backend(&r, "syscall", "the kernel provides it");
		report_begin(&r);
		report_finish(&r);
		fflush(mem);
		is_str(text, "backend: syscall (the kernel provides it)\n0 set, 0 failed, 0 exited\n",
		       "-v names the backend and why, before the totals");
		fclose(mem);
		free(text);
	}
	return tap_done();
}
