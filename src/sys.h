/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sys.h - every raw system call the tool makes on a target, and the
 * finding and verification of pidfd_set_mempolicy's number.
 */
#ifndef PMP_SYS_H
#define PMP_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct setter {
	long nr;		/* syscall number, -1 when none is known */
	const char *source;	/* where nr came from, for messages */
	bool verified;		/* proven: the running kernel provides it at nr */
	int denied;		/* or EPERM: it refused the caller even its own
				 * policy, so every call would fail so; none is made */
	char why[200];		/* when not verified: why not */
};

/* Choose the number (environment PIDMEMPOLICY_SYSCALL_NR, the kernel headers,
 * the configured number) and verify that the running kernel provides
 * pidfd_set_mempolicy at it: the kernel must name the syscall (its
 * tracepoint in tracefs, else /proc/kallsyms); only then must two harmless
 * probes answer as this syscall does (flags != 0 -> EINVAL; a bad pidfd ->
 * EBADF), which process_madvise does too; only then comes the proof: called
 * on the caller's own pidfd, the number must set the caller's own task
 * policy to a policy it did not have, as get_mempolicy(2) reads it back,
 * after which set_mempolicy(2) restores the policy it had.  No number is
 * called before the kernel names the syscall, nor with any pidfd but -1
 * before the probes answered, nor with any but the caller's own during the
 * proof.  Must run on the main thread.
 * Returns 0 when verified; 0 also, with denied = EPERM and verified false,
 * when all but the proof passed and the number refused the proof with
 * EPERM, as the syscall does a caller without CAP_SYS_NICE; else -1 with
 * why set. */
int sys_setter_resolve(struct setter *s, const char *env_nr);

/* pidfd_open(2); returns the fd or -1 with errno. */
int sys_pidfd_open(pid_t pid, unsigned int flags);

/* Whether pidfd_open(2) takes PIDFD_THREAD (Linux 6.9): a pidfd for the
 * caller's own leader with that flag is made and closed.  Before 6.9 any
 * flag but PIDFD_NONBLOCK is EINVAL; afterwards EINVAL for a thread means
 * that it lost its task between lookup and pidfd (it exited). */
bool sys_thread_pidfds_supported(void);

/* Whether tid is, at this instant, a thread of process pid: tgkill(2)
 * with the null signal, the kernel's existence probe (no signal is sent).
 * The kernel looks the thread up before it checks permission, so only
 * ESRCH means no: returns 1 or 0. */
bool sys_is_thread_of(pid_t pid, pid_t tid);

/* Whether that probe can be trusted here: the null signal to ourselves
 * succeeds (a seccomp filter that fails tgkill would answer EPERM for
 * every thread, which would read as yes). */
bool sys_null_signal_works(void);

/* Close every fd in fds (the array may be sorted), with one
 * close_range(2) per run of consecutive numbers, else close(2) each. */
void sys_close_fds(int *fds, size_t n);

/* pidfd_set_mempolicy(2) at the verified number; -1 with errno on failure
 * (EPERM without a call when the setter is denied, ENOSYS when not verified). */
int sys_pidfd_set_mempolicy(const struct setter *s, int pidfd, int mode,
			    const unsigned long *nmask, unsigned long maxnode);

/* 1 if the task behind pidfd has exited, 0 if it is alive, -1 on error. */
int sys_pidfd_exited(int pidfd);

/* Inode of the pidfd and whether the kernel makes such inodes unique
 * per process (pidfs, Linux 6.9); -1 with errno on failure. */
int sys_pidfd_inode(int pidfd, uint64_t *inode, bool *unique);

/* Whether the running kernel knows this policy mode at all (weighted
 * interleave arrived in Linux 6.9 with /sys/kernel/mm/mempolicy). */
bool sys_kernel_supports_mode(int mode);

#endif
