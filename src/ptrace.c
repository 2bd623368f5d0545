/*
 * ptrace.c - the ptrace backend: one thread made to call set_mempolicy(2)
 * itself.  Owns attaching (seize, interrupt, waits with a deadline), the
 * classification of ptrace stops, the two injection paths, the scratch
 * memory on the thread's stack and the release of the thread.  See
 * ptrace.h for the method and for what is and is not guaranteed.
 *
 * x86_64 and aarch64 are implemented (what differs between them is in the
 * two "architecture" sections); on any other architecture the entry point
 * answers FAIL_ARCH_UNSUPPORTED and nothing else is compiled.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptrace.h"

#if !defined(__x86_64__) && !defined(__aarch64__)

void ptrace_set_thread_policy(const struct task_handle *h, const struct ptrace_request *req,
			      struct ptrace_result *res)
{
	(void)h;
	(void)req;
	memset(res, 0, sizeof(*res));
	res->failure = FAIL_ARCH_UNSUPPORTED;
	res->yama_scope = -1;
	snprintf(res->detail, sizeof(res->detail), "the ptrace backend supports x86_64 and aarch64 only");
}

#else /* __x86_64__ || __aarch64__ */

#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "procfs.h"
#include "sys.h"

#define SCRATCH_GAP		64		/* extra margin below the red zone */
#define SCRATCH_MAX		8192		/* largest node mask accepted (65536 nodes) */
#define MAX_STOPS		64		/* reports passed over while waiting for one */
#define SCAN_CHUNK		65536

/* ---- the architecture: registers and constants ------------------------- */

#if defined(__x86_64__)
/* The x86_64 ABI's red zone: leaf code may use 128 bytes below sp. */
# define RED_ZONE		128
# define SYSCALL_INSN_LEN	2		/* 0f 05, and cd 80 for int $0x80 */
# define SYSCALL_INSN_ALIGN	1
static const unsigned char syscall_insn[SYSCALL_INSN_LEN] = { 0x0f, 0x05 };
# define USER32_CS		0x23
# define AUDIT_ARCH_NATIVE	0xc000003eU	/* AUDIT_ARCH_X86_64 */
# define REG_PC(r)		((r)->rip)
# define REG_SP(r)		((r)->rsp)
# define REG_RESULT(r)		((r)->rax)
#else /* __aarch64__ */
/* No red zone in the AArch64 ABI; the same margin is kept anyway. */
# define RED_ZONE		128
# define SYSCALL_INSN_LEN	4		/* svc #0 = 0xd4000001 */
# define SYSCALL_INSN_ALIGN	4
static const unsigned char syscall_insn[SYSCALL_INSN_LEN] = { 0x01, 0x00, 0x00, 0xd4 };
# define AUDIT_ARCH_NATIVE	0xc00000b7U	/* AUDIT_ARCH_AARCH64 */
# define PSR_BTYPE_BITS		0x00000c00ULL	/* PSTATE.BTYPE: cleared when pc is moved */
# ifndef NT_ARM_SYSTEM_CALL
#  define NT_ARM_SYSTEM_CALL	0x404
# endif
# ifndef NT_ARM_SVE
#  define NT_ARM_SVE		0x405
# endif
# ifndef NT_ARM_SSVE
#  define NT_ARM_SSVE		0x40b
# endif
# define SVE_PT_REGS_SVE	1		/* user_sve_header.flags: live SVE state */
# define REG_PC(r)		((r)->pc)
# define REG_SP(r)		((r)->sp)
# define REG_RESULT(r)		((r)->regs[0])
#endif

/* The kernel's restart codes, as a stopped thread shows them in rax. */
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

#ifndef __X32_SYSCALL_BIT
# define __X32_SYSCALL_BIT	0x40000000UL
#endif
#ifndef PTRACE_GET_SYSCALL_INFO
# define PTRACE_GET_SYSCALL_INFO	0x420e
#endif
#ifndef PTRACE_GET_RSEQ_CONFIGURATION
# define PTRACE_GET_RSEQ_CONFIGURATION	0x420f
#endif

/* Kernel ABI layouts, spelled out so that older C libraries do. */
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

struct pmp_rseq_config {
	uint64_t rseq_abi_pointer;
	uint32_t rseq_abi_size;
	uint32_t signature;
	uint32_t flags;
	uint32_t pad;
};

struct pmp_rseq_cs {
	uint32_t version;
	uint32_t flags;
	uint64_t start_ip;
	uint64_t post_commit_offset;
	uint64_t abort_ip;
};
#define RSEQ_CS_FIELD_OFFSET 8	/* struct rseq: cpu_id_start, cpu_id, rseq_cs */

typedef struct user_regs_struct regs_t;

/* One injection: everything known about the thread and what must be put
 * back when it is released. */
struct inj {
	const struct task_handle *h;
	pid_t pid, tid;
	const struct ptrace_request *req;
	struct ptrace_result *res;

