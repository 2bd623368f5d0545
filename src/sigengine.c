/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigengine.c - the signal engine (sigengine.h): the handler put in
 * through a held thread and taken out again, the signals and the
 * answers.  The plan and the route from /proc are sigplan.c's; the
 * handler's code and the layout of the region, sighandler.h's; holding a
 * thread and making calls in it, the ptrace backend's (ptrace-tracee.h).
 */
#include "config.h"

#include "sigengine.h"

#if PMP_SIGENGINE_SUPPORTED

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "compat.h"
#include "procfs.h"
#include "ptrace-arch.h"
#include "ptrace-mem.h"
#include "ptrace-tracee.h"
#include "sighandler.h"
#include "sys.h"

#define SA_RESTORER_	0x04000000UL
#define MFD_EXEC_	0x0010U		/* Linux 6.3: executable despite vm.memfd_noexec */
#define PIDFD_SIGNAL_THREAD_ 1U		/* Linux 6.9 */
#define QUIET_MS	200		/* the end waits this long for handlers to finish */
#define REGION_NAME	"pidmempolicy"

/* struct sigaction as rt_sigaction(2) takes it, the same on x86_64 and aarch64. */
struct ksigaction {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

struct sigengine {
	struct ptrace_session *s;
	pid_t pid;
	int sig;
	uint32_t nonce;
	int fd;			/* the tool's descriptor of the region */
	unsigned char *map;	/* and its mapping */
	size_t len;
	unsigned long ino;	/* the region's inode and device, to know it in maps */
	unsigned int dev_major, dev_minor;
	unsigned long at;	/* its address in the target, 0: not mapped there */
	bool gone;		/* the target unmapped it: at is only its old address */
	uint32_t nslots, next;
	pid_t *tids;		/* the thread each slot was sent to */
	bool installed;		/* the disposition is (or may be) ours */
	bool theirs;		/* the target put its own handler in meanwhile */
	int leader_by_pidfd;	/* PIDFD_SIGNAL_THREAD: 1 works, 0 not, -1 not tried */
	int pidfd;		/* the process's, pinned while a thread was held */
	pid_t self;		/* the tool's pid and uid, for each siginfo */
	uid_t uid;
};

/* ---- the region --------------------------------------------------------------- */

static void *data_at(const struct sigengine *e, size_t off)
{
	return e->map + SIGH_DATA_AT + off;
}

static _Atomic uint32_t *word(const struct sigengine *e, size_t off)
{
	return (_Atomic uint32_t *)data_at(e, off);
}

static void put64(const struct sigengine *e, size_t off, uint64_t v)
{
	memcpy(data_at(e, off), &v, sizeof(v));
}

static unsigned char *slot_of(const struct sigengine *e, uint32_t slot)
{
	return data_at(e, SIGH_SLOTS_AT + (size_t)slot * SIGH_SLOT_SIZE);
}

static size_t region_len(uint32_t nslots)
{
	size_t data = SIGH_SLOTS_AT + (size_t)nslots * SIGH_SLOT_SIZE;

	return SIGH_DATA_AT + (data + SIGH_DATA_AT - 1) / SIGH_DATA_AT * SIGH_DATA_AT;
}

/* The descriptor the thread's memfd_create gave, taken with
 * pidfd_getfd(2) and proven fresh (an empty, unlinked memfd without
 * seals), then sized and sealed so that the target cannot shrink it under
 * the tool's mapping (which would be SIGBUS in the tool), and mapped. */
static int take_region(struct sigengine *e, long target_fd, char *why, size_t len)
{
	const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	struct stat st;
	int fd;

	fd = (int)syscall(SYS_pidfd_getfd, e->pidfd, (int)target_fd, 0);
	if (fd < 0) {
		snprintf(why, len, "pidfd_getfd(2) failed: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != 0 || st.st_nlink != 0 ||
	    fcntl(fd, F_GET_SEALS) != 0) {
		snprintf(why, len, "the descriptor memfd_create(2) gave in the target is not a fresh memfd");
		goto fail;
	}
	if (ftruncate(fd, (off_t)e->len) < 0 || fcntl(fd, F_ADD_SEALS, seals) < 0 ||
	    fcntl(fd, F_GET_SEALS) != seals) {
		snprintf(why, len, "the memfd cannot be sized and sealed: %s", strerror(errno));
		goto fail;
	}
	e->map = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (e->map == MAP_FAILED) {
		e->map = NULL;
		snprintf(why, len, "the memfd cannot be mapped: %s", strerror(errno));
		goto fail;
	}
	e->fd = fd;
	e->ino = st.st_ino;
	e->dev_major = major(st.st_dev);
	e->dev_minor = minor(st.st_dev);
	return 0;
fail:
	close(fd);
	return -1;
}

/* The tool's side of the region let go of. */
static void drop_region(struct sigengine *e)
{
	if (e->map)
		(void)munmap(e->map, e->len);
	e->map = NULL;
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

static bool vma_of_region(const struct sigengine *e, const struct tracee_vma *v, unsigned long start,
			  unsigned long end, unsigned int prot)
{
	return v->start == start && v->end == end && v->prot == (prot | PMP_PROCMAP_VMA_SHARED) &&
	       v->inode == e->ino && v->dev_major == e->dev_major && v->dev_minor == e->dev_minor;
}

/* Whether [e->at, +len) is still the region, shared mappings of the memfd:
 * its code part read+exec and its data part read+write (split), or all
 * of it read+exec (before the mprotect). */
static bool region_is_ours(const struct sigengine *e, const struct tracee *t, bool split)
{
	const unsigned int rx = PMP_PROCMAP_VMA_READABLE | PMP_PROCMAP_VMA_EXECUTABLE;
	const unsigned int rw = PMP_PROCMAP_VMA_READABLE | PMP_PROCMAP_VMA_WRITABLE;
	struct tracee_vma code, data;

	if (tracee_vma_at(t, e->at, &code) < 0)
		return false;
	if (!split)
		return vma_of_region(e, &code, e->at, e->at + e->len, rx);
	return vma_of_region(e, &code, e->at, e->at + SIGH_DATA_AT, rx) &&
	       tracee_vma_at(t, e->at + SIGH_DATA_AT, &data) == 0 &&
	       vma_of_region(e, &data, e->at + SIGH_DATA_AT, e->at + e->len, rw);
}

/* ---- calls in the held thread ------------------------------------------------ */

/* One call; its result in *rv.  0, or -1 with why (the call itself
 * failed, or the thread did). */
static int call(struct tracee *t, long nr, unsigned long a0, unsigned long a1, unsigned long a2,
		unsigned long a3, unsigned long a4, unsigned long a5, long *rv, const char *what,
		char *why, size_t len)
{
	struct tracee_call c = { .nr = nr, .arg = { a0, a1, a2, a3, a4, a5 } };

	if (tracee_make_call(t, &c, rv) < 0) {
		snprintf(why, len, "%s in the held thread failed: %s", what, t->res->detail);
		return -1;
	}
	if (tracee_is_error(*rv)) {
		snprintf(why, len, "%s in the target failed: %s", what, strerror((int)-*rv));
		return -1;
	}
	return 0;
}

static unsigned long target_data(const struct sigengine *e, size_t off)
{
	return e->at + SIGH_DATA_AT + off;
}

/* The header, the mask and the actions, once the region's address in the
 * target is known. */
static void fill_region(struct sigengine *e, const struct ptrace_request *req)
{
	size_t mask = scratch_mask_bytes(req);
	struct ksigaction act = {
		.handler = e->at + (uint64_t)(pmp_sigh_handler - pmp_sigh_start),
		.flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_RESTORER_,
		.restorer = e->at + (uint64_t)(pmp_sigh_restorer - pmp_sigh_start),
		.mask = ~0ULL,
	};
	struct ksigaction ign = { .handler = (uint64_t)(uintptr_t)SIG_IGN, .flags = SA_RESTORER_,
				  .restorer = act.restorer };

	memcpy(e->map, pmp_sigh_start, (size_t)(pmp_sigh_end - pmp_sigh_start));
	atomic_store(word(e, SIGH_NONCE), e->nonce);
	atomic_store(word(e, SIGH_NSLOTS), e->nslots);
	put64(e, SIGH_MODE, (uint64_t)(unsigned int)req->mode);
	put64(e, SIGH_MASK, mask ? target_data(e, SIGH_MASK_AT) : 0);
	put64(e, SIGH_MAXNODE, mask ? req->maxnode : 0);
	if (mask)
		memcpy(data_at(e, SIGH_MASK_AT), req->mask, mask);
	memcpy(data_at(e, SIGH_ACT_AT), &act, sizeof(act));
	memcpy(data_at(e, SIGH_IGNACT_AT), &ign, sizeof(ign));
}

static uint64_t handler_in_target(const struct sigengine *e)
{
	return e->at + (uint64_t)(pmp_sigh_handler - pmp_sigh_start);
}

static uint64_t act_handler(const struct sigengine *e, size_t off)
{
	struct ksigaction a;

	memcpy(&a, data_at(e, off), sizeof(a));
	return a.handler;
}

struct install {
	struct sigengine *e;
	const struct ptrace_request *req;
	char *why;
	size_t len;
};

/* memfd_create in the held thread, its descriptor in *fd.  MFD_EXEC
 * (Linux 6.3), so that vm.memfd_noexec=1 does not make the region
 * unexecutable; a kernel that does not know the flag answers EINVAL, and
 * is asked again without it. */
static int memfd_in_target(struct tracee *t, struct install *in, long *fd)
{
	const unsigned long name = t->s->page + SCRATCH_NAME_AT;

	if (call(t, SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC_, 0, 0, 0, 0, fd,
		 "memfd_create", in->why, in->len) == 0)
		return 0;
	if (*fd != -EINVAL)
		return -1;
	return call(t, SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING, 0, 0, 0, 0, fd, "memfd_create",
		    in->why, in->len);
}

/* The region in the target: memfd_create, the tool takes and maps it, the
 * target maps it, the descriptor closed.  The name is read from the
 * scratch page. */
static int map_in_target(struct tracee *t, struct install *in)
{
	struct sigengine *e = in->e;
	long fd = 0, rv;

	if (scratch_ensure(t) < 0 ||
	    tracee_mem_write(t->tid, t->s->page + SCRATCH_NAME_AT, REGION_NAME, sizeof(REGION_NAME)) < 0) {
		snprintf(in->why, in->len, "the scratch page cannot hold the memfd's name");
		return -1;
	}
	if (memfd_in_target(t, in, &fd) < 0)
		return -1;
	if (take_region(e, fd, in->why, in->len) < 0 ||
	    call(t, SYS_mmap, 0, e->len, PROT_READ | PROT_EXEC, MAP_SHARED, (unsigned long)fd, 0, &rv,
		 "mmap of the memfd", in->why, in->len) < 0) {
		(void)call(t, SYS_close, (unsigned long)fd, 0, 0, 0, 0, 0, &rv, "close", in->why, in->len);
		return -1;
	}
	e->at = (unsigned long)rv;
	if (call(t, SYS_mprotect, target_data(e, 0), e->len - SIGH_DATA_AT, PROT_READ | PROT_WRITE, 0, 0, 0,
		 &rv, "mprotect of the memfd's data", in->why, in->len) < 0 ||
	    call(t, SYS_close, (unsigned long)fd, 0, 0, 0, 0, 0, &rv, "close", in->why, in->len) < 0)
		return -1;
	return 0;
}

/* The handler put in; the action found must have been the default one
 * (the target may have put its own in since the plan was read: then it
 * is put back at once). */
static int put_handler(struct tracee *t, struct install *in)
{
	struct sigengine *e = in->e;
	long rv;

	if (!region_is_ours(e, t, true)) {
		snprintf(in->why, in->len, "the memfd's mapping changed under the injection");
		return -1;
	}
	fill_region(e, in->req);
	if (call(t, SYS_rt_sigaction, (unsigned long)e->sig, target_data(e, SIGH_ACT_AT),
		 target_data(e, SIGH_OLDACT_AT), 8, 0, 0, &rv, "rt_sigaction", in->why, in->len) < 0)
		return -1;
	e->installed = true;
	if (act_handler(e, SIGH_OLDACT_AT) != (uint64_t)(uintptr_t)SIG_DFL) {
		snprintf(in->why, in->len, "the target set a handler for signal %d meanwhile", e->sig);
		if (call(t, SYS_rt_sigaction, (unsigned long)e->sig, target_data(e, SIGH_OLDACT_AT), 0, 8, 0, 0,
			 &rv, "rt_sigaction", in->why, in->len) == 0)
			e->installed = false;
		return -1;
	}
	return 0;
}

/* The install, in the stop that set the thread's own policy. */
static int install_work(struct tracee *t, void *arg)
{
	struct install *in = arg;
	struct sigengine *e = in->e;
	long rv;

	e->pidfd = sys_pidfd_open(e->pid, 0);	/* the thread held pins the PID */
	if (e->pidfd < 0) {
		snprintf(in->why, in->len, "pidfd_open(2) failed: %s", strerror(errno));
		return -1;
	}
	if (map_in_target(t, in) == 0 && put_handler(t, in) == 0) {
		/* the start knows the outcome by why alone (the session drops
		 * this result): a call retried on the way leaves none */
		in->why[0] = '\0';
		return 0;
	}
	if (e->at && !e->installed && (region_is_ours(e, t, true) || region_is_ours(e, t, false)) &&
	    call(t, SYS_munmap, e->at, e->len, 0, 0, 0, 0, &rv, "munmap", in->why, in->len) == 0)
		e->at = 0;
	return -1;
}

/* ---- the end ------------------------------------------------------------------ */

static long us_since(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000000 + (now.tv_nsec - since->tv_nsec) / 1000;
}

/* rt_sigaction(2) of the engine's signal in the held thread, the actions
 * at offsets of the region's data (set: 0 for none; old: where the one
 * replaced goes).  Through the region while the target still maps it,
 * else (the target unmapped it) through the session's scratch page,
 * copied in and out: the tool's own mapping of the memfd stays. */
static int sigact(struct tracee *t, struct sigengine *e, size_t set, size_t old, char *why, size_t len)
{
	const size_t sz = sizeof(struct ksigaction);
	unsigned long base;
	long rv;

	if (!e->gone)
		return call(t, SYS_rt_sigaction, (unsigned long)e->sig, set ? target_data(e, set) : 0,
			    target_data(e, old), 8, 0, 0, &rv, "rt_sigaction", why, len);
	if (scratch_ensure(t) < 0) {
		snprintf(why, len, "no scratch page for rt_sigaction: %s", t->res->detail);
		return -1;
	}
	base = t->s->page + SCRATCH_NAME_AT;
	if (set && tracee_mem_write(t->tid, base, data_at(e, set), sz) < 0) {
		snprintf(why, len, "cannot write the scratch page: %s", strerror(errno));
		return -1;
	}
	if (call(t, SYS_rt_sigaction, (unsigned long)e->sig, set ? base : 0, base + sz, 8, 0, 0, &rv,
		 "rt_sigaction", why, len) < 0)
		return -1;
	if (tracee_mem_read(t->tid, base + sz, data_at(e, old), sz) < 0) {
		snprintf(why, len, "cannot read the scratch page: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The disposition: SIG_IGN first, which discards the signal wherever it
 * is still pending, then the one found at the start.  A handler the
 * target put in meanwhile is its own, and stays. */
static int restore_action(struct tracee *t, struct sigengine *e, char *why, size_t len)
{
	if (sigact(t, e, 0, SIGH_CURACT_AT, why, len) < 0)
		return -1;
	if (act_handler(e, SIGH_CURACT_AT) != handler_in_target(e)) {
		e->theirs = true;
		e->installed = false;
		return 0;
	}
	if (sigact(t, e, SIGH_IGNACT_AT, SIGH_CURACT_AT, why, len) < 0)
		return -1;
	if (act_handler(e, SIGH_CURACT_AT) != handler_in_target(e)) {
		/* theirs came in between: put it back (a signal of theirs
		 * pending then is lost with SIG_IGN) */
		e->theirs = true;
		e->installed = false;
		return sigact(t, e, SIGH_CURACT_AT, SIGH_SPAREACT_AT, why, len);
	}
	if (sigact(t, e, SIGH_OLDACT_AT, SIGH_SPAREACT_AT, why, len) < 0)
		return -1;
	e->installed = false;
	return 0;
}

/* The first slot from `from' on whose thread answered and is not yet
 * proven out of the handler's code (sigengine_may_be_leaving), or nslots. */
static uint32_t first_leaving(const struct sigengine *e, uint32_t from)
{
	for (uint32_t i = from; i < e->next; i++)
		if (atomic_load((_Atomic uint32_t *)(slot_of(e, i) + SIGH_SLOT_STATE)) == 1 &&
		    sigengine_may_be_leaving(e->pid, e->tids[i]))
			return i;
	return e->nslots;
}

/* Every handler run that began has passed its last store and every thread
 * that answered is provably past its last instruction; after runs without
 * a slot (stray signals of this number: more runs than answers), every
 * thread of the process but the held one is. */
static bool quiet(const struct sigengine *e, pid_t held)
{
	struct timespec since;
	uint32_t from = 0, left;

	clock_gettime(CLOCK_MONOTONIC, &since);
	usleep(1000);	/* a delivery already under way enters the handler */
	while (atomic_load(word(e, SIGH_ENTERED)) != (left = atomic_load(word(e, SIGH_LEFT))) ||
	       (from = first_leaving(e, from)) < e->nslots ||
	       (left != atomic_load(word(e, SIGH_NDONE)) && sigengine_any_may_be_leaving(e->pid, held))) {
		if (us_since(&since) / 1000 >= QUIET_MS)
			return false;
		usleep(1000);
	}
	return true;
}

struct uninstall {
	struct sigengine *e;
	bool unproven;		/* the region stays: no other thread would do better */
	char why[160];
};

/* Done (0) once the action is put back and the region is gone from the
 * target, is no longer provably the one mapped, or must stay (unproven).
 * A held thread inside the code itself leaves the work to another. */
static int uninstall_work(struct tracee *t, void *arg)
{
	struct uninstall *u = arg;
	struct sigengine *e = u->e;
	long rv;

	/* what is there now is the target's: not used, not unmapped */
	if (e->at && !region_is_ours(e, t, true))
		e->gone = true;
	if (e->installed && restore_action(t, e, u->why, sizeof(u->why)) < 0)
		return -1;
	if (e->gone)
		e->at = 0;
	if (!e->at)
		return 0;
	if (arch_pc(&t->regs0) >= e->at && arch_pc(&t->regs0) < e->at + SIGH_DATA_AT) {
		snprintf(u->why, sizeof(u->why), "the thread held is inside the handler's code");
		return -1;
	}
	if (!quiet(e, t->tid)) {
		snprintf(u->why, sizeof(u->why), "a thread may still be inside the handler's code after %d ms", QUIET_MS);
		u->unproven = true;
		return 0;
	}
	if (call(t, SYS_munmap, e->at, e->len, 0, 0, 0, 0, &rv, "munmap", u->why, sizeof(u->why)) < 0)
		return -1;
	e->at = 0;
	return 0;
}

static void uninstall(struct sigengine *e, char *why, size_t len)
{
	struct uninstall u = { .e = e };

	if ((e->installed || e->at) && (ptrace_work_any(e->s, uninstall_work, &u) < 0 || u.unproven))
		snprintf(why, len, "%s", u.why[0] ? u.why : "no thread could be held");
}

/* The tool was killed: its tracing process takes the handler out. */
static void orphan(void *arg)
{
	char why[160];

	uninstall(arg, why, sizeof(why));
}

void sigengine_end(struct sigengine *e, char *note, size_t len)
{
	char why[160] = "";

	if (len)
		note[0] = '\0';
	if (!e)
		return;
	ptrace_session_signalled(e->s, NULL, NULL);
	uninstall(e, why, sizeof(why));
	if (why[0] && len) {
		if (e->installed)
			snprintf(note, len, "the handler for signal %d is left installed in pid %d (%s)", e->sig,
				 (int)e->pid, why);
		else if (e->at)
			snprintf(note, len, "the handler's memory (/memfd:%s) is left mapped in pid %d (%s)",
				 REGION_NAME, (int)e->pid, why);
	}
	drop_region(e);
	if (e->pidfd >= 0)
		close(e->pidfd);
	free(e->tids);
	free(e);
}

/* ---- the start ---------------------------------------------------------------- */

struct sigengine *sigengine_start(struct ptrace_session *s, const struct sigplan *plan,
				  const struct task_handle *h, const struct ptrace_request *req,
				  struct ptrace_result *res, char *why, size_t len)
{
	struct sigengine *e = calloc(1, sizeof(*e));
	struct install in = { .e = e, .req = req, .why = why, .len = len };
	uint32_t threads = 0;
	struct proc_status st;

	why[0] = '\0';
	if (!e) {
		ptrace_set_thread_policy(s, h, req, res);
		snprintf(why, len, "out of memory");
		return NULL;
	}
	e->s = s;
	e->pid = plan->pid;
	e->sig = plan->sig;
	e->fd = -1;
	e->pidfd = -1;
	e->leader_by_pidfd = -1;
	e->self = getpid();
	e->uid = getuid();
	if (procfs_task_status(0, plan->pid, &st) == 0 && st.threads > 0)
		threads = (uint32_t)st.threads;
	e->nslots = threads < 1U << 18 ? 2 * threads + 1024 : 1U << 19;
	e->len = region_len(e->nslots);
	e->tids = calloc(e->nslots, sizeof(*e->tids));
	if (!e->tids) {
		free(e);
		ptrace_set_thread_policy(s, h, req, res);
		snprintf(why, len, "out of memory");
		return NULL;
	}
	if (getrandom(&e->nonce, sizeof(e->nonce), 0) != (ssize_t)sizeof(e->nonce))
		e->nonce = (uint32_t)getpid() ^ (uint32_t)time(NULL);
	/* the tool dying from here on: its tracing process takes it out */
	ptrace_session_signalled(s, orphan, e);
	ptrace_set_thread_policy_and(s, h, req, res, install_work, &in);
	if (e->installed && !why[0])
		return e;
	if (!why[0])
		snprintf(why, len, "the handler could not be put in (%s)", res->detail);
	sigengine_end(e, NULL, 0);
	/* the session holds nothing ahead from now on either: harmless */
	return NULL;
}

/* ---- signals and answers -------------------------------------------------------- */

/* Through the thread's own pidfd where it has one (the thread it names, or
 * ESRCH); the leader's pidfd names the process, so with
 * PIDFD_SIGNAL_THREAD (Linux 6.9); else by TID, tgid-checked, once the
 * process's pidfd shows it alive (its PID then names it). */
static int send_signal(struct sigengine *e, const struct task_handle *h, siginfo_t *si)
{
	if (h->pidfd >= 0 && h->tid != h->pid)
		return (int)syscall(SYS_pidfd_send_signal, h->pidfd, e->sig, si, 0U);
	if (h->pidfd >= 0 && e->leader_by_pidfd != 0) {
		int r = (int)syscall(SYS_pidfd_send_signal, h->pidfd, e->sig, si, PIDFD_SIGNAL_THREAD_);

		if (r == 0 || errno != EINVAL) {
			e->leader_by_pidfd = 1;
			return r;
		}
		e->leader_by_pidfd = 0;
	}
	if (sys_pidfd_exited(e->pidfd) != 0) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_rt_tgsigqueueinfo, e->pid, h->tid, e->sig, si);
}

void sigengine_send(struct sigengine *e, const struct task_handle *h, struct sigticket *t)
{
	const struct sigplan plan = { .pid = e->pid, .sig = e->sig };
	siginfo_t si;

	memset(t, 0, sizeof(*t));
	if (sigengine_route(&plan, h->tid, t->why, sizeof(t->why), &t->eintr) < 0)
		return;
	if (e->next >= e->nslots) {
		snprintf(t->why, sizeof(t->why), "no slot left for it");
		return;
	}
	t->slot = e->next++;
	e->tids[t->slot] = h->tid;
	memset(&si, 0, sizeof(si));
	si.si_signo = e->sig;
	si.si_code = SIGH_SI_QUEUE;
	si.si_pid = e->self;
	si.si_uid = e->uid;
	si.si_value.sival_ptr = (void *)(uintptr_t)((uint64_t)e->nonce << 32 | t->slot);
	clock_gettime(CLOCK_MONOTONIC, &t->at);
	if (send_signal(e, h, &si) < 0) {
		snprintf(t->why, sizeof(t->why), "the signal could not be sent (%s)", strerror(errno));
		return;
	}
	t->sent = true;
}

/* Whether the signal ended a system call with EINTR: the interrupted
 * return register is -EINTR right after a system call instruction (read,
 * bounded, from the target's memory). */
static bool ended_a_call(const struct task_handle *h, uint64_t pc, uint64_t ret)
{
	unsigned char insn[8];

	if ((int64_t)ret != -EINTR || pc < arch_syscall_insn_len)
		return false;
	return tracee_mem_read(h->tid, pc - arch_syscall_insn_len, insn, arch_syscall_insn_len) == 0 &&
	       memcmp(insn, arch_syscall_insn, arch_syscall_insn_len) == 0;
}

/* Sleep on ndone until it moves or ms pass: the handler wakes it when
 * `waiting' is set (sighandler.h). */
static void wait_answers(struct sigengine *e, long ms)
{
	_Atomic uint32_t *ndone = word(e, SIGH_NDONE);
	uint32_t seen = atomic_load(ndone);
	struct timespec nap = { ms / 1000, (ms % 1000) * 1000000 };

	atomic_store(word(e, SIGH_WAITING), 1);
	(void)syscall(SYS_futex, ndone, FUTEX_WAIT, seen, &nap, NULL, 0);
	atomic_store(word(e, SIGH_WAITING), 0);
}

int sigengine_collect(struct sigengine *e, struct sigticket *t, const struct task_handle *h,
		      struct ptrace_result *res, long *delay_us, bool *interrupted)
{
	const unsigned char *slot;
	struct timespec ran;
	int64_t rv;
	uint64_t pc, ret;

	*interrupted = false;
	*delay_us = -1;
	if (!t->sent)
		return -1;
	slot = slot_of(e, t->slot);
	while (atomic_load((_Atomic uint32_t *)(slot + SIGH_SLOT_STATE)) != 1) {
		long left = SIGENGINE_DEADLINE_MS - us_since(&t->at) / 1000;

		if (left <= 0) {
			snprintf(t->why, sizeof(t->why), "no answer to signal %d within %d ms", e->sig,
				 SIGENGINE_DEADLINE_MS);
			return -1;
		}
		wait_answers(e, left < 50 ? left : 50);
	}
	memcpy(&ran, slot + SIGH_SLOT_TIME, sizeof(ran));
	*delay_us = (ran.tv_sec - t->at.tv_sec) * 1000000 + (ran.tv_nsec - t->at.tv_nsec) / 1000;
	if (*delay_us < 0)	/* the target's to write: a figure, nothing more */
		*delay_us = 0;
	memcpy(&rv, slot + SIGH_SLOT_RV, sizeof(rv));
	memcpy(&pc, slot + SIGH_SLOT_PC, sizeof(pc));
	memcpy(&ret, slot + SIGH_SLOT_RET, sizeof(ret));
	memset(res, 0, sizeof(*res));
	res->yama_scope = -1;
	res->held_us = -1;
	if (rv > 0 || rv < -4095) {
		res->failure = FAIL_INJECTION;
		res->err = EPROTO;
		snprintf(res->detail, sizeof(res->detail), "the handler's answer is nonsense");
		return 0;
	}
	res->err = (int)-rv;
	*interrupted = !t->eintr && ended_a_call(h, pc, ret);
	return 0;
}

#endif /* PMP_SIGENGINE_SUPPORTED */
