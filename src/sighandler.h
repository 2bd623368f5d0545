/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sighandler.h - the signal handler the signal engine (sigengine.h) puts
 * into a target process, and the layout of the memory it shares with the
 * tool.  Included by sighandler.S (the handler's code, x86_64 and
 * aarch64) and by the C that fills and reads that memory, so both see one
 * layout: offsets only, no C types.
 *
 * The region, one memfd mapped by the target and by the tool:
 *   [0, SIGH_DATA_AT)        the handler's code, mapped read+exec in the
 *                            target (a copy of pmp_sigh_start..end)
 *   [SIGH_DATA_AT, ...)      data, mapped read+write by both: the header
 *                            below, the node mask, the sigactions, then one
 *                            slot per thread signalled
 *
 * What the handler does, in the thread the kernel delivers the signal to,
 * with every signal blocked (sa_mask) and on the thread's stack or
 * sigaltstack (SA_ONSTACK), as the kernel puts any handler's frame:
 *   1. entered += 1
 *   2. set_mempolicy(mode, mask, maxnode) from the header: always, so that
 *      whoever sends the signal gets only that
 *   3. if the signal came with si_code SI_QUEUE and a value whose high
 *      half is the run's nonce and whose low half is a slot below nslots:
 *      the slot gets the call's result, the interrupted pc and return
 *      register (so the tool can tell a system call the signal ended with
 *      EINTR) and the time (clock_gettime(2), for the tool's figure of
 *      each thread's delay), then its state 1; ndone += 1, and a
 *      FUTEX_WAKE of ndone if the tool is waiting
 *   4. left += 1, then rt_sigreturn(2) straight away: the kernel puts back
 *      every register, the signal mask and the stack from the frame, and
 *      errno was never touched (raw system calls).
 * After `left' only the system call instruction of rt_sigreturn runs in
 * the region: the engine unmaps it only when left == entered.
 */
#ifndef PMP_SIGHANDLER_H
#define PMP_SIGHANDLER_H

/* The data's offset from the code: 64 KiB, a multiple of every page size
 * (aarch64 kernels use 4, 16 or 64 KiB pages), so that the two can be
 * mapped with different protections. */
#define SIGH_DATA_AT		0x10000

/* The header, at the start of the data (u32 and u64 fields). */
#define SIGH_NONCE		0	/* u32: the high half of a value the run sends */
#define SIGH_NSLOTS		4	/* u32: slots there are */
#define SIGH_MODE		8	/* u64: set_mempolicy's mode (with its flags) */
#define SIGH_MASK		16	/* u64: the mask's address in the target, or 0 */
#define SIGH_MAXNODE		24	/* u64: set_mempolicy's maxnode */
#define SIGH_NDONE		32	/* u32: slots written; the tool's futex word */
#define SIGH_WAITING		36	/* u32: nonzero while the tool sleeps on ndone */
#define SIGH_ENTERED		40	/* u32: handler runs begun */
#define SIGH_LEFT		44	/* u32: handler runs past their last store */

#define SIGH_MASK_AT		64	/* the node mask, SIGH_MASK_MAX bytes at most */
#define SIGH_MASK_MAX		8192
#define SIGH_ACT_AT		8320	/* struct kernel_sigaction installed (32 bytes) */
#define SIGH_OLDACT_AT		8352	/* and the one it replaced, as the kernel wrote it */
#define SIGH_IGNACT_AT		8384	/* SIG_IGN, for the end */
#define SIGH_CURACT_AT		8416	/* what the end finds installed */
#define SIGH_SPAREACT_AT	8448	/* what the end replaces last (unread) */
#define SIGH_SLOTS_AT		12288	/* the slots */

/* One slot: a thread's answer. */
#define SIGH_SLOT_SIZE		64
#define SIGH_SLOT_SHIFT		6
#define SIGH_SLOT_STATE		0	/* u32: 1 once the rest is written */
#define SIGH_SLOT_RV		8	/* s64: set_mempolicy's return (0 or -errno) */
#define SIGH_SLOT_PC		16	/* u64: the pc the signal interrupted */
#define SIGH_SLOT_RET		24	/* u64: the return register there (rax, x0) */
#define SIGH_SLOT_TIME		32	/* struct timespec: CLOCK_MONOTONIC when it ran */

#define SIGH_SI_QUEUE		(-1)	/* si_code of rt_tgsigqueueinfo and pidfd_send_signal */

#ifndef __ASSEMBLER__
/* The handler's code, to be copied whole to the region's start, and the
 * offsets of its entry point and of its sa_restorer in it. */
extern const unsigned char pmp_sigh_start[], pmp_sigh_end[];
extern const unsigned char pmp_sigh_handler[], pmp_sigh_restorer[];
#endif

#endif
