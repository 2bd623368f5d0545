/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-mem.c - the traced thread's memory, for the ptrace backend:
 * reading and writing it (process_vm_readv/writev, /proc/TID/mem where the
 * kernel lacks them), finding its mappings (PROCMAP_QUERY, the maps file
 * where the kernel lacks that), the proof that the scratch page the
 * engine mapped in it is still that page, the system call instruction it
 * is pointed at (its [vdso] first), and the rseq critical section it may
 * be inside.
 * Nothing here changes registers or stops: the engine (ptrace.c) does.
 */
#include "config.h"

#include "ptrace.h"

#if PMP_PTRACE_SUPPORTED

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include "compat.h"
#include "procfs.h"
#include "ptrace-arch.h"
#include "ptrace-mem.h"
#include "ptrace-tracee.h"

#define SCAN_BUDGET		(4UL << 20)	/* bytes of executable mappings a scan may look at */
#define SCAN_STEP		4096UL		/* read at a time: a page on every kernel */
#define PAGEMAP_PRESENT		(1ULL << 63)

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
# define PTRACE_GET_RSEQ_CONFIGURATION	0x420f
#endif

/* Kernel ABI layouts, spelled out so that older C libraries do. */
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

/* ---- transfers ----------------------------------------------------------- */

/* /proc/TID/mem, for kernels built without process_vm_readv/writev
 * (CONFIG_CROSS_MEMORY_ATTACH=n); a tracer may read and write it. */
static int proc_mem(pid_t tid, unsigned long addr, void *buf, size_t len, bool write)
{
	char path[64];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
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

int tracee_mem_present(pid_t tid, unsigned long addr, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long pg = page > 0 ? (unsigned long)page : 4096;
	char path[64];
	int fd, r = 0;

	if (len == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (unsigned long a = addr / pg; r == 0 && a <= (addr + len - 1) / pg; a++) {
		uint64_t e;

		if (pread(fd, &e, sizeof(e), (off_t)(a * sizeof(e))) != (ssize_t)sizeof(e))
			r = -1;
		else if (!(e & PAGEMAP_PRESENT))
			r = -1;
	}
	close(fd);
	if (r < 0)
		errno = EFAULT;
	return r;
}

static int mem_xfer(pid_t tid, unsigned long addr, void *buf, size_t len, bool write)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)addr, .iov_len = len };
	ssize_t n;

	if (tracee_mem_present(tid, addr, len) < 0)
		return -1;
	n = write ? process_vm_writev(tid, &local, 1, &remote, 1, 0)
		  : process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n < 0 && errno == ENOSYS)
		return proc_mem(tid, addr, buf, len, write);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

int tracee_mem_read(pid_t tid, unsigned long addr, void *buf, size_t len)
{
	return mem_xfer(tid, addr, buf, len, false);
}

int tracee_mem_write(pid_t tid, unsigned long addr, const void *buf, size_t len)
{
	return mem_xfer(tid, addr, (void *)(uintptr_t)buf, len, true);
}

/* ---- mappings ------------------------------------------------------------ */

struct vma {
	unsigned long start, end;
	char perms[8];
	unsigned int dev_major, dev_minor;
	unsigned long inode;
	char name[64];
};

/* Call fn for each mapping of the thread's address space until it returns
 * nonzero; returns that value, 0 at the end, -1 if maps cannot be read. */
static int maps_walk(const struct tracee *t, int (*fn)(const struct vma *v, void *arg), void *arg)
{
	char path[64], line[512];
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)t->pid, (int)t->tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (r == 0 && fgets(line, sizeof(line), f)) {
		struct vma v;
		int name_at = 0;

		memset(&v, 0, sizeof(v));
		if (sscanf(line, "%lx-%lx %7s %*s %x:%x %lu %n", &v.start, &v.end, v.perms, &v.dev_major,
			   &v.dev_minor, &v.inode, &name_at) < 6)
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

/* PROCMAP_QUERY: the kernel looks up the one mapping that holds addr,
 * where the maps file lists every mapping (one per thread stack, so reading
 * it for each thread would make -a quadratic).  0 found (pq filled), -1 not
 * (errno: ENOENT no mapping holds addr; ENOTTY before Linux 6.11). */
static int vma_query_kernel(const struct tracee *t, unsigned long addr, struct pmp_procmap_query *pq)
{
	char path[64];
	int fd, r, err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)t->pid, (int)t->tid);
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

/* ---- the scratch page ------------------------------------------------------ */

struct page_query {
	unsigned long start, end;
	bool ok;
};

