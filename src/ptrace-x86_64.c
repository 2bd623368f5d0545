/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-x86_64.c - the ptrace backend's x86_64 half of ptrace-arch.h:
 * the `syscall' instruction, the restart codes an interrupted call shows
 * in rax, and where a call's number and arguments go (orig_rax at an
 * entry stop, rax before the instruction; rdi, rsi, rdx, r10, r8, r9).
 */
#include "config.h"

#include "ptrace.h"

#if defined(__x86_64__)

#include <sys/syscall.h>

#include "ptrace-arch.h"

#define SYSCALL_INSN_LEN	2		/* 0f 05, and cd 80 for int $0x80 */
#define USER32_CS		0x23

/* The kernel's restart codes, as a stopped thread shows them in rax. */
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

#ifndef __X32_SYSCALL_BIT
# define __X32_SYSCALL_BIT	0x40000000UL
#endif

const unsigned char arch_syscall_insn[SYSCALL_INSN_LEN] = { 0x0f, 0x05 };
const size_t arch_syscall_insn_len = SYSCALL_INSN_LEN;
const unsigned long arch_syscall_insn_align = 1;
const uint32_t arch_audit_native = 0xc000003eU;	/* AUDIT_ARCH_X86_64 */

uint64_t arch_pc(const regs_t *r)
{
	return r->rip;
}

void arch_set_pc(regs_t *r, uint64_t pc)
{
	r->rip = pc;
}

bool arch_in_32bit_code(const regs_t *r)
{
	return r->cs == USER32_CS;
}

/* Stopped inside a system call the kernel will restart: orig_rax holds its
 * number and rax the restart code (x86 rewinds only after the stop). */
int arch_at_syscall_boundary(struct tracee *t, bool *yes)
{
	long rax = (long)t->regs0.rax;

	*yes = (long)t->regs0.orig_rax >= 0 &&
	       (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR ||
		rax == -ERESTARTNOHAND || rax == -ERESTART_RESTARTBLOCK);
	return 0;
}

static void load_args(regs_t *r, const struct tracee_call *c)
{
	r->rdi = c->arg[0];
	r->rsi = c->arg[1];
	r->rdx = c->arg[2];
	r->r10 = c->arg[3];
	r->r8 = c->arg[4];
	r->r9 = c->arg[5];
}

int arch_turn_entry_into_call(struct tracee *t, const regs_t *entry, const struct tracee_call *c)
{
	regs_t r = *entry;

	r.orig_rax = (unsigned long)c->nr;
	load_args(&r, c);
	return tracee_set_regs(t, &r);
}

void arch_skip_entered_call(struct tracee *t)
{
	t->restore.orig_rax = (unsigned long)-1;
}

void arch_rewind_to_own_call(regs_t *restore, const regs_t *entry)
{
	*restore = *entry;
	restore->rip -= SYSCALL_INSN_LEN;
	restore->rax = entry->orig_rax;
	restore->orig_rax = (unsigned long)-1;
}

unsigned long arch_entry_nr_shown(const regs_t *entry)
{
	return (unsigned long)entry->orig_rax & ~__X32_SYSCALL_BIT;
}

void arch_aim_at_insn(regs_t *r, unsigned long insn, const struct tracee_call *c)
{
	r->rip = insn;
	r->rax = (unsigned long)c->nr;
	r->orig_rax = (unsigned long)-1;	/* no restart logic on these registers */
	load_args(r, c);
}

/* Nothing to save beyond the general registers: the injected call keeps
 * the thread's vector registers. */
int arch_check_user_state(struct tracee *t)
{
	(void)t;
	return 0;
}

#endif /* __x86_64__ */
