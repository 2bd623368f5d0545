/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sys.c - raw system calls: pidfd_open, pidfd_set_mempolicy (number lookup
 * and verification), pidfd liveness and identity, and small reads of kernel
 * text files.  Decides nothing about policy.
 *
 * The number of pidfd_set_mempolicy is not in mainline.  Its v2 patch uses
 * 451 on x86_64, which every stock kernel since 6.5 gives to cachestat, so a
 * number is only ever called once the running kernel has been shown to
 * provide the syscall there, and only used on a target once it has set the
 * tool's own policy as only that syscall does.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "compat.h"
#include "procfs.h"
#include "sys.h"

#define KALLSYMS_PATH "/proc/kallsyms"
#define SYSCALL_SYMBOL "sys_pidfd_set_mempolicy"
#define TRACEFS_EVENT "/sys/kernel/tracing/events/syscalls/sys_enter_pidfd_set_mempolicy"
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

static int parse_nr(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 4095)
		return -1;
	*out = v;
	return 0;
}

static void choose_number(struct setter *s, const char *env_nr)
{
	s->nr = -1;
	s->source = NULL;
	if (env_nr) {
		s->source = "PIDMEMPOLICY_SYSCALL_NR";
		if (parse_nr(env_nr, &s->nr) < 0)
			s->nr = -1;
		return;
	}
#if defined(__NR_pidfd_set_mempolicy)
	s->nr = __NR_pidfd_set_mempolicy;
	s->source = "the kernel headers";
#elif defined(PMP_CONFIGURED_NR)
	s->nr = PMP_CONFIGURED_NR;
	s->source = "configure";
#endif
}

/* A kernel built with syscall tracepoints (FTRACE_SYSCALLS, as
 * distributions build theirs) makes an event for each syscall of its
 * syscall table, and none for a function that is not in it.  Where tracefs
 * is mounted, one statfs finds it; /proc/kallsyms, read up to the
 * syscall's line, costs the kernel some 10 ms on a distribution kernel.
 * Only a real tracefs counts: anything else mounted there is ignored. */
static bool tracefs_names_syscall(void)
{
	struct statfs st;

	return statfs(TRACEFS_EVENT, &st) == 0 && (unsigned long)st.f_type == TRACEFS_MAGIC;
}

static int kernel_names_syscall(struct setter *s)
{
	int fd, found;

	if (tracefs_names_syscall())
		return 0;
	fd = open(KALLSYMS_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(s->why, sizeof(s->why), "cannot read %s to verify it: %s",
			 KALLSYMS_PATH, strerror(errno));
		return -1;
	}
	found = procfs_kallsyms_has(fd, SYSCALL_SYMBOL);
	if (found < 0)
		snprintf(s->why, sizeof(s->why), "cannot read %s to verify it: %s",
			 KALLSYMS_PATH, strerror(errno));
	else if (found == 0)
		snprintf(s->why, sizeof(s->why), "%s names no %s", KALLSYMS_PATH, SYSCALL_SYMBOL);
	close(fd);
	return found == 1 ? 0 : -1;
}

/* Two calls that change nothing and whose answers together identify
 * pidfd_set_mempolicy: it checks flags before anything else (EINVAL), and
 * with flags 0 fails on the pidfd -1 (EBADF) before touching any task. */
static int probe_answers_like_setter(struct setter *s)
{
	long r1, r2;
	int e1, e2;

	errno = 0;
	r1 = syscall(s->nr, -1, MPOL_DEFAULT, NULL, 0UL, 1U);
	e1 = errno;
	errno = 0;
	r2 = syscall(s->nr, -1, MPOL_DEFAULT, NULL, 0UL, 0U);
	e2 = errno;
	if (r1 == -1 && e1 == EINVAL && r2 == -1 && e2 == EBADF)
		return 0;
	snprintf(s->why, sizeof(s->why),
		 "syscall %ld does not answer like pidfd_set_mempolicy (probe: %s, %s)",
		 s->nr, r1 == -1 ? strerrorname_np(e1) : "success",
		 r2 == -1 ? strerrorname_np(e2) : "success");
	return -1;
}

/* Room in a node mask for any kernel: get_mempolicy(2) wants maxnode at
 * least nr_node_ids, and MAX_NUMNODES is at most 1024 wherever Linux runs. */
#define PROOF_NODE_BITS 4096UL
#define PROOF_WORDS (PROOF_NODE_BITS / (8 * sizeof(unsigned long)))
#define PROOF_MAXNODE (PROOF_NODE_BITS + 1)