	bool seized;		/* we are its tracer */
	bool stopped;		/* it sits in a ptrace stop we have waited for */
	bool timed_out;

	regs_t regs0;		/* at the first stop */
	uint64_t mask0;		/* its signal mask at the first stop */
	bool mask_blocked;	/* its mask is currently "everything blocked" */
	bool have_restore;	/* write restore back before releasing */
	regs_t restore;
	int held_stop;		/* a stop signal held back, re-sent at release */

	unsigned long scratch;	/* where the node mask is, 0 if nowhere */
	size_t scratch_len;
	bool scratch_dirty;	/* the old bytes must be written back */
	unsigned char saved[SCRATCH_MAX];
};

/* ---- results ------------------------------------------------------------ */

static int verdict(struct inj *c, enum failure f, int err, const char *detail)
{
	c->res->failure = f;
	c->res->err = err;
	snprintf(c->res->detail, sizeof(c->res->detail), "%s", detail ? detail : "");
	return -1;
}

static int failed(struct inj *c, int err, const char *what)
{
	if (err == ESRCH)
		return verdict(c, FAIL_EXITED, ESRCH, NULL);
	return verdict(c, FAIL_INJECTION, err, what);
}

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

static int read_thread_info(const struct inj *c, struct thread_info *ti)
{
	if (procfs_task_stat(c->pid, c->tid, &ti->stat) < 0)
		return -1;
	return procfs_task_status(c->pid, c->tid, &ti->status);
}

static bool is_exiting(const struct thread_info *ti)
{
	return ti->stat.state == 'Z' || ti->stat.state == 'X' || ti->stat.state == 'x';
}

/* Refuse what can be known to fail, or to be unsafe, before touching it. */
static int preflight(struct inj *c)
{
	struct thread_info ti;

	if (read_thread_info(c, &ti) < 0) {
		int err = errno;
		enum failure f = targets_proc_failure(c->h, err);

		if (f == FAIL_ERRNO)
			return verdict(c, FAIL_INJECTION, err, "cannot read /proc of the thread");
		return verdict(c, f, f == FAIL_EXITED ? ESRCH : err, NULL);
	}
	if (ti.stat.flags & PMP_PF_KTHREAD)
		return verdict(c, FAIL_KERNEL_THREAD, EPERM, NULL);
	if (is_exiting(&ti))
		return verdict(c, FAIL_EXITED, ESRCH, NULL);
	if (ti.status.tracer > 0) {
		c->res->tracer = ti.status.tracer;
		return verdict(c, FAIL_ALREADY_TRACED, EPERM, NULL);
	}
	if (ti.status.seccomp == 2 && !c->req->allow_seccomp)
		return verdict(c, FAIL_SECCOMP, 0, NULL);
	if (ti.status.seccomp == 1)	/* strict mode: set_mempolicy would kill it */
		return verdict(c, FAIL_SECCOMP, 0, "strict seccomp mode");
	return 0;
}

/* PTRACE_SEIZE said EPERM or EACCES: say why as well as /proc can tell. */
static int explain_seize_refusal(struct inj *c, int err)
{
	struct thread_info ti;

	if (read_thread_info(c, &ti) < 0 || is_exiting(&ti))
		return verdict(c, FAIL_EXITED, ESRCH, NULL);
	if (ti.status.tracer > 0) {
		c->res->tracer = ti.status.tracer;
		return verdict(c, FAIL_ALREADY_TRACED, err, NULL);
	}
	c->res->yama_scope = read_yama_scope();
	return verdict(c, FAIL_TRACE_DENIED, err, NULL);
}

/* ---- ptrace primitives ------------------------------------------------- */

static long pt(int r, const struct inj *c, unsigned long addr, void *data)
{
	return ptrace(r, c->tid, (void *)addr, data);
}

static int get_regs(struct inj *c, regs_t *r)
{
	struct iovec iov = { .iov_base = r, .iov_len = sizeof(*r) };

	if (pt(PTRACE_GETREGSET, c, NT_PRSTATUS, &iov) < 0)
		return failed(c, errno, "PTRACE_GETREGSET");
	if (iov.iov_len != sizeof(*r))
		return verdict(c, FAIL_COMPAT_TASK, 0, "32-bit register set");
	return 0;
}

static int set_regs(struct inj *c, const regs_t *r)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)r, .iov_len = sizeof(*r) };

	if (pt(PTRACE_SETREGSET, c, NT_PRSTATUS, &iov) < 0)
		return failed(c, errno, "PTRACE_SETREGSET");
	return 0;
}

static int set_sigmask(struct inj *c, uint64_t mask)
{
	if (pt(PTRACE_SETSIGMASK, c, sizeof(mask), &mask) < 0)
		return failed(c, errno, "PTRACE_SETSIGMASK");
	return 0;
}

static int syscall_info(struct inj *c, struct pmp_syscall_info *si)
{
	memset(si, 0, sizeof(*si));
	if (pt(PTRACE_GET_SYSCALL_INFO, c, sizeof(*si), si) < 0)
		return failed(c, errno, "PTRACE_GET_SYSCALL_INFO");
	return 0;
}

