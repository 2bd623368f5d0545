/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace.h - the ptrace backend: make one thread of a running process call
 * set_mempolicy(2) itself, on any Linux, with nothing but ptrace.  One call
 * handles one thread from attach to detach, inside a session that spans
 * the threads of one process and holds what they share (the scratch page
 * below); it prints nothing.  x86_64 and aarch64: elsewhere every call
 * answers FAIL_ARCH_UNSUPPORTED without touching the target.
 *
 * How: PTRACE_SEIZE + PTRACE_INTERRUPT (no SIGSTOP, no EXITKILL), then,
 * with all the thread's signals blocked by PTRACE_SETSIGMASK:
 *  - a thread stopped inside an interrupted system call ("path A"; on
 *    aarch64, whose kernel rewinds such a call before the stop, a thread
 *    whose pc is on an `svc') is let run into the entry of that call
 *    again, whose number is swapped for the injected call; at its exit the
 *    registers are rewound so the original call is entered once more (and
 *    swapped again if there is another call to make), and the thread is
 *    released at that entry with its own signal mask.  The
 *    call keeps its semantics: restartable calls go on (relative sleeps
 *    with their remaining time, through restart_syscall), and a signal
 *    that came meanwhile meets the call exactly as it would have without
 *    us.
 *  - a thread stopped in user code ("path B") has its instruction pointer
 *    moved to a system call instruction (`syscall' on x86_64, `svc #0' on
 *    aarch64) in its [vdso] (or a mapping of its program or a library),
 *    runs to the exit of the injected call (and again for another), and
 *    gets all its registers back exactly (the instruction pointer moved to
 *    the abort handler if it was inside an rseq critical section, as the
 *    kernel would have done).
 * The node mask is written into a scratch page that belongs to no one
 * else: the first thread of the process that needs it maps it with an
 * injected mmap(2) (PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|
 * MAP_NORESERVE|MAP_POPULATE, sized for the largest mask), a random cookie
 * and the mask are written into it at once, and every later thread of the
 * session passes the same address to set_mempolicy without writing
 * again, once pagemap shows the mask still in memory (the kernel reads it
 * inside the thread's call, which must fault in nothing).  If it is not,
 * or the target has unmapped the page (EFAULT), the page is proven still
 * the same mapping (same start and end, private, anonymous, read-write,
 * no name) holding the cookie, or else what is at the address is the
 * target's, left alone, and a new page is mapped, once per thread.  The
 * session's end unmaps it with an injected munmap(2) through a live
 * thread of the process, after the same proof.  A policy without nodes
 * needs no page.
 * Nothing is ever written to the target's own memory, stack or code; no
 * breakpoint, no single step, no signal is sent to the target.
 *
 * Identity: the thread is attached by bare TID, so after the seize and the
 * first stop, before anything is changed, the engine proves that the task
 * it holds is the one the handle names: the handle's pidfd, when it has
 * one (h->pidfd >= 0), has not exited, and h->tid is a thread of h->pid
 * (tgkill null-signal probe).  A TID cannot be reused while its task
 * lives, and the seized task is held stopped, so the checks are
 * conclusive; a task that exited after the caller confirmed it, its TID
 * taken by another, is detached untouched and reported as FAIL_EXITED.
 * Without a pidfd (-a on kernels without PIDFD_THREAD, FAIL_NO_THREAD_PIDFD)
 * only the second check is made: a TID taken by a new thread of the same
 * process (or, for a leader, a PID taken by a new process) is not told
 * apart.
 *
 * What holds, and what does not:
 *  - Target or thread dying at any point: reported as FAIL_EXITED, nothing
 *    left behind.
 *  - A group-stopped (SIGSTOP, State T) target stays stopped: the kernel
 *    puts the thread back into the group stop when it is detached.  A stop
 *    signal that arrives during the injection (it cannot be blocked) is
 *    held back and re-sent to the thread once it is released.
 *  - Signals sent to the CALLER cannot cut an injection: the tracing
 *    process blocks them all and finishes the thread in hand whatever
 *    becomes of the caller; the ones the caller catches (SIGINT, SIGTERM,
 *    SIGHUP) end the run after the thread in hand.
 *  - Every read of the target's memory is bounded: only pages present in
 *    memory (/proc/PID/pagemap) are read or written, so a page only the
 *    target's own user space could provide (a userfaultfd region) blocks
 *    nothing; the search for a system call instruction looks at 4 MiB at
 *    most, the [vdso] first, then the mappings of files (the program, its
 *    libraries), then the rest, and refuses the thread beyond that.  A
 *    target that empties and registers a page with userfaultfd between
 *    the check and the read (microseconds) can still make one read wait.
 *  - Every request comes from the session's tracing process
 *    (ptrace-tracer.h), which a SIGKILL of the caller does not end: it
 *    finishes the thread in hand (registers and signal mask put back,
 *    released), then exits, and the kernel lets go of the threads held
 *    ahead, which nothing was done to.  Only a kill that reaches the
 *    tracing process too (the caller's process group or cgroup, the OOM
 *    killer) can cut an injection; the kernel then detaches the thread
 *    wherever it is, and it may be left with:
 *      * every signal blocked (its mask is only put back at release): it
 *        keeps running, but handles no signal until it sets its mask again
 *        (process-directed signals go to other threads; SIGKILL works);
 *      * path A, killed while set_mempolicy is being made: the interrupted
 *        call returns set_mempolicy's result (0 or -errno) instead of
 *        restarting: a sleep ends early, a read() returns 0;
 *      * path B, killed while the registers are redirected: the thread
 *        runs on in vDSO code with wrong registers and most likely crashes;
 *      * a thread stopped while mmap or munmap is being made in place of
 *        its own call: that call returns their result, as above.
 *    Only one thread of a process is ever inside such a window; killing
 *    the tool's whole process group at random moments of a run over a
 *    busy 400-thread target crashed it about once in ten kills (x86_64
 *    host).  This is the residual risk of gdb's "call" and CRIU's
 *    parasite.  Killed between the session's first mmap and its munmap,
 *    the caller leaves the scratch page mapped in the process: one private
 *    anonymous mapping, not in the target's way.
 *  - A target that changes the mask in the scratch page, or maps its own
 *    data at its address, has its later threads read that instead: as if
 *    it had set their policies itself, which it may do at any time.  A
 *    target that unmaps the page and maps its own data at the same
 *    address, with the same extent and the cookie copied, between the
 *    proof and the write (microseconds, while one of its threads is held)
 *    has the mask written there: only a program racing its own memory can.
 *  - Some system calls return EINTR to the target merely because it was
 *    stopped by ptrace (epoll_wait, epoll_pwait, semop/semtimedop,
 *    sigtimedwait, socket calls with SO_RCVTIMEO/SO_SNDTIMEO; signal(7)).
 *    No ptrace tool can avoid that; programs must retry them anyway.
 *  - The injected call passes the target's own seccomp filters, which may
 *    deny it or kill the thread: threads with a filter are refused unless
 *    allow_seccomp is set.
 *  - A thread that does not reach a stop within PMP_PTRACE_TIMEOUT_MS of
 *    its interrupt (uninterruptible sleep, vfork parent) is reported as
 *    FAIL_NOT_STOPPED, unchanged.  With -a the wait runs alongside the
 *    others' (ptrace-ahead.h): a process whose threads never stop costs
 *    two timeouts, not one per thread.  It stays seized, never stopped,
 *    until it stops (then it is let go at once) or the session ends (the
 *    tracing process exits and the kernel drops the request).
 */
#ifndef PMP_PTRACE_H
#define PMP_PTRACE_H

#include <stdbool.h>
#include <sys/types.h>

#include "failure.h"
#include "targets.h"

#define PMP_PTRACE_TIMEOUT_MS 2000

/* Whether the backend exists for the architecture being built. */
#if defined(__x86_64__) || defined(__aarch64__)
# define PMP_PTRACE_SUPPORTED 1
#else
# define PMP_PTRACE_SUPPORTED 0
#endif

struct ptrace_result {
	enum failure failure;	/* FAIL_NONE: set_mempolicy(2) ran in the thread */
	int err;		/* with FAIL_NONE, the call's own errno (0: set);
				 * otherwise the errno behind the failure */
	pid_t tracer;		/* FAIL_ALREADY_TRACED: the tracer's pid */
	int yama_scope;		/* /proc/sys/kernel/yama/ptrace_scope, -1 if absent */
	long held_us;		/* from its interrupt to its release, -1 if not
				 * held: how long it was kept from running, at most */
	char detail[96];	/* FAIL_INJECTION: where it failed; FAIL_EXITED:
				 * set when the identity check refused */
};

struct ptrace_request {
	int mode;			/* MPOL_* | MPOL_F_* flags */
	const unsigned long *mask;	/* node mask words, NULL for none */
	unsigned long maxnode;		/* mask bits + 1, as set_mempolicy(2) takes it; 0 for none */
	bool allow_seccomp;		/* inject even into threads under a seccomp filter */
};

struct ptrace_session;

/* A session for the threads of process pid, or NULL if memory ran out
 * (ptrace_set_thread_policy then answers FAIL_INJECTION/ENOMEM).  Touches
 * nothing in the target. */
struct ptrace_session *ptrace_session_begin(pid_t pid);

/* The process a session is for. */
pid_t ptrace_session_pid(const struct ptrace_session *s);

/* Make the thread h names (a thread of the session's process) call
 * set_mempolicy(mode, mask, maxnode) itself, and say how it went in *res.
 * Never leaves the thread traced or modified when it returns (see above
 * for a caller killed meanwhile); the scratch page stays, for the next. */
void ptrace_set_thread_policy(struct ptrace_session *s, const struct task_handle *h,
			      const struct ptrace_request *req, struct ptrace_result *res);

/* Unmap the session's scratch page, if it has one and it is still the
 * one it mapped, through a live thread of the process (the last one set
 * first, then up to 8 others), and free the session.  A process that has
 * exited needs nothing. */
void ptrace_session_end(struct ptrace_session *s);

/* ---- work in a held thread, for the signal engine (sigengine.h) --------- */

/* Work done in a thread the session holds stopped, proven and ready for
 * calls (ptrace-tracee.h says what it may do); 0 when it did what it was
 * for. */
struct tracee;
typedef int (*ptrace_work_fn)(struct tracee *t, void *arg);

/* As ptrace_set_thread_policy, then fn(t, arg) in the same stop; *res is
 * the thread's own result whatever fn does. */
void ptrace_set_thread_policy_and(struct ptrace_session *s, const struct task_handle *h,
				  const struct ptrace_request *req, struct ptrace_result *res,
				  ptrace_work_fn fn, void *arg);

/* work(t, arg) in thread tid of the session's process, held for it alone;
 * its result, or -1 if it could not run (*res says why). */
int ptrace_work(struct ptrace_session *s, pid_t tid, ptrace_work_fn work, void *arg,
		struct ptrace_result *res);

/* work through a live thread of the process: the last one set first, then
 * up to 8 others, until one's work returns 0: 0, or -1 if none did. */
int ptrace_work_any(struct ptrace_session *s, ptrace_work_fn work, void *arg);

/* The session's threads take a signal engine's signal: hold none ahead
 * unless told which (ptrace_session_walk); and if the tool dies, its tracing process calls orphan(arg) before it
 * unmaps the scratch page and exits. */
void ptrace_session_signalled(struct ptrace_session *s, void (*orphan)(void *arg), void *arg);

/* The -a threads the session will be asked to set next, in order, are
 * tids[0..n): hold them ahead as the walk comes (ptrace-ahead.h), so that
 * the ones that do not stop time out together.  A session that takes a
 * signal engine's signal holds nothing ahead until told this. */
void ptrace_session_walk(struct ptrace_session *s, const pid_t *tids, size_t n);

/* What ptrace_set_thread_policy would say of the thread h names, without
 * touching it, for a dry run: the same checks it makes before attaching
 * (one place for each), then what only PTRACE_SEIZE would tell a real run,
 * foreseen from /proc: Yama's ptrace_scope, the kernel's ptrace access
 * check (the caller's real uid and gid against the target's, the target
 * dumpable, or CAP_SYS_PTRACE), and a 32-bit executable.  res->failure is
 * FAIL_NONE when nothing foreseen stands in the way. */
void ptrace_foresee(const struct task_handle *h, const struct ptrace_request *req,
		    struct ptrace_result *res);

#endif
