/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace.c - the ptrace backend's engine: one thread made to call
 * set_mempolicy(2) itself, and the per-process session that holds the
 * scratch page for the node mask.  Owns the checks before attaching,
 * attaching (seize, interrupt, waits with a deadline), the classification
 * of ptrace stops, the two ways of making a call in the thread, the
 * scratch page's life, and the release of the thread, and says how it
 * went.  The thread's memory is ptrace-mem.c's, the architecture's
 * registers and instructions are ptrace-<arch>.c's (ptrace-arch.h).  See
 * ptrace.h for the method and for what is and is not guaranteed.
 */
#include "config.h"

#include "ptrace.h"

#if PMP_PTRACE_SUPPORTED

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "privs.h"
#include "procfs.h"
#include "ptrace-arch.h"
#include "ptrace-mem.h"
#include "ptrace-tracee.h"
#include "sys.h"

#define MAX_STOPS		64		/* reports passed over while waiting for one */

#ifndef PTRACE_GET_SYSCALL_INFO
# define PTRACE_GET_SYSCALL_INFO	0x420e
#endif

/* Kernel ABI layout, spelled out so that older C libraries do. */
struct pmp_syscall_info {
	uint8_t op;		/* 1 entry, 2 exit */
	uint8_t pad[3];
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t stack_pointer;
	union {
		struct {
			uint64_t nr;
			uint64_t args[6];
		} entry;
		struct {
			int64_t rval;
			uint8_t is_error;
		} exit;
	} u;
};
#define SYSCALL_INFO_ENTRY 1
#define SYSCALL_INFO_EXIT 2

static int read_yama_scope(void)
{
	char buf[32];
	char *end;
	long v;

	if (procfs_read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) < 0)
		return -1;
	v = strtol(buf, &end, 10);
	if (end == buf || v < 0 || v > 3)
		return -1;
	return (int)v;
}

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
 * PTRACE_SEIZE, which explain_seize_refusal then reads the stat for.  A
 * dry run reads both, to foresee that as well. */
static int preflight(struct tracee *t)
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
static int explain_seize_refusal(struct tracee *t, int err)
{
	struct thread_info ti;

	if (read_thread_info(t, &ti) < 0 || is_exiting(&ti))
		return tracee_verdict(t, FAIL_EXITED, ESRCH, NULL);
	if (ti.status.tracer > 0) {
		t->res->tracer = ti.status.tracer;
		return tracee_verdict(t, FAIL_ALREADY_TRACED, err, NULL);
	}
	t->res->yama_scope = read_yama_scope();
	return tracee_verdict(t, FAIL_TRACE_DENIED, err, NULL);
}

/* ---- ptrace primitives ------------------------------------------------- */

static int get_regs(struct tracee *t, regs_t *r)
{
	struct iovec iov = { .iov_base = r, .iov_len = sizeof(*r) };

	if (tracee_ptrace(PTRACE_GETREGSET, t, NT_PRSTATUS, &iov) < 0)
		return tracee_failed(t, errno, "PTRACE_GETREGSET");
	if (iov.iov_len != sizeof(*r))
		return tracee_verdict(t, FAIL_COMPAT_TASK, 0, "32-bit register set");
	return 0;
}

static int set_sigmask(struct tracee *t, uint64_t mask)
{
	if (tracee_ptrace(PTRACE_SETSIGMASK, t, sizeof(mask), &mask) < 0)
		return tracee_failed(t, errno, "PTRACE_SETSIGMASK");
	return 0;
}

static int syscall_info(struct tracee *t, struct pmp_syscall_info *si)
{
	memset(si, 0, sizeof(*si));
	if (tracee_ptrace(PTRACE_GET_SYSCALL_INFO, t, sizeof(*si), si) < 0)
		return tracee_failed(t, errno, "PTRACE_GET_SYSCALL_INFO");
	return 0;
}

static long elapsed_us(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000000 + (now.tv_nsec - since->tv_nsec) / 1000;
}

static long elapsed_ms(const struct timespec *since)
{
	return elapsed_us(since) / 1000;
}

/* The tracee exited (or was reaped by the kernel): nothing more to do. */
static int gone(struct tracee *t)
{
	t->seized = false;
	t->stopped = false;
	return tracee_verdict(t, FAIL_EXITED, ESRCH, NULL);
}