/* /proc/TID/mem, for kernels built without process_vm_readv/writev
 * (CONFIG_CROSS_MEMORY_ATTACH=n); a tracer may read and write it. */
static int proc_mem(const struct inj *c, unsigned long addr, void *buf, size_t len, bool write)
{
	char path[64];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)c->tid);
	fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	err = errno;
	close(fd);
	if (n < 0) {
		errno = err;
		return -1;
	}
	if ((size_t)n != len) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

/* Read or write the thread's memory: process_vm_readv/writev, or
 * /proc/TID/mem where the kernel lacks them. */
static int mem_xfer(const struct inj *c, unsigned long addr, void *buf, size_t len, bool write)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)addr, .iov_len = len };
	ssize_t n = write ? process_vm_writev(c->tid, &local, 1, &remote, 1, 0)
			  : process_vm_readv(c->tid, &local, 1, &remote, 1, 0);

	if (n < 0 && errno == ENOSYS)
		return proc_mem(c, addr, buf, len, write);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

static int mem_read(const struct inj *c, unsigned long addr, void *buf, size_t len)
{
	return mem_xfer(c, addr, buf, len, false);
}

static int mem_write(const struct inj *c, unsigned long addr, const void *buf, size_t len)
{
	return mem_xfer(c, addr, (void *)(uintptr_t)buf, len, true);
}

static long elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* The tracee exited (or was reaped by the kernel): nothing more to do. */
static int gone(struct inj *c)
{
	c->seized = false;
	c->stopped = false;
	return verdict(c, FAIL_EXITED, ESRCH, NULL);
}

/* Wait for the thread's next report, for at most the timeout.  Returns 0
 * with a stop in *status; -1 when it exited, on a timeout or an error. */
static int wait_report(struct inj *c, int *status)
{
	struct timespec start, nap = { 0, 10000 };
	int spins = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t r = waitpid(c->tid, status, __WALL | WNOHANG);

		if (r == c->tid) {
			if (WIFEXITED(*status) || WIFSIGNALED(*status))
				return gone(c);
			c->stopped = true;
			return 0;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == ECHILD)
			return gone(c);
		if (r < 0)
			return verdict(c, FAIL_INJECTION, errno, "waitpid");
		if (elapsed_ms(&start) >= PMP_PTRACE_TIMEOUT_MS) {
			c->timed_out = true;
			return verdict(c, FAIL_INJECTION, ETIMEDOUT, "the thread did not stop in time");
		}
		/* Most stops take microseconds: yield first, then nap, backing
		 * off to a millisecond. */
		if (spins++ < 64) {
			sched_yield();
			continue;
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 1000000)
			nap.tv_nsec *= 2;
	}
}

/* After ESRCH from a request on a thread we hold: it was killed.  Collect
 * its exit so that it does not linger as our zombie. */
static int lost(struct inj *c, int err, const char *what)
{
	int status;

	if (err != ESRCH)
		return failed(c, err, what);
	c->stopped = false;
	if (wait_report(c, &status) == 0)	/* not dead after all: it stopped */
		return verdict(c, FAIL_INJECTION, ESRCH, what);
	return -1;	/* gone, or a timeout: wait_report said which */
}

static int resume(struct inj *c, int how, int sig)
{
	if (pt(how, c, 0, (void *)(uintptr_t)sig) < 0)
		return lost(c, errno, "resuming the thread");
	c->stopped = false;
	return 0;
}

enum report { REPORT_EVENT_STOP, REPORT_SYSCALL, REPORT_SIGNAL, REPORT_OTHER };

