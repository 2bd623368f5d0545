/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-mem.h - the traced thread's memory, as the ptrace backend reads
 * and writes it: raw transfers, the proof that the scratch page holding
 * the node mask is still the engine's, the system call instruction it is
 * pointed at, and the rseq critical section it may have been stopped in.  Only the ptrace
 * files include it, and the test helper that stands in for the rseq
 * lookup (tests/helpers/pmp-inject.c, linked with
 * -Wl,--wrap=tracee_rseq_abort_ip).
 */
#ifndef PMP_PTRACE_MEM_H
#define PMP_PTRACE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracee;

/* Whether every page of [addr, addr + len) of thread tid is in memory
 * (pagemap's "present" bit), so that reading it, by us or by the kernel
 * in a call the thread makes, faults in nothing: a page the target's own
 * user space must provide (a userfaultfd-registered region, a file of a
 * FUSE server) would hold the read for as long as the target likes.  0
 * yes, -1 with errno (EFAULT: a page is not present). */
int tracee_mem_present(pid_t tid, unsigned long addr, size_t len);

/* Read or write len bytes at addr in thread tid: process_vm_readv/writev,
 * or /proc/TID/mem where the kernel lacks them, once every page is in
 * memory (tracee_mem_present).  0, or -1 with errno (EFAULT for a short
 * transfer, or a page not present). */
int tracee_mem_read(pid_t tid, unsigned long addr, void *buf, size_t len);
int tracee_mem_write(pid_t tid, unsigned long addr, const void *buf, size_t len);

/* Whether [start, start + len) is still exactly one private anonymous
 * read-write mapping of the thread's process, with cookie in its first
 * bytes: the scratch page the engine mapped, not something the target put
 * in its place after unmapping it. */
bool tracee_page_is_ours(const struct tracee *t, unsigned long start, size_t len, uint64_t cookie);

/* One mapping of the thread's process: its extent, rights
 * (PMP_PROCMAP_VMA_* of compat.h: read, write, exec, shared) and file. */
struct tracee_vma {
	unsigned long start, end;
	unsigned int prot;
	unsigned long inode;
	unsigned int dev_major, dev_minor;
};

/* The mapping that holds addr (PROCMAP_QUERY, else the maps file).  0, or
 * -1 with errno (ENOENT: none holds it). */
int tracee_vma_at(const struct tracee *t, unsigned long addr, struct tracee_vma *out);

/* A system call instruction in one of the thread's executable mappings,
 * its [vdso] first.  0, or -1 with the verdict said. */
int tracee_find_syscall_insn(struct tracee *t, unsigned long *addr);

/* Whether thread tid, stopped at pc, is inside an rseq critical section;
 * if so *abort_ip is where the kernel would resume it (the section's
 * abort handler).  The engine calls it from another file so that a test
 * can stand in for it at link time. */
bool tracee_rseq_abort_ip(pid_t tid, uint64_t pc, uint64_t *abort_ip);

#endif