/* Wait for the thread's next stop (or its end), until the timeout from
 * `since' (NULL: from now).  Returns 0 with a stop in *status; -1 when it
 * exited, on a timeout or an error. */
static int wait_stop(struct tracee *t, int *status, const struct timespec *since)
{
	struct timespec start, nap = { 0, 1000000 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (since)
		start = *since;
	else
		clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t r = waitpid(t->tid, status, __WALL | WNOHANG);

		if (r == t->tid) {
			if (WIFEXITED(*status) || WIFSIGNALED(*status))
				return gone(t);
			t->stopped = true;
			return 0;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == ECHILD)
			return gone(t);
		if (r < 0)
			return tracee_verdict(t, FAIL_INJECTION, errno, "waitpid");
		if (elapsed_ms(&start) >= PMP_PTRACE_TIMEOUT_MS) {
			t->timed_out = true;
			if (t->look_ahead)	/* the rest wait alongside it */
				ahead_widen(&t->s->ahead);
			return tracee_verdict(t, FAIL_NOT_STOPPED, ETIMEDOUT, NULL);
		}
		/* A tracee's stop sends SIGCHLD to its tracer, and the tracing
		 * process keeps every signal blocked (ptrace-tracer.h): it
		 * sleeps until a stop, not a fixed time.  One pending SIGCHLD
		 * stands for any number of stops (of the threads held ahead
		 * too), hence the loop.  Where SIGCHLD goes to another thread
		 * (no tracing process could be made), the millisecond makes
		 * this a poll. */
		(void)sigtimedwait(&chld, NULL, &nap);
	}
}

/* After ESRCH from a request on a thread we hold: it was killed.  Collect
 * its exit so that it does not linger as our zombie. */
static int lost(struct tracee *t, int err, const char *what)
{
	int status;

	if (err != ESRCH)
		return tracee_failed(t, err, what);
	t->stopped = false;
	if (wait_stop(t, &status, NULL) == 0)	/* not dead after all: it stopped */
		return tracee_verdict(t, FAIL_INJECTION, ESRCH, what);
	return -1;	/* gone, or a timeout: wait_stop said which */
}

static int resume(struct tracee *t, int how, int sig)
{
	if (tracee_ptrace(how, t, 0, (void *)(uintptr_t)sig) < 0)
		return lost(t, errno, "resuming the thread");
	t->stopped = false;
	return 0;
}

enum stop_kind { STOP_EVENT, STOP_SYSCALL, STOP_SIGNAL, STOP_OTHER };