static enum report classify(int status, int *sig)
{
	*sig = WSTOPSIG(status);
	if ((status >> 16) == PTRACE_EVENT_STOP)
		return REPORT_EVENT_STOP;	/* interrupt, or a group stop */
	if ((status >> 16) != 0)
		return REPORT_OTHER;
	if (*sig == (SIGTRAP | 0x80))
		return REPORT_SYSCALL;
	return REPORT_SIGNAL;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Resume with PTRACE_SYSCALL until the next syscall stop.  Group-stop and
 * interrupt reports are passed over; a stop signal (the one kind that the
 * blocked mask lets through) is held back; any other signal reaching a
 * signal-delivery stop is a synchronous one and is delivered. */
static int next_syscall_stop(struct inj *c, int op, const char *where)
{
	struct pmp_syscall_info si;
	int status, sig, pass = 0;

	for (int n = 0; n < MAX_STOPS; n++) {
		if (resume(c, PTRACE_SYSCALL, pass) < 0)
			return -1;
		pass = 0;
		if (wait_report(c, &status) < 0)
			return -1;
		switch (classify(status, &sig)) {
		case REPORT_SYSCALL:
			if (syscall_info(c, &si) < 0)
				return -1;
			if (si.op != op)
				return verdict(c, FAIL_INJECTION, EPROTO, where);
			return 0;
		case REPORT_EVENT_STOP:
			break;
		case REPORT_SIGNAL:
			if (is_stop_signal(sig))
				c->held_stop = sig;
			else
				pass = sig;
			break;
		case REPORT_OTHER:
			return verdict(c, FAIL_INJECTION, EPROTO, "unexpected ptrace event");
		}
	}
	return verdict(c, FAIL_INJECTION, EPROTO, "the thread kept stopping");
}

/* ---- attaching ----------------------------------------------------------- */

static int seize(struct inj *c)
{
	if (ptrace(PTRACE_SEIZE, c->tid, NULL, (void *)(uintptr_t)PTRACE_O_TRACESYSGOOD) < 0) {
		int err = errno;

		if (err == ESRCH)
			return verdict(c, FAIL_EXITED, ESRCH, NULL);
		if (err == EPERM || err == EACCES)
			return explain_seize_refusal(c, err);
		return verdict(c, FAIL_INJECTION, err, "PTRACE_SEIZE");
	}
	c->seized = true;
	return 0;
}

/* Interrupt the thread and wait for it to stop inside get_signal(): a
 * PTRACE_EVENT_STOP (ours, or a group stop if the process is stopped).  A
 * signal that was being delivered first is handed on; our interrupt stays
 * pending and comes next. */
static int stop_thread(struct inj *c)
{
	int status, sig;

	if (pt(PTRACE_INTERRUPT, c, 0, NULL) < 0)
		return lost(c, errno, "PTRACE_INTERRUPT");
	for (int n = 0; n < MAX_STOPS; n++) {
		if (wait_report(c, &status) < 0)
			return -1;
		switch (classify(status, &sig)) {
		case REPORT_EVENT_STOP:
			return 0;
		case REPORT_SIGNAL:
			if (resume(c, PTRACE_CONT, sig) < 0)
				return -1;
			break;
		case REPORT_SYSCALL:
		case REPORT_OTHER:
			return verdict(c, FAIL_INJECTION, EPROTO, "unexpected first stop");
		}
	}
	return verdict(c, FAIL_INJECTION, EPROTO, "the thread kept stopping");
}

/* Save what must be put back, then block all its signals. */
static int take_control(struct inj *c)
{
	uint64_t all = ~(uint64_t)0;

	if (get_regs(c, &c->regs0) < 0)
		return -1;
#if defined(__x86_64__)
	if (c->regs0.cs == USER32_CS)
		return verdict(c, FAIL_COMPAT_TASK, 0, "32-bit code segment");
#endif
	if (pt(PTRACE_GETSIGMASK, c, sizeof(c->mask0), &c->mask0) < 0)
		return lost(c, errno, "PTRACE_GETSIGMASK");
	if (set_sigmask(c, all) < 0)
		return -1;
	c->mask_blocked = true;
	return 0;
}

/* Put back what was changed, in reverse order, and detach.  Called in
 * every case; does what the state calls for. */
static void release(struct inj *c)
{
	int status;

	if (!c->seized)
		return;
	if (!c->stopped && c->timed_out) {
		/* It never stopped, or it ran away: one more chance. */
		c->timed_out = false;
		if (pt(PTRACE_INTERRUPT, c, 0, NULL) < 0 || wait_report(c, &status) < 0)
			return;	/* the kernel detaches it when we exit */
	}
	if (!c->stopped)
		return;
	if (c->scratch_dirty && mem_write(c, c->scratch, c->saved, c->scratch_len) == 0)
		c->scratch_dirty = false;
	if (c->have_restore && set_regs(c, &c->restore) == 0)
		c->have_restore = false;
	if (c->mask_blocked && set_sigmask(c, c->mask0) == 0)
		c->mask_blocked = false;
	if (pt(PTRACE_DETACH, c, 0, NULL) < 0) {
		(void)lost(c, errno, "PTRACE_DETACH");
		return;
	}
	c->seized = false;
	c->stopped = false;
	if (c->held_stop)
		(void)syscall(SYS_tgkill, c->pid, c->tid, c->held_stop);
}

/* ---- the target's memory ------------------------------------------------- */

struct vma {
	unsigned long start, end;
	char perms[8];
	char name[64];
};

/* Call fn for each mapping of the thread's address space until it returns
 * nonzero; returns that value, 0 at the end, -1 if maps cannot be read. */
static int maps_walk(const struct inj *c, int (*fn)(const struct vma *v, void *arg), void *arg)
{
	char path[64], line[512];
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)c->pid, (int)c->tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (r == 0 && fgets(line, sizeof(line), f)) {
		struct vma v;
		int name_at = 0;

		memset(&v, 0, sizeof(v));
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &v.start, &v.end, v.perms, &name_at) < 3)
			continue;
		if (name_at > 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(v.name, sizeof(v.name), "%s", line + name_at);
		}
		r = fn(&v, arg);
	}
	fclose(f);
	return r;
}

struct stack_query {
	unsigned long sp, low;
	bool ok;
};

