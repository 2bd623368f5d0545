/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * failure.c - the table of failures (one row each) and the one function
 * that puts a row into words.  Messages are templates whose {names} are
 * filled from the subject and the detail; the set of names is closed
 * (see fill()), and a template is a constant of this file, never input.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "failure.h"

struct failure_row {
	const char *name;	/* for scripts and tests */
	bool gone;		/* a thread found by -a that fails so has exited */
	const char *message;	/* whole, so that a message seen can be found here */
	const char *hint;	/* the part of it that says what to do, or NULL */
};

static const struct failure_row rows[] = {
	[FAIL_NONE] = { "none", false, "no error", NULL },
	[FAIL_NO_SUCH_PROCESS] = { "no-such-process", false, "no such process", NULL },
	[FAIL_NOT_A_PROCESS] = { "not-a-process", false,
		"{pid} is a thread of pid {owner}, not a process (use -p {owner} -a for every thread)",
		"use -p {owner} -a for every thread" },
	[FAIL_CANNOT_PIN] = { "cannot-pin", false,
		"this kernel cannot pin PID:INODE (pidfd inodes are unique only since Linux 6.9); "
		"use the PID alone", "use the PID alone" },
	[FAIL_INODE_MISMATCH] = { "inode-mismatch", false,
		"pid {pid} is another process now (its pidfd inode is {inode})", NULL },
	[FAIL_EXITED] = { "exited", true, "{task} has exited", NULL },
	[FAIL_NO_THREAD_PIDFD] = { "no-thread-pidfd", false,
		"this kernel cannot address single threads (needs PIDFD_THREAD, Linux 6.9)", NULL },
	[FAIL_UNSETTLED] = { "unsettled", false,
		"threads kept appearing; gave up re-scanning, newer threads may keep the old policy", NULL },
	[FAIL_PROC_HIDDEN] = { "proc-hidden", false,
		"/proc hides pid {pid} from this user (mounted with hidepid?); "
		"see PERMISSIONS in pidmempolicy(8)", "see PERMISSIONS in pidmempolicy(8)" },
	[FAIL_PROC_DENIED] = { "proc-denied", false,
		"not allowed to read the memory map of pid {pid} (ptrace access mode check; "
		"see PERMISSIONS in pidmempolicy(8))", "see PERMISSIONS in pidmempolicy(8)" },
	[FAIL_LEADER_EXITED] = { "leader-exited", false,
		"the main thread of pid {pid} has exited; its other threads run (use -a)", "use -a" },
	[FAIL_SELF] = { "self", false,
		"pid {pid} is pidmempolicy itself; the ptrace backend cannot trace it", NULL },
	[FAIL_NEEDS_CAP] = { "needs-cap-sys-nice", false, "needs CAP_SYS_NICE (try sudo)", "try sudo" },
	[FAIL_KERNEL_THREAD] = { "kernel-thread", false,
		"{task} is a kernel thread; its policy cannot be changed", NULL },
	[FAIL_ACCESS_DENIED] = { "access-denied", false,
		"not allowed to access pid {pid} (ptrace access mode check; see PERMISSIONS in pidmempolicy(8))",
		"see PERMISSIONS in pidmempolicy(8)" },
	[FAIL_NODES_NOT_ALLOWED] = { "nodes-not-allowed", false,
		"nodes {refused} not allowed for pid {pid} (its Mems_allowed_list: {allowed})", NULL },
	[FAIL_TRACE_DENIED] = { "trace-denied", false,
		"not allowed to trace tid {tid} ({errname}; {yama}see PERMISSIONS in pidmempolicy(8))",
		"see PERMISSIONS in pidmempolicy(8)" },
	[FAIL_ALREADY_TRACED] = { "already-traced", false,
		"tid {tid} is already traced by pid {tracer} (a debugger?); left alone", NULL },
	[FAIL_SECCOMP] = { "seccomp", false,
		"tid {tid} runs under a seccomp filter that might kill it on set_mempolicy(2); "
		"left alone (--allow-seccomp overrides)", "--allow-seccomp overrides" },
	[FAIL_COMPAT_TASK] = { "compat-task", false,
		"tid {tid} is a 32-bit task; the ptrace backend does not inject into it", NULL },
	[FAIL_ARCH_UNSUPPORTED] = { "arch-unsupported", false,
		"the ptrace backend is not supported on this architecture", NULL },
	[FAIL_INJECTION] = { "injection-failed", false, "ptrace injection failed: {text}{errsuffix}", NULL },
	[FAIL_FROZEN] = { "frozen", false,
		"pid {pid} is in the frozen cgroup {cgroup}; thaw it first ({thaw})", "thaw it first ({thaw})" },
	[FAIL_NOT_STOPPED] = { "not-stopped", false,
		"did not stop for ptrace within 2 s (uninterruptible sleep? a vfork parent?); "
		"left unchanged", NULL },
	[FAIL_SECCOMP_REFUSED] = { "seccomp-refused", false,
		"its seccomp filter refused set_mempolicy(2) ({errname}); left unchanged", NULL },
	[FAIL_ERRNO] = { "errno", false, "{strerror} ({errname})", NULL },
};