/* The maps file's view: one private read-write mapping, no file, no name
 * ([heap], [stack] and anon:NAME are the target's own). */
static int page_vma_fn(const struct vma *v, void *arg)
{
	struct page_query *q = arg;

	if (q->start < v->start || q->start >= v->end)
		return 0;
	q->ok = v->start == q->start && v->end == q->end && strcmp(v->perms, "rw-p") == 0 &&
		v->name[0] == '\0';
	return 1;
}

static bool page_vma_is_ours(const struct tracee *t, unsigned long start, size_t len)
{
	const uint64_t want = PMP_PROCMAP_VMA_READABLE | PMP_PROCMAP_VMA_WRITABLE;
	struct pmp_procmap_query pq;
	struct page_query q = { .start = start, .end = start + len };

	if (vma_query_kernel(t, start, &pq) == 0)
		return pq.vma_start == q.start && pq.vma_end == q.end && pq.vma_flags == want &&
		       pq.inode == 0 && pq.dev_major == 0 && pq.dev_minor == 0;
	if (errno == ENOENT)
		return false;
	return maps_walk(t, page_vma_fn, &q) == 1 && q.ok;
}

bool tracee_page_is_ours(const struct tracee *t, unsigned long start, size_t len, uint64_t cookie)
{
	uint64_t there;

	return page_vma_is_ours(t, start, len) &&
	       tracee_mem_read(t->tid, start, &there, sizeof(there)) == 0 && there == cookie;
}

/* ---- any one mapping ------------------------------------------------------ */

static int vma_at_fn(const struct vma *v, void *arg)
{
	struct tracee_vma *out = arg;

	if (out->start < v->start || out->start >= v->end)
		return 0;
	out->start = v->start;
	out->end = v->end;
	out->prot = (v->perms[0] == 'r' ? PMP_PROCMAP_VMA_READABLE : 0) |
		    (v->perms[1] == 'w' ? PMP_PROCMAP_VMA_WRITABLE : 0) |
		    (v->perms[2] == 'x' ? PMP_PROCMAP_VMA_EXECUTABLE : 0) |
		    (v->perms[3] == 's' ? PMP_PROCMAP_VMA_SHARED : 0);
	out->inode = v->inode;
	out->dev_major = v->dev_major;
	out->dev_minor = v->dev_minor;
	return 1;
}

int tracee_vma_at(const struct tracee *t, unsigned long addr, struct tracee_vma *out)
{
	struct pmp_procmap_query pq;

	memset(out, 0, sizeof(*out));
	if (vma_query_kernel(t, addr, &pq) == 0) {
		out->start = pq.vma_start;
		out->end = pq.vma_end;
		out->prot = (unsigned int)pq.vma_flags;
		out->inode = pq.inode;
		out->dev_major = pq.dev_major;
		out->dev_minor = pq.dev_minor;
		return 0;
	}
	if (errno == ENOENT)
		return -1;
	out->start = addr;
	if (maps_walk(t, vma_at_fn, out) == 1)
		return 0;
	errno = ENOENT;
	return -1;
}

/* ---- a system call instruction ------------------------------------------- */

/* Which mappings a pass of the scan looks at: the vDSO, then those of
 * files (the program's own text, its libraries), then the rest, which the
 * target may have made as large as it likes. */
enum insn_round { ROUND_VDSO, ROUND_FILES, ROUND_OTHERS };

struct insn_query {
	pid_t tid;
	enum insn_round round;
	unsigned long budget;	/* bytes the scan may still look at */
	bool exhausted;
	unsigned long found;
	unsigned char buf[SCAN_STEP + 8];
};

static bool in_round(const struct vma *v, enum insn_round round)
{
	if (strcmp(v->name, "[vdso]") == 0)
		return round == ROUND_VDSO;
	if (v->name[0] == '/')
		return round == ROUND_FILES;
	return round == ROUND_OTHERS;
}

/* A system call instruction (x86_64 `syscall', 0f 05; aarch64 `svc #0',
 * aligned) anywhere in an executable mapping: the thread is pointed
 * straight at it, so any such bytes will do.  Page by page, pages not in
 * memory passed over; every page looked at, read or not, is taken from
 * the budget, so that no mapping can make the scan long.  An instruction
 * across two pages read one after the other is found too. */
