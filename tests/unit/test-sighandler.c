/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests: the signal engine's handler (src/sighandler.S), run in this
 * process as the engine runs it in a target: copied into a memfd mapped
 * twice (read+write for "the tool", read+exec then read+write for "the
 * target"), installed with rt_sigaction(2) as the engine installs it, and
 * sent to threads of this process with rt_tgsigqueueinfo(2).  Each thread
 * then reads its own policy with get_mempolicy(2).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sighandler.h"
#include "tap.h"

#define NSLOTS		16
#define REGION		(SIGH_DATA_AT + SIGH_SLOTS_AT + NSLOTS * SIGH_SLOT_SIZE)
#define NONCE		0x5eed1234u
#define MPOL_BIND_	2
#define SA_RESTORER_	0x04000000
#define ALTSTACK	4096

struct ksigaction {
	uintptr_t handler;
	unsigned long flags;
	uintptr_t restorer;
	uint64_t mask;
};

static unsigned char *tool;	/* the tool's mapping */
static unsigned char *target;	/* the target's */
static int sig;

static uint32_t *u32_at(size_t off) { return (uint32_t *)(tool + SIGH_DATA_AT + off); }
static uint64_t *u64_at(size_t off) { return (uint64_t *)(tool + SIGH_DATA_AT + off); }

static void die(const char *what)
{
	perror(what);
	exit(99);
}

/* ---- the threads the handler meets ----------------------------------- */

enum role { R_READ, R_BUSY, R_SLEEP, R_ALTSTACK, NROLES };

struct worker {
	enum role role;
	pthread_t thread;
	atomic_int tid;
	atomic_int stop;
	int fds[2];
	long rv;
	int err, err_kept, mode;
	char data[8];
	unsigned char *alt;
};

static void own_mode(struct worker *w)
{
	int mode = -1;
	unsigned long mask = 0;

	if (syscall(SYS_get_mempolicy, &mode, &mask, 65UL, NULL, 0UL) < 0)
		mode = -1;
	w->mode = mode;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct timespec ts = { 0, 400 * 1000 * 1000 };
	stack_t old;

	/* A sanitizer runtime gives each thread an altstack of its own and
	 * unmaps it at exit: it must find that one again, not ours. */
	if (w->role == R_ALTSTACK) {
		stack_t ss = { .ss_sp = w->alt, .ss_size = ALTSTACK };

		if (sigaltstack(&ss, &old) < 0)
			die("sigaltstack");
	}
	atomic_store(&w->tid, (int)syscall(SYS_gettid));
	switch (w->role) {
	case R_READ:
		w->rv = read(w->fds[0], w->data, 6);
		w->err = errno;
		break;
	case R_SLEEP:
		w->rv = syscall(SYS_nanosleep, &ts, NULL);
		w->err = errno;
		break;
	case R_BUSY:
	case R_ALTSTACK:
		errno = 12345;	/* the handler must not touch it */
		while (!atomic_load(&w->stop))
			;
		w->err_kept = errno == 12345;
		break;
	default:
		break;
	}
	own_mode(w);
	if (w->role == R_ALTSTACK && sigaltstack(&old, NULL) < 0)
		die("sigaltstack");
	return NULL;
}

/* ---- the engine's side -------------------------------------------------- */

static void map_region(void)
{
	int fd = (int)syscall(SYS_memfd_create, "test-sighandler", 0);

	if (fd < 0 || ftruncate(fd, REGION) < 0)
		die("memfd");
	tool = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	target = mmap(NULL, REGION, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (tool == MAP_FAILED || target == MAP_FAILED)
		die("mmap");
	if (mprotect(target + SIGH_DATA_AT, REGION - SIGH_DATA_AT, PROT_READ | PROT_WRITE) < 0)
		die("mprotect");
	close(fd);
	memcpy(tool, pmp_sigh_start, (size_t)(pmp_sigh_end - pmp_sigh_start));
	*u32_at(SIGH_NONCE) = NONCE;
	*u32_at(SIGH_NSLOTS) = NSLOTS;
	*u64_at(SIGH_MODE) = MPOL_BIND_;
	*u64_at(SIGH_MASK_AT) = 1;		/* node 0 */
	*u64_at(SIGH_MASK) = (uintptr_t)(target + SIGH_DATA_AT + SIGH_MASK_AT);
	*u64_at(SIGH_MAXNODE) = 2;
}

static struct ksigaction installed(void)
{
	return (struct ksigaction){
		.handler = (uintptr_t)(target + (pmp_sigh_handler - pmp_sigh_start)),
		.flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_RESTORER_,
		.restorer = (uintptr_t)(target + (pmp_sigh_restorer - pmp_sigh_start)),
		.mask = ~(uint64_t)0,
	};
}

static int send(pid_t tid, uint32_t nonce, uint32_t slot)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SIGH_SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_ptr = (void *)(uintptr_t)((uint64_t)nonce << 32 | slot);
	return (int)syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, sig, &si);
}