static enum stop_kind classify_stop(int status, int *sig)
{
	*sig = WSTOPSIG(status);
	if ((status >> 16) == PTRACE_EVENT_STOP)
		return STOP_EVENT;	/* interrupt, or a group stop */
	if ((status >> 16) != 0)
		return STOP_OTHER;
	if (*sig == (SIGTRAP | 0x80))
		return STOP_SYSCALL;
	return STOP_SIGNAL;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Resume with PTRACE_SYSCALL until the next syscall stop, described in
 * *si.  Group-stop and interrupt reports are passed over; a stop signal
 * (the one kind that the blocked mask lets through) is held back; any
 * other signal reaching a signal-delivery stop is a synchronous one and
 * is delivered. */
static int next_syscall_stop(struct tracee *t, int op, const char *where, struct pmp_syscall_info *si)
{
	int status, sig, pass = 0;

	for (int n = 0; n < MAX_STOPS; n++) {
		if (resume(t, PTRACE_SYSCALL, pass) < 0)
			return -1;
		pass = 0;
		if (wait_stop(t, &status, NULL) < 0)
			return -1;
		switch (classify_stop(status, &sig)) {
		case STOP_SYSCALL:
			if (syscall_info(t, si) < 0)
				return -1;
			if (si->op != op)
				return tracee_verdict(t, FAIL_INJECTION, EPROTO, where);
			return 0;
		case STOP_EVENT:
			break;
		case STOP_SIGNAL:
			if (is_stop_signal(sig))
				t->held_stop = sig;
			else
				pass = sig;
			break;
		case STOP_OTHER:
			return tracee_verdict(t, FAIL_INJECTION, EPROTO, "unexpected ptrace event");
		}
	}
	return tracee_verdict(t, FAIL_INJECTION, EPROTO, "the thread kept stopping");
}

/* ---- attaching ----------------------------------------------------------- */

static int seize(struct tracee *t)
{
	if (t->look_ahead && ahead_take(&t->s->ahead, t->tid, &t->since)) {
		t->seized = true;
		t->interrupted = true;
		return 0;
	}
	if (ptrace(PTRACE_SEIZE, t->tid, NULL, (void *)(uintptr_t)PTRACE_O_TRACESYSGOOD) < 0) {
		int err = errno;

		if (err == ESRCH)
			return tracee_verdict(t, FAIL_EXITED, ESRCH, NULL);
		if (err == EPERM || err == EACCES)
			return explain_seize_refusal(t, err);
		return tracee_verdict(t, FAIL_INJECTION, err, "PTRACE_SEIZE");
	}
	t->seized = true;
	return 0;
}

/* Interrupt the thread (unless it was, ahead) and wait for it to stop
 * inside get_signal(): a PTRACE_EVENT_STOP (ours, or a group stop if the
 * process is stopped).  A signal that was being delivered first is handed
 * on; our interrupt stays pending and comes next.  With -a the threads
 * after it are interrupted before the wait, to stop meanwhile; the
 * deadline runs from the interrupt. */
static int stop_thread(struct tracee *t)
{
	int status, sig;

	if (!t->interrupted) {
		if (tracee_ptrace(PTRACE_INTERRUPT, t, 0, NULL) < 0)
			return lost(t, errno, "PTRACE_INTERRUPT");
		t->interrupted = true;
		clock_gettime(CLOCK_MONOTONIC, &t->since);
	}
	if (t->look_ahead)
		ahead_fill(&t->s->ahead, t->tid);
	for (int n = 0; n < MAX_STOPS; n++) {
		if (wait_stop(t, &status, &t->since) < 0)
			return -1;
		switch (classify_stop(status, &sig)) {
		case STOP_EVENT:
			return 0;
		case STOP_SIGNAL:
			if (resume(t, PTRACE_CONT, sig) < 0)
				return -1;
			break;
		case STOP_SYSCALL:
		case STOP_OTHER:
			return tracee_verdict(t, FAIL_INJECTION, EPROTO, "unexpected first stop");
		}
	}
	return tracee_verdict(t, FAIL_INJECTION, EPROTO, "the thread kept stopping");
}

/* The thread we hold is the one the handle names.  PTRACE_SEIZE went by
 * bare TID, which the handle's task may have left behind by exiting since
 * the caller confirmed it.  A TID cannot be reused while its task lives
 * and we hold the seized task stopped, so both answers are final: the
 * handle's pidfd (when it has one) is alive, so the task that held the TID
 * at confirmation still holds it; and the TID is a thread of the PID. */
static int check_identity(struct tracee *t)
{
	if ((t->h->pidfd >= 0 && sys_pidfd_exited(t->h->pidfd) != 0) ||
	    !sys_is_thread_of(t->pid, t->tid))
		return tracee_verdict(t, FAIL_EXITED, ESRCH, "exited; its TID names another task now");
	return 0;
}

/* Save what must be put back, then block all its signals. */
static int take_control(struct tracee *t)
{
	uint64_t all = ~(uint64_t)0;

	if (get_regs(t, &t->regs0) < 0)
		return -1;
	if (arch_in_32bit_code(&t->regs0))
		return tracee_verdict(t, FAIL_COMPAT_TASK, 0, "32-bit code segment");
	if (tracee_ptrace(PTRACE_GETSIGMASK, t, sizeof(t->mask0), &t->mask0) < 0)
		return lost(t, errno, "PTRACE_GETSIGMASK");
	if (set_sigmask(t, all) < 0)
		return -1;
	t->mask_blocked = true;
	return 0;
}

/* Put back what was changed, in reverse order, and detach.  Called in
 * every case; does what the state calls for. */
static void release(struct tracee *t)
{
	int status;

	if (!t->seized)
		return;
	if (!t->stopped && t->timed_out && !t->mask_blocked && t->s) {
		/* It never stopped: nothing was done to it.  The session lets
		 * go of it once it stops, or with its tracing process. */
		ahead_park(&t->s->ahead, t->tid);
		t->seized = false;
		return;
	}
	if (!t->stopped && t->timed_out) {
		/* It ran away in the middle: one more chance to put it back. */
		t->timed_out = false;
		if (tracee_ptrace(PTRACE_INTERRUPT, t, 0, NULL) < 0 || wait_stop(t, &status, NULL) < 0)
			return;	/* the kernel detaches it with the tracing process */
	}
	if (!t->stopped)
		return;
	if (t->have_restore && tracee_set_regs(t, &t->restore) == 0)
		t->have_restore = false;
	if (t->mask_blocked && set_sigmask(t, t->mask0) == 0)
		t->mask_blocked = false;
	if (tracee_ptrace(PTRACE_DETACH, t, 0, NULL) < 0) {
		(void)lost(t, errno, "PTRACE_DETACH");
		return;
	}
	t->seized = false;
	t->stopped = false;
	if (t->interrupted)
		t->res->held_us = elapsed_us(&t->since);
	if (t->held_stop)
		(void)syscall(SYS_tgkill, t->pid, t->tid, t->held_stop);
}

/* ---- making one call in the thread ------------------------------------------ */

static bool is_error(long rv)
{
	return rv < 0 && rv >= -4095;
}

/* Path A: the thread is at the entry stop of its own call again; t->entry
 * gets its registers. */
static int at_own_entry(struct tracee *t)
{
	struct pmp_syscall_info si;

	if (next_syscall_stop(t, SYSCALL_INFO_ENTRY, "expected the thread's own call's entry", &si) < 0 ||
	    get_regs(t, &t->entry) < 0)
		return -1;
	if (si.arch != arch_audit_native)
		return tracee_verdict(t, FAIL_COMPAT_TASK, 0, "inside a 32-bit system call");
	return 0;
}

/* Path A: at the entry of its own call, make c instead; at c's exit,
 * rewind so that its own call is entered again, and wait for that entry.
 * It is released only there, inside its own call: released at c's exit,
 * on its way back to user space, a signal handled then would find no
 * restart code and make it enter its own call again after the handler,
 * where the call would have returned EINTR (a pause(2) would not end). */
static int call_in_place(struct tracee *t, const struct tracee_call *c, long *rv)
{
	struct pmp_syscall_info si;

	t->restore = t->entry;	/* released here, it would make its own call */
	t->have_restore = true;
	if (arch_turn_entry_into_call(t, &t->entry, c) < 0 ||
	    next_syscall_stop(t, SYSCALL_INFO_EXIT, "expected the injected call's exit", &si) < 0)
		return -1;
	*rv = (long)si.u.exit.rval;
	arch_rewind_to_own_call(&t->restore, &t->entry);
	if (tracee_set_regs(t, &t->restore) < 0)
		return -1;
	t->have_restore = false;
	return at_own_entry(t);
}

/* Path B: run c at the system call instruction; every register is given
 * back at the release. */
static int call_at_insn(struct tracee *t, const struct tracee_call *c, long *rv)
{
	struct pmp_syscall_info si;
	regs_t r = t->regs0;

	arch_aim_at_insn(&r, t->insn, c);
	if (tracee_set_regs(t, &r) < 0 ||
	    next_syscall_stop(t, SYSCALL_INFO_ENTRY, "expected the injected call's entry", &si) < 0)
		return -1;
	if (si.u.entry.nr != (uint64_t)c->nr || si.arch != arch_audit_native) {
		arch_skip_entered_call(t);	/* whatever this is, it does not run */
		return tracee_verdict(t, FAIL_INJECTION, EPROTO, "the injected call was not entered");
	}
	if (next_syscall_stop(t, SYSCALL_INFO_EXIT, "expected the injected call's exit", &si) < 0)
		return -1;
	*rv = (long)si.u.exit.rval;
	return 0;
}

/* The thread makes the system call c; *rv is what it returned. */
static int make_call(struct tracee *t, const struct tracee_call *c, long *rv)
{
	return t->in_call ? call_in_place(t, c, rv) : call_at_insn(t, c, rv);
}

/* ---- the scratch page ------------------------------------------------------ */

/* Sized for the largest mask; only the pages written are ever backed. */
static size_t scratch_len(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pg = page > 0 ? (size_t)page : 4096;

	return (SCRATCH_MASK_AT + SCRATCH_MAX + pg - 1) / pg * pg;
}

/* The session's page, proven still to be the one it mapped; else a new
 * one, mapped by the thread.  What the old address holds now is the
 * target's: it is forgotten, neither written nor unmapped.  MAP_NORESERVE
 * keeps the page from merging with the target's own anonymous mappings,
 * which would make its extent unprovable; MAP_POPULATE has it in memory
 * before the target could register it with userfaultfd (the engine
 * writes only to pages present).  0, or -1 with the verdict said. */
static int scratch_page(struct tracee *t)
{
	struct ptrace_session *s = t->s;
	struct tracee_call c = { .nr = __NR_mmap, .arg = { 0, scratch_len(), PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_POPULATE, (unsigned long)-1, 0 } };
	long rv;

	if (s->page && tracee_page_is_ours(t, s->page, s->page_len, s->cookie))
		return 0;
	s->page = 0;
	if (make_call(t, &c, &rv) < 0)
		return -1;
	if (is_error(rv))
		return tracee_verdict(t, FAIL_INJECTION, (int)-rv, "mmap of a scratch page in the thread failed");
	if (rv == 0 || rv % 4096 != 0)
		return tracee_verdict(t, FAIL_INJECTION, EPROTO, "mmap returned nonsense");
	/* MAP_POPULATE: the page is in memory unless the target took it
	 * away (or, rarely, it was not populated).  Either way it is left,
	 * not unmapped: what holds the address now may be the target's. */
	if (tracee_mem_write(t->tid, (unsigned long)rv, &s->cookie, sizeof(s->cookie)) < 0)
		return tracee_failed(t, errno, "cannot write the scratch page");
	s->page = (unsigned long)rv;
	s->page_len = scratch_len();
	return 0;
}

/* The session's page unmapped by the thread, if it is still the one. */
static int unmap_page(struct tracee *t)
{
	struct ptrace_session *s = t->s;
	struct tracee_call c = { .nr = __NR_munmap, .arg = { s->page, s->page_len } };
	long rv;

	if (!s->page)
		return 0;
	if (!tracee_page_is_ours(t, s->page, s->page_len, s->cookie)) {
		s->page = 0;
		return 0;
	}
	if (make_call(t, &c, &rv) < 0)
		return -1;
	if (is_error(rv))
		return tracee_verdict(t, FAIL_INJECTION, (int)-rv, "munmap of the scratch page failed");
	s->page = 0;
	return 0;
}

/* ---- set_mempolicy and the rseq section ------------------------------------ */

static size_t mask_bytes(const struct ptrace_request *req)
{
	const size_t bits = 8 * sizeof(unsigned long);

	if (!req->mask || req->maxnode <= 1)
		return 0;
	return (req->maxnode - 1 + bits - 1) / bits * sizeof(unsigned long);
}

/* The request's node mask in the session's page; its address in *at.
 * The mask is written while the page is proven the session's, and then
 * left there for every thread after: proving it again for each thread
 * (maps, the cookie) cost more than the rest of the thread's work.  What
 * the target does to that copy since is its own doing, as if it had set
 * its policy itself.  But the mask must still be in memory (pagemap),
 * since the kernel reads it inside the thread's call: emptied and
 * registered with userfaultfd, it would hold the call, and the thread,
 * as long as the target likes.  A mask not in memory, or a page unmapped
 * (EFAULT), and `renew' make sure of a page again. */
static int mask_in_page(struct tracee *t, size_t len, bool renew, unsigned long *at)
{
	struct ptrace_session *s = t->s;

	if (renew || !s->page || s->mask_len != len || memcmp(s->mask, t->req->mask, len) != 0 ||
	    tracee_mem_present(t->tid, s->page + SCRATCH_MASK_AT, len) < 0) {
		s->mask_len = 0;
		if (scratch_page(t) < 0)
			return -1;
		if (tracee_mem_write(t->tid, s->page + SCRATCH_MASK_AT, t->req->mask, len) < 0)
			return tracee_failed(t, errno, "cannot write the scratch page");
		memcpy(s->mask, t->req->mask, len);
		s->mask_len = len;
	}
	*at = s->page + SCRATCH_MASK_AT;
	return 0;
}

/* set_mempolicy(mode, mask, maxnode), the mask in the scratch page (none
 * for a policy without nodes: no page either). */
static int set_policy(struct tracee *t)
{
	size_t len = mask_bytes(t->req);
	struct tracee_call c = { .nr = __NR_set_mempolicy, .arg = { (unsigned int)t->req->mode } };
	char path[48];
	long rv;

	c.arg[2] = len ? t->req->maxnode : 0;
	/* a page taken away by the target (EFAULT, in our write or in its
	 * call) is made again once */
	for (int tries = 0;; tries++) {
		if (len && mask_in_page(t, len, tries > 0, &c.arg[1]) < 0) {
			if (tries == 0 && t->res->failure == FAIL_INJECTION && t->res->err == EFAULT)
				continue;
			return -1;
		}
		if (make_call(t, &c, &rv) < 0)
			return -1;
		if (!len || rv != -EFAULT || tries > 0)
			break;
	}
	if (rv < -4095 || rv > 0)
		return tracee_verdict(t, FAIL_INJECTION, EPROTO, "set_mempolicy returned nonsense");
	if (t->in_call)
		snprintf(path, sizeof(path), "in syscall %lu", arch_entry_nr_shown(&t->entry));
	else
		snprintf(path, sizeof(path), "in user code");
	(void)tracee_verdict(t, FAIL_NONE, (int)-rv, path);
	return 0;
}

/* If the thread was stopped inside an rseq critical section, it must go on
 * at the section's abort handler: the kernel would have sent it there on
 * this preemption, and it forgets the section once the thread runs
 * elsewhere (our syscall instruction). */
static void rseq_fixup(const struct tracee *t, regs_t *r)
{
	uint64_t abort_ip;

	if (tracee_rseq_abort_ip(t->tid, arch_pc(r), &abort_ip))
		arch_set_pc(r, abort_ip);
}

/* ---- one thread ------------------------------------------------------------ */

/* Get the thread to where it can make calls: path A, the entry of the
 * interrupted call it restarts (or, on arm64, the call its pc is on);
 * path B, user code, with a system call instruction to aim at. */
static int ready_for_calls(struct tracee *t)
{
	if (arch_at_syscall_boundary(t, &t->in_call) < 0)
		return -1;
	if (t->in_call)
		return at_own_entry(t);
	if (arch_check_user_state(t) < 0 || tracee_find_syscall_insn(t, &t->insn) < 0)
		return -1;
	t->restore = t->regs0;
	rseq_fixup(t, &t->restore);
	t->have_restore = true;
	return 0;
}

/* One thread's work, in one call to the session's tracing process:
 * attach, stop, prove (nothing is changed yet), then the work, and the
 * release whatever happened.  The caller's signals are not held: a
 * signal that ends the tool cannot cut the call (ptrace-tracer.h), and
 * the ones it catches end the run after it. */
struct job {
	struct tracee *t;
	int (*work)(struct tracee *t);
	bool ready;		/* stopped, and proven the one the handle names */
};

static void thread_job(void *arg)
{
	struct job *j = arg;

	j->ready = seize(j->t) == 0 && stop_thread(j->t) == 0 && check_identity(j->t) == 0;
	if (j->ready && take_control(j->t) == 0 && ready_for_calls(j->t) == 0)
		(void)j->work(j->t);
	release(j->t);
}

/* A thread held ahead that the checks before attaching refused: let go. */
static void unhold_job(void *arg)
{
	struct tracee *t = arg;
	struct timespec since;

	if (ahead_take(&t->s->ahead, t->tid, &since)) {
		ahead_park(&t->s->ahead, t->tid);
		ahead_reap(&t->s->ahead);
	}
}

/* The tracing task ended in the middle of a call (it crashed, or was
 * killed by itself): the kernel let go of the thread, which may have
 * been changed or not. */
static int tracer_gone(struct tracee *t, bool held)
{
	return tracee_verdict(t, FAIL_INJECTION, 0, held ?
			      "the tracing process ended while it held the thread, which may be half-changed" :
			      "the tracing process ended before the thread was changed");
}

/* From attach to detach: the thread is released whatever happened. */
static void seize_work_release(struct tracee *t, int (*work)(struct tracee *t))
{
	struct job j = { .t = t, .work = work };

	if (tracer_call(&t->s->tracer, thread_job, &j) < 0)
		(void)tracer_gone(t, j.ready);
}

/* The tracee for h, with the checks made before attaching passed; NULL
 * (*res saying why) when one refuses.  s is NULL for a dry run. */
static struct tracee *tracee_checked(struct ptrace_session *s, const struct task_handle *h,
				     const struct ptrace_request *req, struct ptrace_result *res)
{
	struct tracee *t;

	memset(res, 0, sizeof(*res));
	res->yama_scope = -1;
	res->held_us = -1;
	t = calloc(1, sizeof(*t));
	if (!t) {
		res->failure = FAIL_INJECTION;
		res->err = ENOMEM;
		snprintf(res->detail, sizeof(res->detail), "out of memory");
		return NULL;
	}
	t->s = s;
	t->h = h;
	t->pid = h->pid;
	t->tid = h->tid;
	t->req = req;
	t->res = res;
	if (mask_bytes(req) > SCRATCH_MAX || (req->maxnode > 1 && !req->mask))
		tracee_verdict(t, FAIL_INJECTION, EINVAL, "node mask too large");
	else if (preflight(t) == 0)
		return t;
	free(t);
	return NULL;
}

/* One thread, checked, then given work: set_policy or unmap_page. */
static void on_thread(struct ptrace_session *s, const struct task_handle *h,
		      const struct ptrace_request *req, struct ptrace_result *res,
		      int (*work)(struct tracee *t))
{
	struct tracee *t;

	if (!s) {	/* its session could not be made */
		memset(res, 0, sizeof(*res));
		res->yama_scope = -1;
		res->held_us = -1;
		res->failure = FAIL_INJECTION;
		res->err = ENOMEM;
		snprintf(res->detail, sizeof(res->detail), "out of memory");
		return;
	}
	t = tracee_checked(s, h, req, res);
	if (!t) {
		if (work == set_policy && h->per_thread) {
			struct tracee held = { .s = s, .tid = h->tid };

			(void)tracer_call(&s->tracer, unhold_job, &held);
		}
		return;
	}
	t->look_ahead = work == set_policy && h->per_thread;
	seize_work_release(t, work);
	free(t);
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
	struct tracee *t = tracee_checked(NULL, h, req, res);
	struct proc_status st;
	int scope, cap;

	if (!t)
		return;
	scope = read_yama_scope();
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
	free(t);
}

/* ---- the session ------------------------------------------------------------- */

struct ptrace_session *ptrace_session_begin(pid_t pid)
{
	struct ptrace_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pid = pid;
	if (getrandom(&s->cookie, sizeof(s->cookie), 0) != (ssize_t)sizeof(s->cookie)) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		s->cookie = ((uint64_t)now.tv_nsec << 32) ^ (uint64_t)now.tv_sec ^ (uint64_t)getpid();
	}
	ahead_init(&s->ahead, pid);
	tracer_start(&s->tracer);
	return s;
}

