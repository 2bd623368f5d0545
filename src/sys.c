/*
 * sys.c - raw system calls: pidfd_open, pidfd_set_mempolicy (number lookup
 * and verification), pidfd liveness and identity, and small reads of kernel
 * text files.  Decides nothing about policy.
 *
 * The number of pidfd_set_mempolicy is not in mainline.  Its v2 patch uses
 * 451 on x86_64, which every stock kernel since 6.5 gives to cachestat, so a
 * number is only ever called once the running kernel has been shown to
 * provide the syscall there.
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

int sys_setter_resolve(struct setter *s, const char *env_nr)
{
	s->verified = false;
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
	if (!s->verified) {	/* never call a number that was not verified */
		errno = ENOSYS;
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
