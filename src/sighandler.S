/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sighandler.S - the code of the handler the signal engine installs in a
 * target (what it does: sighandler.h).  It is never run by the tool: the
 * bytes from pmp_sigh_start to pmp_sigh_end are copied to the start of the
 * region shared with the target, so every reference is relative to
 * .Lstart and the data sits SIGH_DATA_AT after it.  Only the system calls
 * of the architecture's own table are made: no C library, no stack of its
 * own, no register kept (rt_sigreturn puts back every one).
 */
#include "sighandler.h"

	.section .rodata, "a"
	.balign	64
	.globl	pmp_sigh_start
	.globl	pmp_sigh_end
	.globl	pmp_sigh_handler
	.globl	pmp_sigh_restorer

#if defined(__x86_64__)

#define NR_FUTEX		202
#define NR_SET_MEMPOLICY	238
#define NR_RT_SIGRETURN		15
#define NR_CLOCK_GETTIME	228
#define CLOCK_MONOTONIC_	1
#define FUTEX_WAKE		1	/* not FUTEX_PRIVATE: the tool sleeps in another process */
#define UC_RIP			168	/* ucontext: uc_mcontext.gregs[REG_RIP] */
#define UC_RAX			144	/* and [REG_RAX] */
#define SI_CODE			8
#define SI_VALUE		24

pmp_sigh_start:
.Lstart:
pmp_sigh_handler:			/* rdi signal, rsi siginfo, rdx ucontext */
	lea	.Lstart+SIGH_DATA_AT(%rip), %rbx
	lock incl SIGH_ENTERED(%rbx)
	mov	%rsi, %r12
	mov	%rdx, %r13
	mov	SIGH_MODE(%rbx), %rdi
	mov	SIGH_MASK(%rbx), %rsi
	mov	SIGH_MAXNODE(%rbx), %rdx
	mov	$NR_SET_MEMPOLICY, %eax
	syscall
	mov	%rax, %r14
	cmpl	$SIGH_SI_QUEUE, SI_CODE(%r12)
	jne	.Lout
	mov	SI_VALUE(%r12), %rax
	mov	%rax, %rcx
	shr	$32, %rcx
	cmp	SIGH_NONCE(%rbx), %ecx
	jne	.Lout
	mov	%eax, %eax		/* the slot: the value's low half */
	cmp	SIGH_NSLOTS(%rbx), %eax
	jae	.Lout
	shl	$SIGH_SLOT_SHIFT, %rax
	lea	SIGH_SLOTS_AT(%rbx,%rax), %r15
	mov	%r14, SIGH_SLOT_RV(%r15)
	mov	UC_RIP(%r13), %rax
	mov	%rax, SIGH_SLOT_PC(%r15)
	mov	UC_RAX(%r13), %rax
	mov	%rax, SIGH_SLOT_RET(%r15)
	mov	$CLOCK_MONOTONIC_, %edi
	lea	SIGH_SLOT_TIME(%r15), %rsi
	mov	$NR_CLOCK_GETTIME, %eax
	syscall
	movl	$1, SIGH_SLOT_STATE(%r15)	/* x86 keeps stores in order */
	lock incl SIGH_NDONE(%rbx)
	cmpl	$0, SIGH_WAITING(%rbx)
	je	.Lout
	lea	SIGH_NDONE(%rbx), %rdi
	mov	$FUTEX_WAKE, %esi
	mov	$0x7fffffff, %edx
	mov	$NR_FUTEX, %eax
	syscall
.Lout:
	mov	$NR_RT_SIGRETURN, %eax
	add	$8, %rsp		/* past the return address: the frame is at rsp */
	lock incl SIGH_LEFT(%rbx)
	syscall
	ud2
pmp_sigh_restorer:			/* x86_64 wants one; the handler returns itself */
	mov	$NR_RT_SIGRETURN, %eax
	syscall
	ud2
pmp_sigh_end:

#elif defined(__aarch64__)

#define NR_FUTEX		98
#define NR_SET_MEMPOLICY	237
#define NR_RT_SIGRETURN		139
#define NR_CLOCK_GETTIME	113
#define CLOCK_MONOTONIC_	1
#define FUTEX_WAKE		1
#define UC_PC			440	/* ucontext: uc_mcontext.pc */
#define UC_X0			184	/* and regs[0] */
#define SI_CODE			8
#define SI_VALUE		24

/* *(u32 *)(reg + off) += 1, atomically (ARMv8.0: no LSE atomics) */
.macro	inc32 base, off
	add	x9, \base, #\off
1:	ldaxr	w10, [x9]
	add	w10, w10, #1
	stlxr	w11, w10, [x9]
	cbnz	w11, 1b
.endm

pmp_sigh_start:
.Lstart:
pmp_sigh_handler:			/* x0 signal, x1 siginfo, x2 ucontext */
	adr	x19, .Lstart
	mov	x9, #SIGH_DATA_AT
	add	x19, x19, x9
	inc32	x19, SIGH_ENTERED
	mov	x20, x1
	mov	x21, x2
	ldr	x0, [x19, #SIGH_MODE]
	ldr	x1, [x19, #SIGH_MASK]
	ldr	x2, [x19, #SIGH_MAXNODE]
	mov	x8, #NR_SET_MEMPOLICY
	svc	#0
	mov	x22, x0
	ldr	w9, [x20, #SI_CODE]
	cmn	w9, #1			/* SIGH_SI_QUEUE */
	b.ne	.Lout
	ldr	x9, [x20, #SI_VALUE]
	lsr	x10, x9, #32
	ldr	w11, [x19, #SIGH_NONCE]
	cmp	w10, w11
	b.ne	.Lout
	mov	w9, w9			/* the slot: the value's low half */
	ldr	w11, [x19, #SIGH_NSLOTS]
	cmp	w9, w11
	b.hs	.Lout
	add	x23, x19, #SIGH_SLOTS_AT
	add	x23, x23, x9, lsl #SIGH_SLOT_SHIFT
	str	x22, [x23, #SIGH_SLOT_RV]
	ldr	x9, [x21, #UC_PC]
	str	x9, [x23, #SIGH_SLOT_PC]
	ldr	x9, [x21, #UC_X0]
	str	x9, [x23, #SIGH_SLOT_RET]
	mov	x0, #CLOCK_MONOTONIC_
	add	x1, x23, #SIGH_SLOT_TIME
	mov	x8, #NR_CLOCK_GETTIME
	svc	#0
	mov	w9, #1
	stlr	w9, [x23]		/* SIGH_SLOT_STATE, after the rest */
	inc32	x19, SIGH_NDONE
	ldr	w10, [x19, #SIGH_WAITING]
	cbz	w10, .Lout
	add	x0, x19, #SIGH_NDONE
	mov	x1, #FUTEX_WAKE
	mov	x2, #0x7fffffff
	mov	x8, #NR_FUTEX
	svc	#0
.Lout:
	mov	x8, #NR_RT_SIGRETURN	/* sp was never moved: the frame is at sp */
	inc32	x19, SIGH_LEFT
	svc	#0
	brk	#0
pmp_sigh_restorer:
	mov	x8, #NR_RT_SIGRETURN
	svc	#0
	brk	#0
pmp_sigh_end:

#else

/* No engine on other architectures (sigengine.c): an empty handler. */
pmp_sigh_start:
pmp_sigh_handler:
pmp_sigh_restorer:
pmp_sigh_end:

#endif

	.section .note.GNU-stack, "", %progbits
