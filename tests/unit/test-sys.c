/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests: the verification of pidfd_set_mempolicy's number
 * (sys_setter_resolve) against a fake kernel.  The link wraps syscall(2),
 * statfs(2) and open(2) (-Wl,--wrap, see Makefile.am): the candidate number,
 * get_mempolicy(2) and set_mempolicy(2) are answered here from a fake task
 * policy, tracefs names the syscall when a test says so and /proc/kallsyms
 * is empty; everything else goes to the real calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "compat.h"
#include "sys.h"
#include "tap.h"

#define NR 451			/* the candidate number of these tests */
#define WORD_BITS (8 * sizeof(unsigned long))
#define WORDS 64		/* 4096 nodes, as many as sys.c's masks */
#define EVENT "/sys/kernel/tracing/events/syscalls/sys_enter_pidfd_set_mempolicy"

/* What the number at NR is. */
enum kind {
	SETTER,		/* pidfd_set_mempolicy */
	MADVISE,	/* process_madvise(pidfd, vec, vlen, advice, flags) */
	NOOP,		/* answers the probes, then returns 0 doing nothing */
	DROPS_FLAGS,	/* sets the mode without its mode flags */
	CACHESTAT,	/* cachestat(fd, range, cstat, flags): EBADF first */
};

struct call {
	int pidfd, mode;
	unsigned long mask0, maxnode;
	unsigned int flags;
};

static struct {
	bool named;			/* tracefs names the syscall */
	enum kind kind;
	bool no_cap;			/* the caller lacks CAP_SYS_NICE */
	bool restore_fails;		/* set_mempolicy(2) fails */
	bool unreadable_after;		/* get_mempolicy(2) fails after the proof's call */
	int mode;			/* the caller's task policy */
	unsigned long mask[WORDS];
	unsigned long allowed[WORDS];	/* its Mems_allowed */
	int own_pidfd;			/* the last pidfd opened on getpid() */
	int ncalls;			/* calls of NR, the first few in calls */
	struct call calls[8];
	int nsets;			/* set_mempolicy(2) calls */
} k;

long __real_syscall(long nr, ...);
int __real_statfs(const char *path, struct statfs *buf);
int __real_open(const char *path, int flags, ...);

int __wrap_statfs(const char *path, struct statfs *buf);
int __wrap_open(const char *path, int flags, ...);
long __wrap_syscall(long nr, ...);

int __wrap_statfs(const char *path, struct statfs *buf)
{
	if (strcmp(path, EVENT) != 0)
		return __real_statfs(path, buf);
	if (!k.named) {
		errno = ENOENT;
		return -1;
	}
	memset(buf, 0, sizeof(*buf));
	buf->f_type = 0x74726163;	/* TRACEFS_MAGIC */
	return 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if (strcmp(path, "/proc/kallsyms") == 0)
		path = "/dev/null";	/* names nothing */
	return __real_open(path, flags, mode);
}

static long fail(int err)
{
	errno = err;
	return -1;
}

static void set_bit(unsigned long *mask, unsigned int n)
{
	mask[n / WORD_BITS] |= 1UL << (n % WORD_BITS);
}

static size_t words_of(unsigned long maxnode)
{
	size_t w = (maxnode - 1 + WORD_BITS - 1) / WORD_BITS;

	return w < WORDS ? w : WORDS;
}

static long fake_get_mempolicy(int *mode, unsigned long *mask, unsigned long maxnode, unsigned long flags)
{
	if (maxnode - 1 < WORDS * WORD_BITS)
		return fail(EINVAL);	/* below nr_node_ids */
	if (k.unreadable_after && k.ncalls > 2)
		return fail(EFAULT);
	if (flags == MPOL_F_MEMS_ALLOWED) {
		*mode = 0;
		memcpy(mask, k.allowed, sizeof(k.allowed));
	} else if (flags == 0) {
		*mode = k.mode;
		memcpy(mask, k.mask, sizeof(k.mask));
	} else {
		return fail(EINVAL);
	}
	return 0;
}

static long fake_set(int mode, const unsigned long *mask, unsigned long maxnode)
{
	k.mode = mode;
	memset(k.mask, 0, sizeof(k.mask));
	if (mask)
		memcpy(k.mask, mask, words_of(maxnode) * sizeof(*mask));
	return 0;
}