struct own_policy {
	int mode;			/* with its mode flags */
	unsigned long mask[PROOF_WORDS];
};

/* The calling thread's task policy (get_mempolicy(2), flags 0), or with
 * MPOL_F_MEMS_ALLOWED its allowed nodes. */
static int get_own_policy(struct own_policy *p, unsigned long flags)
{
	memset(p, 0, sizeof(*p));
	return (int)syscall(SYS_get_mempolicy, &p->mode, p->mask, PROOF_MAXNODE, NULL, flags);
}

static bool same_policy(const struct own_policy *a, const struct own_policy *b)
{
	return a->mode == b->mode && memcmp(a->mask, b->mask, sizeof(a->mask)) == 0;
}

static int lowest_node(const struct own_policy *nodes)
{
	for (size_t w = 0; w < PROOF_WORDS; w++)
		if (nodes->mask[w])
			return (int)(w * 8 * sizeof(unsigned long)) + __builtin_ctzl(nodes->mask[w]);
	return -1;
}

/* The policy the proof asks for: preferred, on the lowest node the caller
 * may use, with static nodes -- or relative ones if the caller has that
 * already -- so that it differs from what the caller has: a number that
 * returns 0 and does nothing cannot pass for the syscall. */
static int proof_policy(const struct own_policy *before, struct own_policy *want, struct setter *s)
{
	struct own_policy allowed;
	int node;

	if (get_own_policy(&allowed, MPOL_F_MEMS_ALLOWED) < 0) {
		snprintf(s->why, sizeof(s->why), "cannot read the caller's allowed nodes to prove syscall %ld: %s",
			 s->nr, strerror(errno));
		return -1;
	}
	node = lowest_node(&allowed);
	if (node < 0) {
		snprintf(s->why, sizeof(s->why), "the caller may use no node to prove syscall %ld on", s->nr);
		return -1;
	}
	memset(want, 0, sizeof(*want));
	want->mask[(size_t)node / (8 * sizeof(unsigned long))] = 1UL << ((size_t)node % (8 * sizeof(unsigned long)));
	want->mode = MPOL_PREFERRED | MPOL_F_STATIC_NODES;
	if (same_policy(want, before))
		want->mode = MPOL_PREFERRED | MPOL_F_RELATIVE_NODES;
	return 0;
}

/* The proof: on the caller's own pidfd the number must set the caller's
 * own task policy -- a process pidfd names the thread-group leader, which
 * is the caller (resolution runs on the main thread, before any other
 * exists) -- to exactly the policy asked for, as get_mempolicy(2) reads it
 * back; whatever the number did, set_mempolicy(2) then puts back the
 * policy read before.  Only the tool's own task is ever named: whatever
 * else the number may be, it acts on the tool.  process_madvise(2), which
 * answers the probes alike, reads these arguments as an iovec at the
 * address MODE and as many iovecs as NMASK's address, and fails on them
 * before it looks at the pidfd.
 * Returns 0 when proven; 1 when the number refused with EPERM (the syscall
 * checks CAP_SYS_NICE once it has the task: the caller lacks it); else -1. */
static int prove_sets_own_policy(struct setter *s)
{
	struct own_policy before, want, after;
	bool read_back, set;
	int pidfd, err, read_err;
	long r;

	if (get_own_policy(&before, 0) < 0) {
		snprintf(s->why, sizeof(s->why), "cannot read the caller's own policy to prove syscall %ld: %s",
			 s->nr, strerror(errno));
		return -1;
	}
	if (proof_policy(&before, &want, s) < 0)
		return -1;
	pidfd = sys_pidfd_open(getpid(), 0);
	if (pidfd < 0) {
		snprintf(s->why, sizeof(s->why), "cannot open the caller's own pidfd to prove syscall %ld: %s",
			 s->nr, strerror(errno));
		return -1;
	}
	errno = 0;
	r = syscall(s->nr, pidfd, want.mode, want.mask, PROOF_MAXNODE, 0U);
	err = errno;
	close(pidfd);
	read_back = get_own_policy(&after, 0) == 0;
	read_err = errno;
	set = r == 0 && read_back && same_policy(&after, &want);
	if ((!read_back || !same_policy(&after, &before)) &&
	    syscall(SYS_set_mempolicy, before.mode, before.mask, PROOF_MAXNODE) < 0) {
		snprintf(s->why, sizeof(s->why), "cannot restore the caller's own policy after proving syscall %ld: %s",
			 s->nr, strerror(errno));
		return -1;
	}
	if (set)
		return 0;
	if (!read_back) {
		snprintf(s->why, sizeof(s->why), "cannot read the caller's own policy back after proving syscall %ld: %s",
			 s->nr, strerror(read_err));
		return -1;
	}
	if (r == -1 && err == EPERM) {
		snprintf(s->why, sizeof(s->why),
			 "syscall %ld refused to set the caller's own policy (EPERM: no CAP_SYS_NICE)", s->nr);
		return 1;
	}
	snprintf(s->why, sizeof(s->why),
		 "syscall %ld did not set the caller's own policy (it is not pidfd_set_mempolicy)", s->nr);
	return -1;
}