static int insn_fn(const struct vma *v, void *arg)
{
	const size_t keep = arch_syscall_insn_len - 1, pg = SCAN_STEP;
	struct insn_query *q = arg;
	size_t kept = 0;

	if (v->perms[2] != 'x' || strcmp(v->name, "[vsyscall]") == 0 || !in_round(v, q->round))
		return 0;
	for (unsigned long at = v->start; at < v->end; at += pg) {
		if (q->budget < pg) {
			q->exhausted = true;
			return 1;
		}
		q->budget -= pg;
		if (tracee_mem_read(q->tid, at, q->buf + kept, pg) < 0) {
			kept = 0;
			continue;
		}
		for (size_t i = 0; i + arch_syscall_insn_len <= kept + pg; i++)
			if ((at - kept + i) % arch_syscall_insn_align == 0 &&
			    memcmp(q->buf + i, arch_syscall_insn, arch_syscall_insn_len) == 0) {
				q->found = at - kept + i;
				return 1;
			}
		memmove(q->buf, q->buf + kept + pg - keep, keep);
		kept = keep;
	}
	return 0;
}

/* The vDSO's mapping without reading every mapping: its address from the
 * process's auxiliary vector (AT_SYSINFO_EHDR), its extent and rights from
 * PROCMAP_QUERY.  0 found, -1 not (the caller then reads the maps). */
static int vdso_vma_kernel(const struct tracee *t, struct vma *v)
{
	unsigned long auxv[2 * 64], base = 0;
	struct pmp_procmap_query pq;
	char path[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)t->pid);
	len = procfs_read_file(path, (char *)auxv, sizeof(auxv));
	if (len < 0)
		return -1;
	for (size_t i = 0; i + 1 < (size_t)len / sizeof(auxv[0]) && auxv[i] != AT_NULL; i += 2)
		if (auxv[i] == AT_SYSINFO_EHDR)
			base = auxv[i + 1];
	if (!base || vma_query_kernel(t, base, &pq) < 0 || !(pq.vma_flags & PMP_PROCMAP_VMA_EXECUTABLE))
		return -1;
	memset(v, 0, sizeof(*v));
	v->start = pq.vma_start;
	v->end = pq.vma_end;
	snprintf(v->perms, sizeof(v->perms), "r-xp");
	snprintf(v->name, sizeof(v->name), "[vdso]");
	return 0;
}

int tracee_find_syscall_insn(struct tracee *t, unsigned long *addr)
{
	/* static, not malloc'd: the orphaned tracing process scans too
	 * (ptrace-session.c), and one scan runs at a time */
	static struct insn_query query;
	struct insn_query *q = &query;
	struct vma vdso;
	int r = 0;

	memset(q, 0, sizeof(*q));
	q->tid = t->tid;
	q->budget = SCAN_BUDGET;
	q->round = ROUND_VDSO;
	if (vdso_vma_kernel(t, &vdso) == 0) {
		r = insn_fn(&vdso, q);
		q->round = ROUND_FILES;
	}
	for (; r == 0 && q->round <= ROUND_OTHERS; q->round++)
		r = maps_walk(t, insn_fn, q);
	if (q->found)
		*addr = q->found;
	else if (r < 0)
		tracee_failed(t, errno, "cannot read the thread's maps");
	else
		tracee_verdict(t, FAIL_INJECTION, ENOEXEC, q->exhausted ?
			       "no syscall instruction in the first 4 MiB scanned" :
			       "no syscall instruction in the target");
	return q->found ? 0 : -1;
}

/* ---- rseq ---------------------------------------------------------------- */

/* The kernel's own answer (PTRACE_GET_RSEQ_CONFIGURATION, Linux 5.13) says
 * where the thread's struct rseq is; its rseq_cs field names the section
 * the thread last armed.  Any read that fails means no section to leave. */
bool tracee_rseq_abort_ip(pid_t tid, uint64_t pc, uint64_t *abort_ip)
{
	struct pmp_rseq_config cfg;
	struct pmp_rseq_cs cs;
	uint64_t cs_ptr;

	memset(&cfg, 0, sizeof(cfg));
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, (void *)sizeof(cfg), &cfg) < 0 ||
	    !cfg.rseq_abi_pointer)
		return false;
	if (tracee_mem_read(tid, cfg.rseq_abi_pointer + RSEQ_CS_FIELD_OFFSET, &cs_ptr, sizeof(cs_ptr)) < 0 ||
	    !cs_ptr)
		return false;
	if (tracee_mem_read(tid, cs_ptr, &cs, sizeof(cs)) < 0)
		return false;
	if (pc < cs.start_ip || pc - cs.start_ip >= cs.post_commit_offset)
		return false;
	*abort_ip = cs.abort_ip;
	return true;
}

#endif /* PMP_PTRACE_SUPPORTED */
