/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-check.c - what /proc says of a thread before the ptrace backend
 * touches it: the refusals made before attaching, the reason behind a
 * refused PTRACE_SEIZE, and a dry run's foresight of what the seize would
 * say.  One place for each rule: the real run and the dry run share them.
 */
#include "config.h"

#include "ptrace.h"

#if PMP_PTRACE_SUPPORTED

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "privs.h"
#include "procfs.h"
#include "ptrace-tracee.h"

/* ---- what /proc says ----------------------------------------------------- */

struct thread_info {
	struct proc_stat stat;
	struct proc_status status;
};

static int read_thread_info(const struct tracee *t, struct thread_info *ti)
{
	if (procfs_task_stat(t->pid, t->tid, &ti->stat) < 0)
		return -1;
	return procfs_task_status(t->pid, t->tid, &ti->status);
}

static bool is_exiting(const struct thread_info *ti)
{
	return ti->stat.state == 'Z' || ti->stat.state == 'X' || ti->stat.state == 'x';
}

/* Refuse what can be known to fail, or to be unsafe, before touching it.
 * Of a thread other than the leader, only the status is read when it is
 * to be set (its stat would be 4 more system calls per thread): a kernel
 * thread is a process of its own, and an exiting thread is refused by
 * PTRACE_SEIZE, which tracee_explain_seize_refusal then reads the stat for.  A
 * dry run reads both, to foresee that as well. */
int tracee_preflight(struct tracee *t)
{
	struct thread_info ti;
	int r;

	if (t->tid != t->pid && t->s) {
		memset(&ti.stat, 0, sizeof(ti.stat));
		r = procfs_task_status(t->pid, t->tid, &ti.status);
	} else {
		r = read_thread_info(t, &ti);
	}
	if (r < 0) {
		int err = errno;
		enum failure f = targets_proc_failure(t->h, err);

		if (f == FAIL_ERRNO)
			return tracee_verdict(t, FAIL_INJECTION, err, "cannot read /proc of the thread");
		return tracee_verdict(t, f, f == FAIL_EXITED ? ESRCH : err, NULL);
	}
	if (ti.stat.flags & PMP_PF_KTHREAD)
		return tracee_verdict(t, FAIL_KERNEL_THREAD, EPERM, NULL);
	if (is_exiting(&ti))
		return tracee_verdict(t, FAIL_EXITED, ESRCH, NULL);
	/* a thread the session holds ahead is traced by the session's tracer */
	if (ti.status.tracer > 0 && !(t->s && tracer_is(&t->s->tracer, ti.status.tracer))) {
		t->res->tracer = ti.status.tracer;
		return tracee_verdict(t, FAIL_ALREADY_TRACED, EPERM, NULL);
	}
	if (ti.status.seccomp == 2 && !t->req->allow_seccomp)
		return tracee_verdict(t, FAIL_SECCOMP, 0, NULL);
	if (ti.status.seccomp == 1)	/* strict mode: set_mempolicy would kill it */
		return tracee_verdict(t, FAIL_SECCOMP, 0, "strict seccomp mode");
	return 0;
}

/* PTRACE_SEIZE said EPERM or EACCES: say why as well as /proc can tell. */
int tracee_explain_seize_refusal(struct tracee *t, int err)
{
	struct thread_info ti;

	if (read_thread_info(t, &ti) < 0 || is_exiting(&ti))
		return tracee_verdict(t, FAIL_EXITED, ESRCH, NULL);
	if (ti.status.tracer > 0) {
		t->res->tracer = ti.status.tracer;
		return tracee_verdict(t, FAIL_ALREADY_TRACED, err, NULL);
	}
	t->res->yama_scope = procfs_yama_scope();
	return tracee_verdict(t, FAIL_TRACE_DENIED, err, NULL);
}

/* ---- foreseeing what PTRACE_SEIZE would say -------------------------------- */

/* Whether process pid descends from the caller (Yama's ptrace_scope 1). */
static bool descends_from_caller(pid_t pid)
{
	pid_t self = getpid();

	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		struct proc_status st;

		if (pid == self)
			return true;
		if (procfs_task_status(0, pid, &st) < 0)
			return false;
		pid = st.ppid;
	}
	return false;
}

/* The kernel's ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS) without
 * CAP_SYS_PTRACE: the caller's real uid is the target's real, effective
 * and saved uid, its real gid likewise, and the target is dumpable (/proc
 * gives a task that is not dumpable to root). */
static bool may_attach_as_owner(const struct tracee *t, const struct proc_status *st)
{
	char path[64];
	struct stat sb;
	uid_t uid = getuid();
	gid_t gid = getgid();

	for (int i = 0; i < 3; i++)
		if (st->uid[i] != (long)uid || st->gid[i] != (long)gid)
			return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)t->pid, (int)t->tid);
	return stat(path, &sb) == 0 && sb.st_uid == uid;
}

/* The executable's ELF header names a 32-bit machine (not x32, whose
 * tasks have the 64-bit register set). */
static bool runs_32bit_executable(const struct tracee *t)
{
	unsigned char ehdr[EI_NIDENT + 4];
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, ehdr, sizeof(ehdr));
	close(fd);
	if (n != (ssize_t)sizeof(ehdr) || memcmp(ehdr, ELFMAG, SELFMAG) != 0 ||
	    ehdr[EI_CLASS] != ELFCLASS32)
		return false;
	return (ehdr[EI_DATA] == ELFDATA2LSB ? ehdr[EI_NIDENT + 2] | ehdr[EI_NIDENT + 3] << 8 :
		ehdr[EI_NIDENT + 2] << 8 | ehdr[EI_NIDENT + 3]) != EM_X86_64;
}

void ptrace_foresee(const struct task_handle *h, const struct ptrace_request *req,
		    struct ptrace_result *res)
{
	struct tracee tracee, *t = &tracee;
	struct proc_status st;
	int scope, cap;

	if (tracee_check(t, NULL, h, req, res) < 0)
		return;
	scope = procfs_yama_scope();
	cap = privs_have_sys_ptrace() == 1;
	if (procfs_task_status(t->pid, t->tid, &st) < 0) {
		(void)tracee_verdict(t, FAIL_EXITED, ESRCH, NULL);
	} else if (scope == 3 || (scope == 2 && !cap) || (!cap && !may_attach_as_owner(t, &st)) ||
		   (scope == 1 && !cap && !descends_from_caller(t->pid))) {
		res->yama_scope = scope;
		(void)tracee_verdict(t, FAIL_TRACE_DENIED, EPERM, NULL);
	} else if (runs_32bit_executable(t)) {
		(void)tracee_verdict(t, FAIL_COMPAT_TASK, 0, "32-bit executable");
	}
}

#endif /* PMP_PTRACE_SUPPORTED */