int sys_setter_resolve(struct setter *s, const char *env_nr)
{
	int proof;

	s->verified = false;
	s->denied = 0;
	s->why[0] = '\0';
	choose_number(s, env_nr);
	if (env_nr && s->nr < 0) {
		snprintf(s->why, sizeof(s->why), "PIDMEMPOLICY_SYSCALL_NR='%s' is not a syscall number", env_nr);
		return -1;
	}
	if (s->nr < 0) {
		snprintf(s->why, sizeof(s->why),
			 "no syscall number is known (build with --with-pidfd-set-mempolicy-nr or set PIDMEMPOLICY_SYSCALL_NR)");
		return -1;
	}
	/* The syscall is younger than pidfd_open: a lower number is some
	 * other, older system call on every architecture. */
	if (s->nr <= __NR_pidfd_open) {
		snprintf(s->why, sizeof(s->why), "syscall %ld (from %s) is older than pidfd_open and cannot be it",
			 s->nr, s->source);
		return -1;
	}
	if (kernel_names_syscall(s) < 0)
		return -1;
	if (probe_answers_like_setter(s) < 0)
		return -1;
	proof = prove_sets_own_policy(s);
	if (proof < 0)
		return -1;
	if (proof > 0) {
		s->denied = EPERM;
		return 0;
	}
	s->verified = true;
	return 0;
}

int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)syscall(__NR_pidfd_open, pid, flags);
}

bool sys_thread_pidfds_supported(void)
{
	int fd = sys_pidfd_open(getpid(), PIDFD_THREAD);

	if (fd < 0)
		return errno != EINVAL;
	close(fd);
	return true;
}

bool sys_is_thread_of(pid_t pid, pid_t tid)
{
	return syscall(SYS_tgkill, pid, tid, 0) == 0 || errno != ESRCH;
}

bool sys_null_signal_works(void)
{
	return syscall(SYS_tgkill, getpid(), gettid(), 0) == 0;
}

static int compare_fds(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void sys_close_fds(int *fds, size_t n)
{
	size_t run;

	/* pidfds take the lowest free descriptors: usually in order already */
	for (size_t i = 1; i < n; i++)
		if (fds[i] < fds[i - 1]) {
			qsort(fds, n, sizeof(*fds), compare_fds);
			break;
		}
	for (size_t i = 0; i < n; i = run) {
		for (run = i + 1; run < n && fds[run] == fds[run - 1] + 1; run++)
			;
		if (syscall(SYS_close_range, (unsigned int)fds[i], (unsigned int)fds[run - 1], 0U) == 0)
			continue;
		for (size_t j = i; j < run; j++)	/* before Linux 5.9 */
			close(fds[j]);
	}
}

int sys_pidfd_set_mempolicy(const struct setter *s, int pidfd, int mode,
			    const unsigned long *nmask, unsigned long maxnode)
{
	if (!s->verified) {	/* never call a number that was not proven */
		errno = s->denied ? s->denied : ENOSYS;
		return -1;
	}
	return (int)syscall(s->nr, pidfd, mode, nmask, maxnode, 0U);
}

int sys_pidfd_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int r;

	do
		r = poll(&pfd, 1, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	return r > 0 ? 1 : 0;
}

int sys_pidfd_inode(int pidfd, uint64_t *inode, bool *unique)
{
	struct stat st;
	struct statfs sfs;

	if (fstat(pidfd, &st) < 0 || fstatfs(pidfd, &sfs) < 0)
		return -1;
	*inode = (uint64_t)st.st_ino;
	*unique = (unsigned long)sfs.f_type == (unsigned long)PIDFS_MAGIC;
	return 0;
}

bool sys_kernel_supports_mode(int mode)
{
	struct stat st;

	if (mode != MPOL_WEIGHTED_INTERLEAVE)
		return true;
	return stat("/sys/kernel/mm/mempolicy/weighted_interleave", &st) == 0;
}
