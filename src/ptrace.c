/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace.c - the ptrace backend's engine: one thread made to call
 * set_mempolicy(2) itself, or to do other work for the signal engine.
 * Owns attaching (seize, interrupt, waits with a deadline), the
 * classification of ptrace stops, the two ways of making a call in the
 * thread, and the release of the thread, and says how it went.  The
 * checks before attaching are ptrace-check.c's, the scratch page
 * ptrace-scratch.c's, the session ptrace-session.c's, the thread's memory
 * ptrace-mem.c's, the architecture's registers and instructions
 * ptrace-<arch>.c's (ptrace-arch.h).  See ptrace.h for the method and for
 * what is and is not guaranteed.
 */
#include "config.h"

#include "ptrace.h"

#if PMP_PTRACE_SUPPORTED

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
			return tracee_explain_seize_refusal(t, err);
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
int tracee_make_call(struct tracee *t, const struct tracee_call *c, long *rv)
{
	return t->in_call ? call_in_place(t, c, rv) : call_at_insn(t, c, rv);
}

/* ---- set_mempolicy and the rseq section ------------------------------------ */

/* set_mempolicy(mode, mask, maxnode), the mask in the scratch page (none
 * for a policy without nodes: no page either). */
static int set_policy(struct tracee *t)
{
	size_t len = scratch_mask_bytes(t->req);
	struct tracee_call c = { .nr = __NR_set_mempolicy, .arg = { (unsigned int)t->req->mode } };
	char path[48];
	long rv;

	c.arg[2] = len ? t->req->maxnode : 0;
	/* a page taken away by the target (EFAULT, in our write or in its
	 * call) is made again once; so is one whose address holds something
	 * else now (EINVAL: an empty mask), such as a mapping made since in
	 * the hole it left: the signal engine's, mapped after it */
	for (int tries = 0;; tries++) {
		if (len && scratch_mask(t, len, tries > 0, &c.arg[1]) < 0) {
			if (tries == 0 && t->res->failure == FAIL_INJECTION && t->res->err == EFAULT)
				continue;
			return -1;
		}
		if (tracee_make_call(t, &c, &rv) < 0)
			return -1;
		if (!len || (rv != -EFAULT && rv != -EINVAL) || tries > 0)
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
	ptrace_work_fn work;
	void *arg;
	bool ready;		/* stopped, and proven the one the handle names */
	int result;		/* the work's, -1 if it did not run */
};

static void thread_job(void *arg)
{
	struct job *j = arg;

	j->ready = seize(j->t) == 0 && stop_thread(j->t) == 0 && check_identity(j->t) == 0;
	if (j->ready && take_control(j->t) == 0 && ready_for_calls(j->t) == 0)
		j->result = j->work(j->t, j->arg);
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

/* From attach to detach: the thread is released whatever happened.
 * The work's result, or -1 if it did not run. */
static int seize_work_release(struct tracee *t, ptrace_work_fn work, void *arg)
{
	struct job j = { .t = t, .work = work, .arg = arg, .result = -1 };

	if (tracer_call(&t->s->tracer, thread_job, &j) < 0) {
		(void)tracer_gone(t, j.ready);
		return -1;
	}
	return j.result;
}

static void no_session(struct ptrace_result *res)
{
	memset(res, 0, sizeof(*res));
	res->yama_scope = -1;
	res->held_us = -1;
	res->failure = FAIL_INJECTION;
	res->err = ENOMEM;
	snprintf(res->detail, sizeof(res->detail), "out of memory");
}

int tracee_check(struct tracee *t, struct ptrace_session *s, const struct task_handle *h,
		 const struct ptrace_request *req, struct ptrace_result *res)
{
	memset(res, 0, sizeof(*res));
	res->yama_scope = -1;
	res->held_us = -1;
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->h = h;
	t->pid = h->pid;
	t->tid = h->tid;
	t->req = req;
	t->res = res;
	if (scratch_mask_bytes(req) > SCRATCH_MAX || (req->maxnode > 1 && !req->mask))
		return tracee_verdict(t, FAIL_INJECTION, EINVAL, "node mask too large");
	return tracee_preflight(t);
}

int tracee_run(struct ptrace_session *s, const struct task_handle *h, const struct ptrace_request *req,
	       struct ptrace_result *res, ptrace_work_fn work, void *arg, bool look_ahead)
{
	struct tracee t;

	if (!s) {	/* its session could not be made */
		no_session(res);
		return -1;
	}
	if (tracee_check(&t, s, h, req, res) < 0) {
		if (look_ahead) {
			struct tracee held = { .s = s, .tid = h->tid };

			(void)tracer_call(&s->tracer, unhold_job, &held);
		}
		return -1;
	}
	t.look_ahead = look_ahead;
	return seize_work_release(&t, work, arg);
}

static int set_policy_work(struct tracee *t, void *arg)
{
	(void)arg;
	return set_policy(t);
}

/* ---- the threads of a session ------------------------------------------------ */

void ptrace_set_thread_policy(struct ptrace_session *s, const struct task_handle *h,
			      const struct ptrace_request *req, struct ptrace_result *res)
{
	/* a signal engine's session holds nothing ahead: the threads after
	 * this one take its signal, not a stop */
	(void)tracee_run(s, h, req, res, set_policy_work, NULL, h->per_thread && !(s && s->signalled && !s->walked));
	if (s && res->failure == FAIL_NONE) {
		s->via = h->tid;
		s->allow_seccomp = req->allow_seccomp;
	}
}

/* set_policy, then the caller's work while the thread is still held; what
 * becomes of that work is the work's to say (arg), the thread's result
 * stays its policy's. */
struct also {
	ptrace_work_fn fn;
	void *arg;
};

static int set_policy_also(struct tracee *t, void *arg)
{
	const struct also *also = arg;
	struct ptrace_result own;

	if (set_policy(t) < 0)
		return -1;
	own = *t->res;
	(void)also->fn(t, also->arg);
	*t->res = own;
	return 0;
}

void ptrace_set_thread_policy_and(struct ptrace_session *s, const struct task_handle *h,
				  const struct ptrace_request *req, struct ptrace_result *res,
				  ptrace_work_fn fn, void *arg)
{
	struct also also = { fn, arg };

	(void)tracee_run(s, h, req, res, set_policy_also, &also, false);
	if (s && res->failure == FAIL_NONE) {
		s->via = h->tid;
		s->allow_seccomp = req->allow_seccomp;
	}
}

int ptrace_work(struct ptrace_session *s, pid_t tid, ptrace_work_fn work, void *arg,
		struct ptrace_result *res)
{
	const struct task_handle h = { .pid = s->pid, .tid = tid, .per_thread = true, .pidfd = -1 };
	const struct ptrace_request req = { .allow_seccomp = s->allow_seccomp };

	return tracee_run(s, &h, &req, res, work, arg, false);
}

#endif /* PMP_PTRACE_SUPPORTED */