static int stack_vma_fn(const struct vma *v, void *arg)
{
	struct stack_query *q = arg;

	if (q->sp < v->start || q->sp >= v->end)
		return 0;
	q->ok = v->perms[0] == 'r' && v->perms[1] == 'w' && q->low >= v->start;
	return 1;
}

static size_t mask_bytes(const struct ptrace_request *req)
{
	const size_t bits = 8 * sizeof(unsigned long);

	if (!req->mask || req->maxnode <= 1)
		return 0;
	return (req->maxnode - 1 + bits - 1) / bits * sizeof(unsigned long);
}

/* PROCMAP_QUERY: the kernel looks up the one mapping that holds addr,
 * where the maps file lists every mapping (one per thread stack, so reading
 * it for each thread made -a quadratic).  0 found (pq filled), -1 not
 * (errno: ENOENT no mapping holds addr; ENOTTY before Linux 6.11). */
static int vma_query_kernel(const struct inj *c, unsigned long addr, struct pmp_procmap_query *pq)
{
	char path[64];
	int fd, r, err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)c->pid, (int)c->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	memset(pq, 0, sizeof(*pq));
	pq->size = sizeof(*pq);
	pq->query_addr = addr;
	r = ioctl(fd, PMP_PROCMAP_QUERY, pq);
	err = errno;
	close(fd);
	errno = err;
	if (r == 0 && (addr < pq->vma_start || addr >= pq->vma_end)) {
		errno = EPROTO;
		return -1;
	}
	return r;
}

/* Answer q through PROCMAP_QUERY.  0 answered, -1 not (the caller then
 * reads the maps). */
static int stack_query_kernel(const struct inj *c, struct stack_query *q)
{
	const uint64_t rw = PMP_PROCMAP_VMA_READABLE | PMP_PROCMAP_VMA_WRITABLE;
	struct pmp_procmap_query pq;

	if (vma_query_kernel(c, q->sp, &pq) < 0) {
		if (errno != ENOENT)
			return -1;
		q->ok = false;	/* no mapping holds sp */
		return 0;
	}
	q->ok = (pq.vma_flags & rw) == rw && q->low >= pq.vma_start;
	return 0;
}

/* Copy the node mask below the red zone of the stack whose pointer is sp,
 * inside the same writable mapping, keeping the bytes it covers. */
static int place_mask(struct inj *c, unsigned long sp)
{
	struct stack_query q;
	size_t len = mask_bytes(c->req);

	c->scratch = 0;
	if (len == 0)
		return 0;
	q.sp = sp;
	q.low = (sp - RED_ZONE - SCRATCH_GAP - len) & ~15UL;
	q.ok = false;
	if (stack_query_kernel(c, &q) < 0 && maps_walk(c, stack_vma_fn, &q) < 0)
		return failed(c, errno, "cannot read the thread's maps");
	if (!q.ok || q.low > sp)
		return verdict(c, FAIL_INJECTION, EFAULT, "no writable stack below the thread's sp");
	if (mem_read(c, q.low, c->saved, len) < 0)
		return failed(c, errno, "cannot read the thread's stack");
	c->scratch = q.low;
	c->scratch_len = len;
	c->scratch_dirty = true;
	if (mem_write(c, q.low, c->req->mask, len) < 0)
		return failed(c, errno, "cannot write the thread's stack");
	return 0;
}

static int put_back_scratch(struct inj *c)
{
	if (!c->scratch_dirty)
		return 0;
	if (mem_write(c, c->scratch, c->saved, c->scratch_len) < 0)
		return failed(c, errno, "cannot restore the thread's stack");
	c->scratch_dirty = false;
	return 0;
}

struct insn_query {
	const struct inj *c;
	bool want_vdso;
	unsigned long found;
	unsigned char buf[SCAN_CHUNK];
};

/* A system call instruction (x86_64 `syscall', 0f 05; aarch64 `svc #0',
 * aligned) anywhere in an executable mapping: the thread is pointed
 * straight at it, so any such bytes will do. */
static int insn_fn(const struct vma *v, void *arg)
{
	struct insn_query *q = arg;
	bool is_vdso = strcmp(v->name, "[vdso]") == 0;

	if (v->perms[2] != 'x' || strcmp(v->name, "[vsyscall]") == 0 || q->want_vdso != is_vdso)
		return 0;
	/* chunks overlap by one instruction less a byte, so none is cut */
	for (unsigned long at = v->start; at < v->end; at += SCAN_CHUNK - (SYSCALL_INSN_LEN - 1)) {
		size_t len = v->end - at < SCAN_CHUNK ? v->end - at : SCAN_CHUNK;

		if (mem_read(q->c, at, q->buf, len) < 0)
			return 0;
		for (size_t i = 0; i + SYSCALL_INSN_LEN <= len; i++)
			if ((at + i) % SYSCALL_INSN_ALIGN == 0 &&
			    memcmp(q->buf + i, syscall_insn, SYSCALL_INSN_LEN) == 0) {
				q->found = at + i;
				return 1;
			}
		if (len < SCAN_CHUNK)
			break;
	}
	return 0;
}