static long fake_candidate(int pidfd, int mode, const unsigned long *mask,
			   unsigned long maxnode, unsigned int flags)
{
	if (k.ncalls < 8)
		k.calls[k.ncalls] = (struct call){ pidfd, mode, mask ? mask[0] : 0, maxnode, flags };
	k.ncalls++;
	switch (k.kind) {
	case CACHESTAT:
		return fail(EBADF);
	case MADVISE:
		if (flags)
			return fail(EINVAL);
		/* import_iovec(): vlen is NMASK's address, vec is MODE */
		if ((unsigned int)(unsigned long)mask > 1024)
			return fail(EINVAL);
		if (mask)
			return fail(EFAULT);
		return pidfd == -1 ? fail(EBADF) : fail(EINVAL);
	case NOOP:
		if (flags)
			return fail(EINVAL);
		return pidfd == -1 ? fail(EBADF) : 0;
	case SETTER:
	case DROPS_FLAGS:
		if (flags)
			return fail(EINVAL);
		if (pidfd != k.own_pidfd)
			return fail(EBADF);
		if (k.no_cap)
			return fail(EPERM);
		return fake_set(k.kind == DROPS_FLAGS ? mode & 0xff : mode, mask, maxnode);
	}
	return fail(ENOSYS);
}

long __wrap_syscall(long nr, ...)
{
	long a[6], r;
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	switch (nr) {
	case NR:
		return fake_candidate((int)a[0], (int)a[1], (const unsigned long *)a[2],
				      (unsigned long)a[3], (unsigned int)a[4]);
	case SYS_get_mempolicy:
		return fake_get_mempolicy((int *)a[0], (unsigned long *)a[1], (unsigned long)a[2],
					  (unsigned long)a[4]);
	case SYS_set_mempolicy:
		k.nsets++;
		if (k.restore_fails)
			return fail(EINVAL);
		return fake_set((int)a[0], (const unsigned long *)a[1], (unsigned long)a[2]);
	case __NR_pidfd_open:
		r = __real_syscall(nr, a[0], a[1]);
		if (r >= 0 && (pid_t)a[0] == getpid())
			k.own_pidfd = (int)r;
		return r;
	default:
		return __real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
}

/* A fresh fake kernel: the caller has the default policy and may use
 * nodes 0 and 1. */
static void reset(bool named, enum kind kind)
{
	memset(&k, 0, sizeof(k));
	k.named = named;
	k.kind = kind;
	k.mode = MPOL_DEFAULT;
	set_bit(k.allowed, 0);
	set_bit(k.allowed, 1);
	k.own_pidfd = -2;
}

static bool policy_is(int mode, unsigned long mask0)
{
	for (size_t w = 1; w < WORDS; w++)
		if (k.mask[w])
			return false;
	return k.mode == mode && k.mask[0] == mask0;
}

static const char *NOT_IT = "syscall 451 did not set the caller's own policy (it is not pidfd_set_mempolicy)";

int main(void)
{
	struct setter s;
	int r, pidfd;

	reset(false, SETTER);
	r = sys_setter_resolve(&s, "451");
	ok(r == -1 && !s.verified && !s.denied, "not named: refused");
	is_str(s.why, "/proc/kallsyms names no sys_pidfd_set_mempolicy", "not named: the reason");
	ok(k.ncalls == 0 && k.nsets == 0, "not named: the number is never called");

	reset(true, CACHESTAT);
	r = sys_setter_resolve(&s, "451");
	ok(r == -1 && !s.verified, "cachestat: refused by the probes");
	is_str(s.why, "syscall 451 does not answer like pidfd_set_mempolicy (probe: EBADF, EBADF)",
	       "cachestat: the probes' reason");
	ok(k.ncalls == 2 && k.calls[0].pidfd == -1 && k.calls[1].pidfd == -1,
	   "cachestat: only the two probes were made, with pidfd -1");

	reset(true, SETTER);
	r = sys_setter_resolve(&s, "451");
	ok(r == 0 && s.verified && !s.denied, "pidfd_set_mempolicy: proven");
	ok(k.ncalls == 3, "three calls: two probes and the proof (%d)", k.ncalls);
	ok(k.calls[0].pidfd == -1 && k.calls[0].flags == 1, "first probe: flags 1, pidfd -1");
	ok(k.calls[1].pidfd == -1 && k.calls[1].flags == 0 && k.calls[1].mask0 == 0,
	   "second probe: flags 0, pidfd -1, no mask");
	ok(k.calls[2].pidfd == k.own_pidfd && k.calls[2].pidfd >= 0 && k.calls[2].flags == 0,
	   "the proof names the caller's own pidfd, flags 0");
	ok(k.calls[2].mode == (MPOL_PREFERRED | MPOL_F_STATIC_NODES) && k.calls[2].mask0 == 1UL &&
	   k.calls[2].maxnode == WORDS * WORD_BITS + 1,
	   "the proof asks for preferred=static on the lowest allowed node");
	ok(policy_is(MPOL_DEFAULT, 0) && k.nsets == 1, "the caller's default policy is restored");
	pidfd = k.own_pidfd;
	ok(fcntl(pidfd, F_GETFD) < 0 && errno == EBADF, "the proof's pidfd is closed");
	r = sys_pidfd_set_mempolicy(&s, pidfd, MPOL_BIND, k.allowed, 65);
	ok(r == 0 && k.ncalls == 4, "a proven number is called");

	reset(true, SETTER);
	memset(k.allowed, 0, sizeof(k.allowed));
	set_bit(k.allowed, 66);
	set_bit(k.allowed, 70);
	k.mode = MPOL_INTERLEAVE;
	set_bit(k.mask, 66);
	set_bit(k.mask, 70);
	r = sys_setter_resolve(&s, "451");
	ok(r == 0 && s.verified, "allowed nodes 66,70: proven");
	ok(k.calls[2].mode == (MPOL_PREFERRED | MPOL_F_STATIC_NODES) && k.calls[2].mask0 == 0,
	   "the proof's node is 66, in the second word");
	ok(k.mode == MPOL_INTERLEAVE && k.mask[0] == 0 && k.mask[1] == ((1UL << 2) | (1UL << 6)),
	   "interleave over 66,70 restored");

	reset(true, SETTER);
	k.mode = MPOL_PREFERRED | MPOL_F_STATIC_NODES;
	k.mask[0] = 1;
	r = sys_setter_resolve(&s, "451");
	ok(r == 0 && s.verified, "caller already preferred=static on node 0: proven");
	ok(k.calls[2].mode == (MPOL_PREFERRED | MPOL_F_RELATIVE_NODES) && k.calls[2].mask0 == 1,
	   "the proof asks for another policy: preferred=relative");
	ok(policy_is(MPOL_PREFERRED | MPOL_F_STATIC_NODES, 1), "preferred=static:0 restored");

	reset(true, MADVISE);
	r = sys_setter_resolve(&s, "451");
	ok(r == -1 && !s.verified && !s.denied, "process_madvise: refused by the proof");
	is_str(s.why, NOT_IT, "process_madvise: the reason");
	ok(k.ncalls == 3 && k.calls[2].pidfd == k.own_pidfd, "process_madvise: proof on the own pidfd only");
	ok(policy_is(MPOL_DEFAULT, 0) && k.nsets == 0, "process_madvise: policy untouched, nothing to restore");
	errno = 0;
	r = sys_pidfd_set_mempolicy(&s, 0, MPOL_BIND, k.allowed, 65);
	ok(r == -1 && errno == ENOSYS && k.ncalls == 3, "a refused number is never called again");

	reset(true, NOOP);
	r = sys_setter_resolve(&s, "451");
	ok(r == -1 && !s.verified, "returns 0 doing nothing: refused");
	is_str(s.why, NOT_IT, "returns 0 doing nothing: the reason");
	ok(policy_is(MPOL_DEFAULT, 0) && k.nsets == 0, "returns 0 doing nothing: policy untouched");

	reset(true, DROPS_FLAGS);
	r = sys_setter_resolve(&s, "451");
	ok(r == -1 && !s.verified, "sets another policy than asked: refused");
	is_str(s.why, NOT_IT, "sets another policy than asked: the reason");
	ok(policy_is(MPOL_DEFAULT, 0) && k.nsets == 1, "sets another policy than asked: restored");

	reset(true, SETTER);
	k.no_cap = true;
	r = sys_setter_resolve(&s, "451");
	ok(r == 0 && !s.verified && s.denied == EPERM, "no CAP_SYS_NICE: denied, not verified");
	ok(policy_is(MPOL_DEFAULT, 0) && k.nsets == 0, "no CAP_SYS_NICE: policy untouched");
	errno = 0;
	r = sys_pidfd_set_mempolicy(&s, 0, MPOL_BIND, k.allowed, 65);
	ok(r == -1 && errno == EPERM && k.ncalls == 3, "denied: EPERM without a call");

	reset(true, SETTER);
	k.restore_fails = true;
	r = sys_setter_resolve(&s, "451");
	ok(r == -1 && !s.verified, "proven, but the policy cannot be restored: not trusted");
	is_str(s.why, "cannot restore the caller's own policy after proving syscall 451: Invalid argument",
	       "restore failure: the reason");

	reset(true, SETTER);
	k.unreadable_after = true;
	r = sys_setter_resolve(&s, "451");
	ok(r == -1 && !s.verified, "the policy cannot be read back: not trusted");
	is_str(s.why, "cannot read the caller's own policy back after proving syscall 451: Bad address",
	       "read-back failure: the reason");
	ok(policy_is(MPOL_DEFAULT, 0) && k.nsets == 1, "read-back failure: restored all the same");

	reset(true, SETTER);
	memset(k.allowed, 0, sizeof(k.allowed));
	r = sys_setter_resolve(&s, "451");
	ok(r == -1 && !s.verified && k.ncalls == 2, "no allowed node: refused before the proof's call");
	is_str(s.why, "the caller may use no node to prove syscall 451 on", "no allowed node: the reason");

	return tap_done();
}
