/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: the failure table, one row per failure, put into words. */
#include <errno.h>
#include <stdio.h>

#include "failure.h"
#include "tap.h"

int main(void)
{
	struct failure_subject who = { .pid = 1200, .tid = 1201, .per_thread = true, .owner = 1200, .inode = 77 };
	struct failure_detail d = { .err = EPERM, .tracer = 900, .yama_scope = 1,
				    .allowed = "0-1", .refused = "3", .text = "PTRACE_SEIZE" };
	char msg[512], hint[256];
	int gone = 0;

	for (int f = FAIL_NONE; f <= FAIL_ERRNO; f++) {
		const char *name = failure_name((enum failure)f);
		bool unique = true;

		for (int g = FAIL_NONE; g < f; g++)
			if (strcmp(failure_name((enum failure)g), name) == 0)
				unique = false;
		ok(name[0] && unique, "failure %d has a row of its own (%s)", f, name);
		failure_format((enum failure)f, &who, &d, msg, sizeof(msg));
		ok(msg[0] && !strchr(msg, '{') && !strchr(msg, '}'), "%s: every {name} filled: %s", name, msg);
		if (failure_hint((enum failure)f, &who, &d, hint, sizeof(hint)))
			ok(hint[0] && strstr(msg, hint), "%s: the hint is part of the message", name);
		gone += failure_is_gone((enum failure)f);
	}
	ok(gone == 1 && failure_is_gone(FAIL_EXITED), "only an exited thread counts as gone");

	failure_format(FAIL_TRACE_DENIED, &who, &d, msg, sizeof(msg));
	is_str(msg, "not allowed to trace tid 1201 (EPERM; Yama ptrace_scope is 1, see PERMISSIONS in pidmempolicy(8))",
	       "Yama's scope named where it is set");
	d.yama_scope = -1;
	failure_format(FAIL_TRACE_DENIED, &who, &d, msg, sizeof(msg));
	is_str(msg, "not allowed to trace tid 1201 (EPERM; see PERMISSIONS in pidmempolicy(8))", "and not without it");
	failure_format(FAIL_INJECTION, &who, &d, msg, sizeof(msg));
	is_str(msg, "ptrace injection failed: PTRACE_SEIZE: Operation not permitted", "injection: where and errno");
	d.err = 0;
	failure_format(FAIL_INJECTION, &who, &d, msg, sizeof(msg));
	is_str(msg, "ptrace injection failed: PTRACE_SEIZE", "injection without an errno");
	d.cgroup = "/sys/fs/cgroup/db";
	failure_format(FAIL_FROZEN, &who, &d, msg, sizeof(msg));
	is_str(msg, "pid 1200 is in the frozen cgroup /sys/fs/cgroup/db; thaw it first "
	       "(echo 0 > /sys/fs/cgroup/db/cgroup.freeze)", "frozen: the process, the cgroup, how to thaw it");
	d.cgroup = "/sys/fs/cgroup/freezer/db";
	d.cgroup_v1 = true;
	failure_format(FAIL_FROZEN, &who, &d, msg, sizeof(msg));
	is_str(msg, "pid 1200 is in the frozen cgroup /sys/fs/cgroup/freezer/db; thaw it first "
	       "(echo THAWED > /sys/fs/cgroup/freezer/db/freezer.state)", "frozen, v1: its freezer.state");
	failure_format(FAIL_NOT_STOPPED, &who, &d, msg, sizeof(msg));
	is_str(msg, "did not stop for ptrace within 2 s (uninterruptible sleep? a vfork parent?); left unchanged",
	       "not stopped: the thread, the wait, the likely reasons");
	failure_format(FAIL_EXITED, &who, &d, msg, sizeof(msg));
	is_str(msg, "tid 1201 has exited", "a thread is named by its tid");
	who.per_thread = false;
	failure_format(FAIL_EXITED, &who, &d, msg, sizeof(msg));
	is_str(msg, "pid 1200 has exited", "a process by its pid");
	failure_format(FAIL_INODE_MISMATCH, &who, &d, msg, sizeof(msg));
	is_str(msg, "pid 1200 is another process now (its pidfd inode is 77)", "the inode");
	failure_format(FAIL_NEEDS_CAP, &who, &d, msg, 10);
	is_str(msg, "needs CAP", "cut to the buffer, terminated");
	failure_format(FAIL_ALREADY_TRACED, &who, &d, msg, sizeof(msg));
	is_str(msg, "tid 1201 is already traced by pid 900 (a debugger?); left alone", "the tracer");
	return tap_done();
}