/* The vDSO's mapping without reading every mapping: its address from the
 * process's auxiliary vector (AT_SYSINFO_EHDR), its extent and rights from
 * PROCMAP_QUERY.  0 found, -1 not (the caller then reads the maps). */
static int vdso_vma_kernel(const struct inj *c, struct vma *v)
{
	unsigned long auxv[2 * 64], base = 0;
	struct pmp_procmap_query pq;
	char path[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)c->pid);
	len = procfs_read_file(path, (char *)auxv, sizeof(auxv));
	if (len < 0)
		return -1;
	for (size_t i = 0; i + 1 < (size_t)len / sizeof(auxv[0]) && auxv[i] != AT_NULL; i += 2)
		if (auxv[i] == AT_SYSINFO_EHDR)
			base = auxv[i + 1];
	if (!base || vma_query_kernel(c, base, &pq) < 0 || !(pq.vma_flags & PMP_PROCMAP_VMA_EXECUTABLE))
		return -1;
	memset(v, 0, sizeof(*v));
	v->start = pq.vma_start;
	v->end = pq.vma_end;
	snprintf(v->perms, sizeof(v->perms), "r-xp");
	snprintf(v->name, sizeof(v->name), "[vdso]");
	return 0;
}

static int find_syscall_insn(struct inj *c, unsigned long *addr)
{
	struct insn_query *q = calloc(1, sizeof(*q));
	struct vma vdso;
	int r = -1;

	if (!q)
		return verdict(c, FAIL_INJECTION, ENOMEM, "out of memory");
	q->c = c;
	q->want_vdso = true;
	if (vdso_vma_kernel(c, &vdso) == 0)
		insn_fn(&vdso, q);
	if (!q->found && maps_walk(c, insn_fn, q) < 0) {
		failed(c, errno, "cannot read the thread's maps");
		goto out;
	}
	if (!q->found) {
		q->want_vdso = false;
		if (maps_walk(c, insn_fn, q) < 0) {
			failed(c, errno, "cannot read the thread's maps");
			goto out;
		}
	}
	if (!q->found) {
		verdict(c, FAIL_INJECTION, ENOEXEC, "no syscall instruction in the target");
		goto out;
	}
	*addr = q->found;
	r = 0;
out:
	free(q);
	return r;
}

/* If the thread was stopped inside an rseq critical section, it must go on
 * at the section's abort handler: the kernel would have sent it there on
 * this preemption, and it forgets the section once the thread runs
 * elsewhere (our syscall instruction). */
static void rseq_fixup(const struct inj *c, regs_t *r)
{
	struct pmp_rseq_config cfg;
	struct pmp_rseq_cs cs;
	uint64_t cs_ptr;

	memset(&cfg, 0, sizeof(cfg));
	if (pt(PTRACE_GET_RSEQ_CONFIGURATION, c, sizeof(cfg), &cfg) < 0 || !cfg.rseq_abi_pointer)
		return;
	if (mem_read(c, cfg.rseq_abi_pointer + RSEQ_CS_FIELD_OFFSET, &cs_ptr, sizeof(cs_ptr)) < 0 || !cs_ptr)
		return;
	if (mem_read(c, cs_ptr, &cs, sizeof(cs)) < 0)
		return;
	if (REG_PC(r) >= cs.start_ip && REG_PC(r) - cs.start_ip < cs.post_commit_offset &&
	    !c->req->skip_rseq_fixup) {
		REG_PC(r) = cs.abort_ip;
		c->res->rseq_aborted = true;
	}
}

/* ---- the architecture: system call mechanics --------------------------- */

#if defined(__x86_64__)

/* Stopped inside a system call the kernel will restart: orig_rax holds its
 * number and rax the restart code (x86 rewinds only after the stop). */
static int at_syscall_boundary(struct inj *c, bool *yes)
{
	long rax = (long)c->regs0.rax;

	*yes = (long)c->regs0.orig_rax >= 0 &&
	       (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR ||
		rax == -ERESTARTNOHAND || rax == -ERESTART_RESTARTBLOCK);
	return 0;
}

static void load_call(const struct inj *c, regs_t *r)
{
	r->rdi = (unsigned long)(unsigned int)c->req->mode;
	r->rsi = c->scratch;
	r->rdx = c->scratch ? c->req->maxnode : 0;
}

/* At a system call entry stop: make it set_mempolicy. */
static int turn_entry_into_call(struct inj *c, const regs_t *entry)
{
	regs_t r = *entry;

	r.orig_rax = __NR_set_mempolicy;
	load_call(c, &r);
	return set_regs(c, &r);
}

/* At an entry stop that is not ours: have the kernel skip the call when
 * the thread is released with the saved registers. */
static void skip_entered_call(struct inj *c)
{
	c->restore.orig_rax = (unsigned long)-1;
}

/* From the exit stop of the call made in its place: the registers that
 * make the thread execute its own system call instruction again. */