/* A new failure at the end of the enum needs its row. */
_Static_assert(sizeof(rows) / sizeof(rows[0]) == FAIL_ERRNO + 1, "a failure without a row");

static const struct failure_row *row(enum failure f)
{
	if ((size_t)f >= sizeof(rows) / sizeof(rows[0]) || !rows[f].name)
		return &rows[FAIL_ERRNO];
	return &rows[f];
}

const char *failure_name(enum failure f)
{
	return row(f)->name;
}

bool failure_is_gone(enum failure f)
{
	return row(f)->gone;
}

const char *failure_errname(int err)
{
	const char *n;

	if (err == 0)
		return "0";
	n = strerrorname_np(err);
	return n ? n : "unknown errno";
}

/* Bytes appended to a bounded buffer; the cursor stops at its end. */
struct out {
	char *buf;
	size_t len, at;
};

static void put(struct out *o, const char *s, size_t n)
{
	while (n-- && o->at + 1 < o->len)
		o->buf[o->at++] = *s++;
	o->buf[o->at] = '\0';
}

static void put_num(struct out *o, unsigned long long v, bool negative)
{
	char num[24];
	size_t at = sizeof(num);

	do
		num[--at] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	if (negative)
		num[--at] = '-';
	put(o, num + at, sizeof(num) - at);
}

static void put_int(struct out *o, long long v)
{
	put_num(o, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, v < 0);
}

static void puts_(struct out *o, const char *s)
{
	put(o, s ? s : "", s ? strlen(s) : 0);
}

/* One {name} of a template. */
static void fill(struct out *o, const char *name, size_t n, const struct failure_subject *who,
		 const struct failure_detail *d)
{
#define IS(s) (n == sizeof(s) - 1 && memcmp(name, s, n) == 0)
	if (IS("pid"))
		put_int(o, who->pid);
	else if (IS("tid"))
		put_int(o, who->tid);
	else if (IS("task")) {
		puts_(o, who->per_thread ? "tid " : "pid ");
		put_int(o, who->per_thread ? who->tid : who->pid);
	} else if (IS("owner"))
		put_int(o, who->owner);
	else if (IS("inode"))
		put_num(o, who->inode, false);
	else if (IS("tracer"))
		put_int(o, d->tracer);
	else if (IS("allowed"))
		puts_(o, d->allowed);
	else if (IS("refused"))
		puts_(o, d->refused);
	else if (IS("text"))
		puts_(o, d->text);
	else if (IS("cgroup"))
		puts_(o, d->cgroup);
	else if (IS("thaw")) {
		puts_(o, d->cgroup_v1 ? "echo THAWED > " : "echo 0 > ");
		puts_(o, d->cgroup);
		puts_(o, d->cgroup_v1 ? "/freezer.state" : "/cgroup.freeze");
	}
	else if (IS("strerror"))
		puts_(o, strerror(d->err));
	else if (IS("errname"))
		puts_(o, failure_errname(d->err));
	else if (IS("errsuffix")) {
		if (d->err) {
			puts_(o, ": ");
			puts_(o, strerror(d->err));
		}
	} else if (IS("yama")) {
		if (d->yama_scope > 0) {
			puts_(o, "Yama ptrace_scope is ");
			put_int(o, d->yama_scope);
			puts_(o, ", ");
		}
	}
#undef IS
}

static void expand(struct out *o, const char *tpl, const struct failure_subject *who,
		   const struct failure_detail *d)
{
	while (*tpl) {
		const char *open = strchr(tpl, '{');
		const char *close = open ? strchr(open, '}') : NULL;

		if (!close) {
			puts_(o, tpl);
			return;
		}
		put(o, tpl, (size_t)(open - tpl));
		fill(o, open + 1, (size_t)(close - open - 1), who, d);
		tpl = close + 1;
	}
}

void failure_format(enum failure f, const struct failure_subject *who,
		    const struct failure_detail *d, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	if (len == 0)
		return;
	buf[0] = '\0';
	expand(&o, row(f)->message, who, d);
}

bool failure_hint(enum failure f, const struct failure_subject *who,
		  const struct failure_detail *d, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	if (len == 0)
		return false;
	buf[0] = '\0';
	if (!row(f)->hint)
		return false;
	expand(&o, row(f)->hint, who, d);
	return true;
}