pid_t ptrace_session_pid(const struct ptrace_session *s)
{
	return s->pid;
}

void ptrace_set_thread_policy(struct ptrace_session *s, const struct task_handle *h,
			      const struct ptrace_request *req, struct ptrace_result *res)
{
	on_thread(s, h, req, res, set_policy);
	if (s && res->failure == FAIL_NONE) {
		s->via = h->tid;
		s->allow_seccomp = req->allow_seccomp;
	}
}

/* Ask thread tid to unmap the page; whether it is let go of (unmapped, or
 * no longer provably ours, or the thread's process gone). */
static bool unmap_through(struct ptrace_session *s, pid_t tid)
{
	const struct task_handle h = { .pid = s->pid, .tid = tid, .per_thread = true, .pidfd = -1 };
	const struct ptrace_request req = { .allow_seccomp = s->allow_seccomp };
	struct ptrace_result res;

	on_thread(s, &h, &req, &res, unmap_page);
	return !s->page;
}

static void end_job(void *arg)
{
	ahead_end(arg);
}

#define UNMAP_TRIES 8	/* threads asked before the page is left behind */

void ptrace_session_end(struct ptrace_session *s)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int tries = 0;

	if (!s)
		return;
	if (s->page && s->via && unmap_through(s, s->via))
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)s->pid);
	d = s->page ? opendir(path) : NULL;
	while (d && (de = readdir(d)) && tries < UNMAP_TRIES) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (end == de->d_name || *end || tid <= 0 || tid == s->via)
			continue;
		tries++;
		if (unmap_through(s, (pid_t)tid))
			break;
	}
	if (d)
		closedir(d);
out:
	(void)tracer_call(&s->tracer, end_job, &s->ahead);
	tracer_stop(&s->tracer);
	free(s);
}

#endif /* PMP_PTRACE_SUPPORTED */