static void rewind_to_own_call(regs_t *restore, const regs_t *entry)
{
	*restore = *entry;
	restore->rip -= SYSCALL_INSN_LEN;
	restore->rax = entry->orig_rax;
	restore->orig_rax = (unsigned long)-1;
}

static unsigned long entry_nr_shown(const regs_t *entry)
{
	return (unsigned long)entry->orig_rax & ~__X32_SYSCALL_BIT;
}

/* Point the thread at a system call instruction, number in place. */
static void aim_at_insn(const struct inj *c, regs_t *r, unsigned long insn)
{
	r->rip = insn;
	r->rax = __NR_set_mempolicy;
	r->orig_rax = (unsigned long)-1;	/* no restart logic on these registers */
	load_call(c, r);
}

/* Nothing to save beyond the general registers: the injected call keeps
 * the thread's vector registers. */
static int check_user_state(struct inj *c)
{
	(void)c;
	return 0;
}

#else /* __aarch64__ */

/* arm64 rewinds a restartable call BEFORE the stop (pc back on its svc,
 * x0 = its first argument again), so the restart code is never seen.  A
 * thread whose pc is on an svc is either that, or about to make a call:
 * either way the next thing it does is enter that call, which is the
 * moment to take. */
static int at_syscall_boundary(struct inj *c, bool *yes)
{
	unsigned char insn[SYSCALL_INSN_LEN];

	if (mem_read(c, c->regs0.pc, insn, sizeof(insn)) < 0)
		return failed(c, errno, "cannot read the thread's code");
	*yes = memcmp(insn, syscall_insn, sizeof(insn)) == 0;
	return 0;
}

static void load_call(const struct inj *c, regs_t *r)
{
	r->regs[0] = (unsigned long long)(unsigned int)c->req->mode;
	r->regs[1] = c->scratch;
	r->regs[2] = c->scratch ? c->req->maxnode : 0;
}

/* At an entry stop the number is already latched: it changes only through
 * NT_ARM_SYSTEM_CALL (-1: none); x0-x5 are read after the stop. */
static int set_entered_nr(struct inj *c, int nr)
{
	struct iovec iov = { .iov_base = &nr, .iov_len = sizeof(nr) };

	if (pt(PTRACE_SETREGSET, c, NT_ARM_SYSTEM_CALL, &iov) < 0)
		return failed(c, errno, "PTRACE_SETREGSET NT_ARM_SYSTEM_CALL");
	return 0;
}

static int turn_entry_into_call(struct inj *c, const regs_t *entry)
{
	regs_t r = *entry;

	load_call(c, &r);
	if (set_regs(c, &r) < 0)
		return -1;
	return set_entered_nr(c, __NR_set_mempolicy);
}

static void skip_entered_call(struct inj *c)
{
	(void)set_entered_nr(c, -1);
}

/* The entry registers hold the call's own number (x8; restart_syscall
 * when the kernel chose it) and first argument (x0): back onto the svc. */
static void rewind_to_own_call(regs_t *restore, const regs_t *entry)
{
	*restore = *entry;
	restore->pc -= SYSCALL_INSN_LEN;
}

static unsigned long entry_nr_shown(const regs_t *entry)
{
	return (unsigned long)entry->regs[8];
}

static void aim_at_insn(const struct inj *c, regs_t *r, unsigned long insn)
{
	r->pc = insn;
	r->pstate &= ~PSR_BTYPE_BITS;	/* not a branch: no BTI landing needed */
	r->regs[8] = __NR_set_mempolicy;
	load_call(c, r);
}

struct sve_header {			/* struct user_sve_header */
	uint32_t size, max_size;
	uint16_t vl, max_vl, flags, reserved;
};

/* A system call discards the SVE (and SME streaming) state beyond the
 * FPSIMD registers; a thread stopped in user code with such state live
 * would lose it.  CPUs without SVE/SME answer EINVAL: nothing to keep. */
static int check_user_state(struct inj *c)
{
	static const unsigned int sets[] = { NT_ARM_SVE, NT_ARM_SSVE };

	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		struct sve_header h;
		struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };

		memset(&h, 0, sizeof(h));
		if (pt(PTRACE_GETREGSET, c, sets[i], &iov) < 0)
			continue;
		if (iov.iov_len >= sizeof(h) && (h.flags & SVE_PT_REGS_SVE))
			return verdict(c, FAIL_INJECTION, EBUSY,
				       "live SVE/SME register state would be lost");
	}
	return 0;
}

#endif

/* ---- the two paths ------------------------------------------------------- */

static int take_result(struct inj *c, const regs_t *r, const char *path)
{
	long rv = (long)REG_RESULT(r);

	if (rv < -4095 || rv > 0)
		return verdict(c, FAIL_INJECTION, EPROTO, "set_mempolicy returned nonsense");
	(void)verdict(c, FAIL_NONE, (int)-rv, path);
	return 0;
}

