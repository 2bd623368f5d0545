/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptrace-aarch64.c - the ptrace backend's aarch64 half of ptrace-arch.h:
 * the `svc #0' instruction, a stopped thread's pc on an svc as the sign of
 * a call it will enter again, the number that changes at an entry stop
 * only through NT_ARM_SYSTEM_CALL, and the SVE/SME state a system call
 * would discard.
 */
#include "config.h"

#include "ptrace.h"

#if defined(__aarch64__)

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "ptrace-arch.h"
#include "ptrace-mem.h"

#define SYSCALL_INSN_LEN	4		/* svc #0 = 0xd4000001 */
#define PSR_BTYPE_BITS		0x00000c00ULL	/* PSTATE.BTYPE: cleared when pc is moved */
#ifndef NT_ARM_SYSTEM_CALL
# define NT_ARM_SYSTEM_CALL	0x404
#endif
#ifndef NT_ARM_SVE
# define NT_ARM_SVE		0x405
#endif
#ifndef NT_ARM_SSVE
# define NT_ARM_SSVE		0x40b
#endif
#define SVE_PT_REGS_SVE		1		/* user_sve_header.flags: live SVE state */

const unsigned char arch_syscall_insn[SYSCALL_INSN_LEN] = { 0x01, 0x00, 0x00, 0xd4 };
const size_t arch_syscall_insn_len = SYSCALL_INSN_LEN;
const unsigned long arch_syscall_insn_align = 4;
const uint32_t arch_audit_native = 0xc00000b7U;	/* AUDIT_ARCH_AARCH64 */

uint64_t arch_pc(const regs_t *r)
{
	return r->pc;
}

void arch_set_pc(regs_t *r, uint64_t pc)
{
	r->pc = pc;
}

/* A 32-bit task shows a smaller register set, which the engine refuses as
 * soon as it reads it: 64-bit registers are always AArch64 code. */
bool arch_in_32bit_code(const regs_t *r)
{
	(void)r;
	return false;
}

/* arm64 rewinds a restartable call BEFORE the stop (pc back on its svc,
 * x0 = its first argument again), so the restart code is never seen.  A
 * thread whose pc is on an svc is either that, or about to make a call:
 * either way the next thing it does is enter that call, which is the
 * moment to take. */
int arch_at_syscall_boundary(struct tracee *t, bool *yes)
{
	unsigned char insn[SYSCALL_INSN_LEN];

	if (tracee_mem_read(t->tid, t->regs0.pc, insn, sizeof(insn)) < 0)
		return tracee_failed(t, errno, "cannot read the thread's code");
	*yes = memcmp(insn, arch_syscall_insn, sizeof(insn)) == 0;
	return 0;
}

static void load_args(regs_t *r, const struct tracee_call *c)
{
	for (int i = 0; i < 6; i++)
		r->regs[i] = c->arg[i];
}

/* At an entry stop the number is already latched: it changes only through
 * NT_ARM_SYSTEM_CALL (-1: none); x0-x5 are read after the stop. */
static int set_entered_nr(struct tracee *t, int nr)
{
	struct iovec iov = { .iov_base = &nr, .iov_len = sizeof(nr) };

	if (tracee_ptrace(PTRACE_SETREGSET, t, NT_ARM_SYSTEM_CALL, &iov) < 0)
		return tracee_failed(t, errno, "PTRACE_SETREGSET NT_ARM_SYSTEM_CALL");
	return 0;
}

int arch_turn_entry_into_call(struct tracee *t, const regs_t *entry, const struct tracee_call *c)
{
	regs_t r = *entry;

	load_args(&r, c);
	if (tracee_set_regs(t, &r) < 0)
		return -1;
	return set_entered_nr(t, (int)c->nr);
}

void arch_skip_entered_call(struct tracee *t)
{
	(void)set_entered_nr(t, -1);
}

/* The entry registers hold the call's own number (x8; restart_syscall
 * when the kernel chose it) and first argument (x0): back onto the svc. */
void arch_rewind_to_own_call(regs_t *restore, const regs_t *entry)
{
	*restore = *entry;
	restore->pc -= SYSCALL_INSN_LEN;
}

unsigned long arch_entry_nr_shown(const regs_t *entry)
{
	return (unsigned long)entry->regs[8];
}

void arch_aim_at_insn(regs_t *r, unsigned long insn, const struct tracee_call *c)
{
	r->pc = insn;
	r->pstate &= ~PSR_BTYPE_BITS;	/* not a branch: no BTI landing needed */
	r->regs[8] = (unsigned long long)c->nr;
	load_args(r, c);
}

struct sve_header {			/* struct user_sve_header */
	uint32_t size, max_size;
	uint16_t vl, max_vl, flags, reserved;
};

/* A system call discards the SVE (and SME streaming) state beyond the
 * FPSIMD registers; a thread stopped in user code with such state live
 * would lose it.  CPUs without SVE/SME answer EINVAL: nothing to keep. */
int arch_check_user_state(struct tracee *t)
{
	static const unsigned int sets[] = { NT_ARM_SVE, NT_ARM_SSVE };

	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		struct sve_header h;
		struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };

		memset(&h, 0, sizeof(h));
		if (tracee_ptrace(PTRACE_GETREGSET, t, sets[i], &iov) < 0)
			continue;
		if (iov.iov_len >= sizeof(h) && (h.flags & SVE_PT_REGS_SVE))
			return tracee_verdict(t, FAIL_INJECTION, EBUSY,
					      "live SVE/SME register state would be lost");
	}
	return 0;
}

#endif /* __aarch64__ */
