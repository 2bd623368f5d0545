/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-arch.h - what the ptrace backend needs to know of the
 * architecture: how a system call instruction looks, how a stopped thread
 * shows that it is inside a system call, how a call is loaded into the
 * registers and taken back out, and the registers the engine reads.  Each
 * supported architecture implements all of it in its own file
 * (ptrace-x86_64.c, ptrace-aarch64.c); the engine (ptrace.c) and the
 * target-memory code (ptrace-mem.c) use nothing else of the architecture.
 */
#ifndef PMP_PTRACE_ARCH_H
#define PMP_PTRACE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrace-tracee.h"

/* A system call instruction's bytes, their number, and the alignment an
 * address must have to hold one. */
extern const unsigned char arch_syscall_insn[];
extern const size_t arch_syscall_insn_len;
extern const unsigned long arch_syscall_insn_align;

/* The AUDIT_ARCH_* value of a native (not 32-bit) system call, as
 * PTRACE_GET_SYSCALL_INFO reports it. */
extern const uint32_t arch_audit_native;

/* The registers the engine reads or moves. */
uint64_t arch_pc(const regs_t *r);
void arch_set_pc(regs_t *r, uint64_t pc);

/* Whether the registers at the first stop are those of 32-bit code in a
 * 64-bit process (the register set's size cannot tell it apart). */
bool arch_in_32bit_code(const regs_t *r);

/* Whether the thread, at its first stop (t->regs0), is inside a system
 * call it will enter again when resumed ("path A").  0, or -1 with the
 * verdict said. */
int arch_at_syscall_boundary(struct tracee *t, bool *yes);

/* At a system call entry stop with registers entry: make the call that
 * is entered c instead.  0, or -1 with the verdict said. */
int arch_turn_entry_into_call(struct tracee *t, const regs_t *entry, const struct tracee_call *c);

/* At an entry stop that is not ours: have the kernel skip the call when
 * the thread is released with t->restore. */
void arch_skip_entered_call(struct tracee *t);

/* From the exit stop of the call made in place of the thread's own: the
 * registers that make it execute its own system call instruction again,
 * from the registers its entry stop showed. */
void arch_rewind_to_own_call(regs_t *restore, const regs_t *entry);

/* The number of the call whose entry stop showed these registers, for
 * the result's detail. */
unsigned long arch_entry_nr_shown(const regs_t *entry);

/* Point the registers at the system call instruction at insn, with c's
 * number and arguments in place ("path B"). */
void arch_aim_at_insn(regs_t *r, unsigned long insn, const struct tracee_call *c);

/* Refuse path B where a system call would lose register state that
 * t->restore cannot put back.  0, or -1 with the verdict said. */
int arch_check_user_state(struct tracee *t);

#endif