/* Path A: the thread was interrupted inside a system call that the kernel
 * will restart (on arm64: its pc is on an svc).  Let it re-enter that call
 * (or restart_syscall), swap the number at the entry stop, rewind at the
 * exit stop, and release it at the entry of its own call again. */
static int path_syscall(struct inj *c)
{
	struct pmp_syscall_info si;
	regs_t entry, r;
	char path[48];

	if (next_syscall_stop(c, SYSCALL_INFO_ENTRY, "expected the restarted call's entry") < 0)
		return -1;
	if (syscall_info(c, &si) < 0 || get_regs(c, &entry) < 0)
		return -1;
	if (si.arch != AUDIT_ARCH_NATIVE)
		return verdict(c, FAIL_COMPAT_TASK, 0, "inside a 32-bit system call");
	if (place_mask(c, REG_SP(&entry)) < 0)
		return -1;
	c->restore = entry;	/* released here, it would make its own call */
	c->have_restore = true;
	if (turn_entry_into_call(c, &entry) < 0)
		return -1;

	if (next_syscall_stop(c, SYSCALL_INFO_EXIT, "expected set_mempolicy's exit") < 0)
		return -1;
	if (get_regs(c, &r) < 0 || put_back_scratch(c) < 0)
		return -1;
	snprintf(path, sizeof(path), "in syscall %lu", entry_nr_shown(&entry));
	if (take_result(c, &r, path) < 0)
		return -1;
	rewind_to_own_call(&c->restore, &entry);
	if (set_regs(c, &c->restore) < 0)
		return -1;
	c->have_restore = false;

	if (next_syscall_stop(c, SYSCALL_INFO_ENTRY, "expected the original call's entry") < 0)
		return -1;
	return 0;
}

/* Path B: the thread was in user code (or its system call had finished).
 * Run set_mempolicy at a system call instruction of its own, then give
 * every register back. */
static int path_user(struct inj *c)
{
	struct pmp_syscall_info si;
	unsigned long insn;
	regs_t r;

	if (check_user_state(c) < 0 || find_syscall_insn(c, &insn) < 0 ||
	    place_mask(c, REG_SP(&c->regs0)) < 0)
		return -1;
	r = c->regs0;
	aim_at_insn(c, &r, insn);
	c->restore = c->regs0;
	rseq_fixup(c, &c->restore);
	c->have_restore = true;
	if (set_regs(c, &r) < 0)
		return -1;

	if (next_syscall_stop(c, SYSCALL_INFO_ENTRY, "expected set_mempolicy's entry") < 0)
		return -1;
	if (syscall_info(c, &si) < 0)
		return -1;
	if (si.u.entry.nr != __NR_set_mempolicy || si.arch != AUDIT_ARCH_NATIVE) {
		skip_entered_call(c);	/* whatever this is, it does not run */
		return verdict(c, FAIL_INJECTION, EPROTO, "the injected call was not entered");
	}
	if (next_syscall_stop(c, SYSCALL_INFO_EXIT, "expected set_mempolicy's exit") < 0)
		return -1;
	if (get_regs(c, &r) < 0 || put_back_scratch(c) < 0)
		return -1;
	return take_result(c, &r, "in user code");
}

static void inject(struct inj *c)
{
	bool in_call;

	if (seize(c) < 0)
		return;
	if (stop_thread(c) < 0 || take_control(c) < 0)
		goto out;
	if (at_syscall_boundary(c, &in_call) < 0)
		goto out;
	if (in_call)
		(void)path_syscall(c);
	else
		(void)path_user(c);
out:
	release(c);
}

void ptrace_set_thread_policy(const struct task_handle *h, const struct ptrace_request *req,
			      struct ptrace_result *res)
{
	struct inj *c;
	sigset_t defer, old;
	bool deferred;

	memset(res, 0, sizeof(*res));
	res->yama_scope = -1;
	c = calloc(1, sizeof(*c));
	if (!c) {
		res->failure = FAIL_INJECTION;
		res->err = ENOMEM;
		snprintf(res->detail, sizeof(res->detail), "out of memory");
		return;
	}
	c->h = h;
	c->pid = h->pid;
	c->tid = h->tid;
	c->req = req;
	c->res = res;
	if (mask_bytes(req) > SCRATCH_MAX || (req->maxnode > 1 && !req->mask)) {
		verdict(c, FAIL_INJECTION, EINVAL, "node mask too large");
		goto out;
	}
	if (preflight(c) < 0)
		goto out;

	/* The caller's own termination signals wait until the thread is
	 * released: an interrupted injection is the one thing to avoid. */
	sigemptyset(&defer);
	sigaddset(&defer, SIGINT);
	sigaddset(&defer, SIGTERM);
	sigaddset(&defer, SIGHUP);
	sigaddset(&defer, SIGQUIT);
	sigaddset(&defer, SIGTSTP);
	deferred = pthread_sigmask(SIG_BLOCK, &defer, &old) == 0;
	inject(c);
	if (deferred)
		(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
	free(c);
}

#endif /* __x86_64__ || __aarch64__ */