/* Wait until ndone reaches n, as the engine does: waiting, then FUTEX_WAIT
 * on the shared word (2 s at most). */
static int wait_done(uint32_t n)
{
	struct timespec start, now, nap = { 0, 50 * 1000 * 1000 };
	_Atomic uint32_t *ndone = (_Atomic uint32_t *)u32_at(SIGH_NDONE);

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		uint32_t seen = atomic_load(ndone);

		if (seen >= n)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 2)
			return -1;
		atomic_store((_Atomic uint32_t *)u32_at(SIGH_WAITING), 1);
		(void)syscall(SYS_futex, ndone, FUTEX_WAIT, seen, &nap, NULL, 0);
		atomic_store((_Atomic uint32_t *)u32_at(SIGH_WAITING), 0);
	}
}

static const unsigned char *slot(uint32_t i)
{
	return tool + SIGH_DATA_AT + SIGH_SLOTS_AT + (size_t)i * SIGH_SLOT_SIZE;
}

static int64_t slot_i64(uint32_t i, size_t off)
{
	int64_t v;

	memcpy(&v, slot(i) + off, sizeof(v));
	return v;
}

static int ts_le(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

/* The bytes before pc are a system call instruction. */
static int after_syscall_insn(uint64_t pc)
{
#if defined(__x86_64__)
	const unsigned char *p = (const unsigned char *)(uintptr_t)pc;

	return p[-2] == 0x0f && p[-1] == 0x05;
#else
	uint32_t insn;

	memcpy(&insn, (const void *)(uintptr_t)(pc - 4), 4);
	return insn == 0xd4000001;
#endif
}

int main(void)
{
	struct worker w[NROLES];
	struct ksigaction act, old;
	struct timespec sent, seen;
	sigset_t before, after;
	int altered = 0;

	sig = SIGRTMAX;
	map_region();
	act = installed();
	if (syscall(SYS_rt_sigaction, sig, &act, &old, 8) < 0)
		die("rt_sigaction");
	ok(old.handler == (uintptr_t)SIG_DFL, "SIGRTMAX had no handler");
	pthread_sigmask(SIG_SETMASK, NULL, &before);

	memset(w, 0, sizeof(w));
	for (int i = 0; i < NROLES; i++) {
		w[i].role = (enum role)i;
		if (i == R_READ && pipe(w[i].fds) < 0)
			die("pipe");
		if (i == R_ALTSTACK) {
			w[i].alt = malloc(ALTSTACK);
			if (!w[i].alt)
				die("malloc");
			memset(w[i].alt, 0xa5, ALTSTACK);
		}
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
			die("pthread_create");
	}
	for (int i = 0; i < NROLES; i++)
		while (!atomic_load(&w[i].tid))
			usleep(1000);
	usleep(100 * 1000);	/* the reader and the sleeper are inside their calls */

	clock_gettime(CLOCK_MONOTONIC, &sent);
	for (int i = 0; i < NROLES; i++)
		ok(send(w[i].tid, NONCE, (uint32_t)i) == 0, "signal %d sent", i);
	ok(wait_done(NROLES) == 0, "every thread wrote its slot (ndone %u)", *u32_at(SIGH_NDONE));
	clock_gettime(CLOCK_MONOTONIC, &seen);
	for (int i = 0; i < NROLES; i++) {
		struct timespec ran;

		memcpy(&ran, slot((uint32_t)i) + SIGH_SLOT_TIME, sizeof(ran));
		ok(ts_le(&sent, &ran) && ts_le(&ran, &seen), "slot %d: the time it ran is between the signal and now", i);
	}
	for (int i = 0; i < NROLES; i++)
		ok(slot(i)[SIGH_SLOT_STATE] == 1 && slot_i64((uint32_t)i, SIGH_SLOT_RV) == 0,
		   "slot %d: written, set_mempolicy returned 0 (%lld)", i,
		   (long long)slot_i64((uint32_t)i, SIGH_SLOT_RV));

	/* the sleeper: the signal ended nanosleep, and the slot shows it */
	ok(slot_i64(R_SLEEP, SIGH_SLOT_RET) == -EINTR &&
	   after_syscall_insn((uint64_t)slot_i64(R_SLEEP, SIGH_SLOT_PC)),
	   "the slot shows a system call ended with EINTR, at the instruction after it");
	/* the reader: its read(2) restarted (SA_RESTART), so no EINTR in its slot */
	ok(slot_i64(R_READ, SIGH_SLOT_RET) != -EINTR, "a restarted read(2) is not seen as EINTR");

	/* a value without the nonce, or a slot past nslots: no slot is written */
	ok(send(w[R_BUSY].tid, NONCE ^ 1, NROLES) == 0 && send(w[R_BUSY].tid, NONCE, NSLOTS) == 0,
	   "two foreign signals sent");
	usleep(200 * 1000);
	ok(*u32_at(SIGH_NDONE) == NROLES && slot(NROLES)[SIGH_SLOT_STATE] == 0,
	   "a foreign value writes no slot (ndone %u)", *u32_at(SIGH_NDONE));
	ok(*u32_at(SIGH_ENTERED) == NROLES + 2 && *u32_at(SIGH_LEFT) == NROLES + 2,
	   "entered and left agree (%u, %u)", *u32_at(SIGH_ENTERED), *u32_at(SIGH_LEFT));

	if (write(w[R_READ].fds[1], "hello\n", 6) != 6)
		die("write");
	atomic_store(&w[R_BUSY].stop, 1);
	atomic_store(&w[R_ALTSTACK].stop, 1);
	for (int i = 0; i < NROLES; i++)
		pthread_join(w[i].thread, NULL);

	ok(w[R_READ].rv == 6 && memcmp(w[R_READ].data, "hello\n", 6) == 0, "read(2) restarted and got its data");
	ok(w[R_SLEEP].rv == -1 && w[R_SLEEP].err == EINTR, "nanosleep(2) ended with EINTR, as after any handler");
	ok(w[R_BUSY].err_kept && w[R_ALTSTACK].err_kept, "errno untouched");
	for (int i = 0; i < NROLES; i++)
		ok(w[i].mode == MPOL_BIND_, "thread %d has bind (mode %d)", i, w[i].mode);
	for (int i = 0; i < ALTSTACK; i++)
		altered += w[R_ALTSTACK].alt[i] != 0xa5;
	ok(altered > 0, "the frame went onto the 4 KiB sigaltstack (%d bytes written)", altered);
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	ok(sigismember(&after, sig) == sigismember(&before, sig) && sigismember(&after, SIGUSR1) == 0,
	   "the main thread's mask is as it was");
	ok(syscall(SYS_rt_sigaction, sig, &old, NULL, 8) == 0, "the old action is back");
	free(w[R_ALTSTACK].alt);
	return tap_done();
}
