/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-signals - targets that meet the signal engine (src/sigengine.h) with
 * their own use of signals: N worker threads (default 16) and a mode.
 *
 *   blockall  every thread blocks every signal (the mask is set before the
 *             threads are made); the workers wait on a condition variable
 *             (a futex wait without timeout, which the engine would signal)
 *   race      the workers wait on a condition variable, and a racer thread
 *             watches the dispositions of signals 35..64 without pause:
 *             one that turns to a handler it does not know (the engine's)
 *             it takes over with a handler of its own, which counts what
 *             it is sent; it keeps each it took
 *   altstack  the workers spin in user space on their own stacks, each
 *             with a sigaltstack of 4 KiB (or, where the kernel refuses
 *             that as below its MINSIGSTKSZ, as aarch64's does, the least
 *             it takes) filled with a pattern, and with 64 words below the
 *             red zone of their stack holding a canary across each spin: a
 *             handler's frame must land on the alternate stack
 *             (SA_ONSTACK), not below the stack pointer
 *   allrt     a handler (counting) for every signal from 34 to 64: none is
 *             free; the workers wait on a condition variable
 *   nanoloop  the workers loop: 200 us of spinning in user space, then
 *             clock_nanosleep(200 us); a sleep that returns EINTR is
 *             counted with its remaining time: the engine's window (a
 *             thread seen running enters a sleep before its signal comes)
 *   sealafter the workers spin in user space with a sigaltstack as in
 *             altstack; each, once it finds that stack written (a handler
 *             ran on it and returned), blocks every signal and spins on:
 *             a thread whose mask then looks like one inside the handler
 *   stray     two strayer threads, made before the workers, block
 *             35..64, watch their dispositions without pause, send one
 *             that turns to a handler (the engine's) to themselves with
 *             tgkill (a run of the handler without a slot, not one the
 *             engine signalled), take it by unblocking it, then block
 *             every signal and wait: out of the handler with a mask that
 *             looks like one inside it.  The workers wait on a condition
 *             variable; a last thread blocks 35..64 and waits in pause:
 *             the tool holds it last, so it, not a strayer, is the thread
 *             the handler is taken out through (proven out by its
 *             registers, not its mask)
 *   unmap     the workers wait on a condition variable; a watcher reads
 *             its maps without pause and, once /memfd:pidmempolicy
 *             appears, waits for a handler it does not know among
 *             signals 35..64, sets SIG_IGN for it, then unmaps the region
 *
 * Usage: pmp-signals MODE [N].  Prints "ready PID", then answers each
 * line on stdin:
 *   check   "workers=N ok=0|1 [mode's figures]", where ok=1 means every
 *           check of the mode held:
 *             race: took=T caught=C kept=K (K of the T signals it took
 *                   still have its handler)
 *             altstack: size=S frames=F canary=B (S the alternate
 *                   stack's size, F workers whose alternate stack was
 *                   written, B canary words found changed)
 *             allrt: caught=C
 *             nanoloop: loops=L eintr=E (sleeps that returned EINTR)
 *             stray: strays=S (handler runs it made itself)
 *             unmap: unmapped=U ignored=I
 *   exit    "bye", exit 0
 */
#define _GNU_SOURCE
#include <errno.h>
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

#define MAX_WORKERS	1024
#define ALTSTACK	4096
#define SIG_LO		35
#define SIG_HI		64

enum mode { BLOCKALL, RACE, ALTSTACK_, ALLRT, NANOLOOP, UNMAP, SEALAFTER, STRAY };
static const char *const mode_names[] = { "blockall", "race", "altstack", "allrt", "nanoloop", "unmap",
					  "sealafter", "stray" };

static enum mode mode;
static long nworkers = 16;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static atomic_long caught, loops, eintrs, altstack_frames, canary_bad, unmapped, ignored, strays;
static atomic_int took[SIG_HI + 1];

static void counting(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	atomic_fetch_add(&caught, 1);
}

static void wait_forever(void)
{
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
}

/* ---- altstack: a spin that keeps a canary below the red zone ----------- */

#if defined(__x86_64__)
/* 64 words at [rsp-640, rsp-128) hold a canary while the loop spins;
 * a signal frame put below the stack pointer would overwrite them. */
static unsigned long spin_with_canary(unsigned long n)
{
	unsigned long bad = 0;

	__asm__ volatile(
		"mov $0x5a5a5a5a5a5a5a5a, %%rax\n"
		"lea -640(%%rsp), %%rdi\n"
		"mov $64, %%rcx\n"
		"1: mov %%rax, (%%rdi)\n"
		"add $8, %%rdi\n"
		"dec %%rcx\n"
		"jnz 1b\n"
		"mov %[n], %%rdx\n"
		"2: dec %%rdx\n"
		"jnz 2b\n"
		"lea -640(%%rsp), %%rdi\n"
		"mov $64, %%rcx\n"
		"3: cmp %%rax, (%%rdi)\n"
		"je 4f\n"
		"incq %[bad]\n"
		"4: add $8, %%rdi\n"
		"dec %%rcx\n"
		"jnz 3b\n"
		: [bad] "+m"(bad)
		: [n] "r"(n)
		: "rax", "rcx", "rdx", "rdi", "memory", "cc");
	return bad;
}
#elif defined(__aarch64__)
/* No red zone: the canary sits at [sp-640, sp-128). */
static unsigned long spin_with_canary(unsigned long n)
{
	unsigned long bad = 0;

	__asm__ volatile(
		"mov x9, #0x5a5a\n"
		"movk x9, #0x5a5a, lsl #16\n"
		"movk x9, #0x5a5a, lsl #32\n"
		"movk x9, #0x5a5a, lsl #48\n"
		"mov x10, sp\n"
		"sub x10, x10, #640\n"
		"mov x11, #64\n"
		"1: str x9, [x10], #8\n"
		"subs x11, x11, #1\n"
		"b.ne 1b\n"
		"mov x12, %[n]\n"
		"2: subs x12, x12, #1\n"
		"b.ne 2b\n"
		"mov x10, sp\n"
		"sub x10, x10, #640\n"
		"mov x11, #64\n"
		"3: ldr x13, [x10], #8\n"
		"cmp x13, x9\n"
		"b.eq 4f\n"
		"ldr x14, %[bad]\n"
		"add x14, x14, #1\n"
		"str x14, %[bad]\n"
		"4: subs x11, x11, #1\n"
		"b.ne 3b\n"
		: [bad] "+m"(bad)
		: [n] "r"(n)
		: "x9", "x10", "x11", "x12", "x13", "x14", "memory", "cc");
	return bad;
}
#else
static unsigned long spin_with_canary(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i++)
		;
	return 0;
}
#endif

static atomic_long altstack_size = ALTSTACK;

static void altstack_worker(void)
{
	long size = ALTSTACK, least = sysconf(_SC_MINSIGSTKSZ);
	unsigned char *alt = malloc(least > size ? (size_t)least : (size_t)size);
	stack_t ss = { .ss_size = (size_t)size };
	int counted = 0;

	if (!alt)
		return;
	ss.ss_sp = alt;
	if (sigaltstack(&ss, NULL) < 0 && errno == ENOMEM && least > size) {
		size = least;
		ss.ss_size = (size_t)size;
		atomic_store(&altstack_size, size);
	}
	memset(alt, 0xa5, (size_t)size);
	if (sigaltstack(&ss, NULL) < 0) {
		perror("pmp-signals: sigaltstack");
		exit(1);
	}
	for (;;) {
		atomic_fetch_add(&canary_bad, (long)spin_with_canary(mode == SEALAFTER ? 1000 : 20000000));
		if (!counted) {
			for (long i = 0; i < size; i++)
				if (alt[i] != 0xa5) {
					atomic_fetch_add(&altstack_frames, 1);
					counted = 1;
					break;
				}
			if (counted && mode == SEALAFTER) {
				/* raw: glibc keeps its own 32 and 33 out of a mask */
				uint64_t all = ~0ULL;

				syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
			}
		}
	}
}

/* ---- nanoloop: the window between the tool's look and its signal ------ */

static void nanoloop_worker(void)
{
	for (;;) {
		struct timespec start, now, req = { 0, 200 * 1000 }, rem;

		clock_gettime(CLOCK_MONOTONIC, &start);
		do
			clock_gettime(CLOCK_MONOTONIC, &now);
		while ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec < 200 * 1000);
		if (clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem) == EINTR)
			atomic_fetch_add(&eintrs, 1);
		atomic_fetch_add(&loops, 1);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	switch (mode) {
	case ALTSTACK_:
	case SEALAFTER:
		altstack_worker();
		break;
	case NANOLOOP:
		nanoloop_worker();
		break;
	default:
		wait_forever();
	}
	return NULL;
}

/* ---- the racer and the watcher ------------------------------------------ */

static int handler_is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == counting;
}

static void *racer(void *arg)
{
	(void)arg;
	for (;;)
		for (int sig = SIG_LO; sig <= SIG_HI; sig++) {
			struct sigaction old, mine = { .sa_sigaction = counting, .sa_flags = SA_SIGINFO | SA_RESTART };

			if (sigaction(sig, NULL, &old) < 0 || old.sa_handler == SIG_DFL ||
			    old.sa_handler == SIG_IGN || handler_is_ours(&old))
				continue;
			sigfillset(&mine.sa_mask);
			if (sigaction(sig, &mine, NULL) == 0)
				atomic_store(&took[sig], 1);
		}
	return NULL;
}

static void block_rt(void)
{
	sigset_t rt;

	sigemptyset(&rt);
	for (int sig = SIG_LO; sig <= SIG_HI; sig++)
		sigaddset(&rt, sig);
	pthread_sigmask(SIG_BLOCK, &rt, NULL);
}

static void *last_held(void *arg)
{
	(void)arg;
	block_rt();
	for (;;)
		pause();
	return NULL;
}

static void *strayer(void *arg)
{
	(void)arg;
	block_rt();
	for (;;)
		for (int sig = SIG_LO; sig <= SIG_HI; sig++) {
			struct sigaction old;
			sigset_t one;
			uint64_t all = ~0ULL;

			if (sigaction(sig, NULL, &old) < 0 || old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN)
				continue;
			syscall(SYS_tgkill, getpid(), gettid(), sig);
			sigemptyset(&one);
			sigaddset(&one, sig);
			pthread_sigmask(SIG_UNBLOCK, &one, NULL);	/* the handler runs here */
			atomic_fetch_add(&strays, 1);
			/* raw: glibc keeps its own 32 and 33 out of a mask */
			syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
			for (;;)
				pause();
		}
	return NULL;
}

/* The region's extent from a maps line naming it, or 0. */
static int region_of(const char *line, unsigned long *start, unsigned long *end)
{
	return strstr(line, "/memfd:pidmempolicy") && sscanf(line, "%lx-%lx", start, end) == 2;
}

/* SIG_IGN for each of 35..64 whose handler is not ours; how many. */
static int ignore_strangers(void)
{
	int n = 0;

	for (int sig = SIG_LO; sig <= SIG_HI; sig++) {
		struct sigaction old, ign = { .sa_handler = SIG_IGN };

		if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN &&
		    sigaction(sig, &ign, NULL) == 0)
			n++;
	}
	atomic_fetch_add(&ignored, n);
	return n;
}

static void *watcher(void *arg)
{
	char line[512];

	(void)arg;
	for (;;) {
		unsigned long lo = 0, hi = 0, s, e;
		FILE *f = fopen("/proc/self/maps", "re");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (region_of(line, &s, &e)) {
				lo = lo && lo < s ? lo : s;
				hi = hi > e ? hi : e;
			}
		fclose(f);
		if (!lo)
			continue;
		/* the region comes before the handler: wait up to 2 s for it,
		 * so that the signal is ignored once the engine sends it */
		for (int spins = 0; spins < 20000 && !ignore_strangers(); spins++)
			usleep(100);
		if (munmap((void *)lo, hi - lo) == 0)
			atomic_fetch_add(&unmapped, 1);
	}
	return NULL;
}

/* ---- the commands ------------------------------------------------------- */

static void check(void)
{
	long took_n = 0, kept = 0;
	int ok = 1;

	switch (mode) {
	case RACE:
		for (int sig = SIG_LO; sig <= SIG_HI; sig++) {
			struct sigaction now;

			if (!atomic_load(&took[sig]))
				continue;
			took_n++;
			if (sigaction(sig, NULL, &now) == 0 && handler_is_ours(&now))
				kept++;
		}
		ok = kept == took_n;
		printf("workers=%ld ok=%d took=%ld caught=%ld kept=%ld\n", nworkers, ok, took_n,
		       atomic_load(&caught), kept);
		break;
	case ALTSTACK_:
	case SEALAFTER:
		ok = atomic_load(&canary_bad) == 0;
		printf("workers=%ld ok=%d size=%ld frames=%ld canary=%ld\n", nworkers, ok,
		       atomic_load(&altstack_size), atomic_load(&altstack_frames), atomic_load(&canary_bad));
		break;
	case ALLRT:
		printf("workers=%ld ok=1 caught=%ld\n", nworkers, atomic_load(&caught));
		break;
	case NANOLOOP:
		printf("workers=%ld ok=1 loops=%ld eintr=%ld\n", nworkers, atomic_load(&loops), atomic_load(&eintrs));
		break;
	case STRAY:
		printf("workers=%ld ok=1 strays=%ld\n", nworkers, atomic_load(&strays));
		break;
	case UNMAP:
		printf("workers=%ld ok=1 unmapped=%ld ignored=%ld\n", nworkers, atomic_load(&unmapped),
		       atomic_load(&ignored));
		break;
	default:
		printf("workers=%ld ok=1\n", nworkers);
	}
	fflush(stdout);
}

static void start(pthread_t *t, void *(*fn)(void *))
{
	int err = pthread_create(t, NULL, fn, NULL);

	if (err) {
		fprintf(stderr, "pmp-signals: pthread_create: %s\n", strerror(err));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char line[64];
	pthread_t t;
	size_t m;

	for (m = 0; m < sizeof(mode_names) / sizeof(mode_names[0]); m++)
		if (argc >= 2 && strcmp(argv[1], mode_names[m]) == 0)
			break;
	if (argc < 2 || argc > 3 || m == sizeof(mode_names) / sizeof(mode_names[0]) ||
	    (argc == 3 && ((nworkers = atol(argv[2])) < 1 || nworkers > MAX_WORKERS))) {
		fprintf(stderr, "usage: pmp-signals blockall|race|altstack|allrt|nanoloop|unmap|sealafter|stray [N (1..%d)]\n",
			MAX_WORKERS);
		return 2;
	}
	mode = (enum mode)m;
	if (mode == BLOCKALL) {
		sigset_t all;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, NULL);
	}
	if (mode == ALLRT)
		for (int sig = 34; sig <= SIG_HI; sig++) {
			struct sigaction sa = { .sa_sigaction = counting, .sa_flags = SA_SIGINFO | SA_RESTART };

			if (sigaction(sig, &sa, NULL) < 0) {
				perror("pmp-signals: sigaction");
				return 1;
			}
		}
	for (int i = 0; mode == STRAY && i < 2; i++)
		start(&t, strayer);
	for (long i = 0; i < nworkers; i++)
		start(&t, worker);
	if (mode == STRAY)
		start(&t, last_held);
	if (mode == RACE)
		start(&t, racer);
	if (mode == UNMAP)
		start(&t, watcher);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (strcmp(line, "check\n") == 0) {
			check();
		} else if (strcmp(line, "exit\n") == 0) {
			printf("bye\n");
			fflush(stdout);
			return 0;
		} else {
			printf("error unknown command\n");
			fflush(stdout);
		}
	}
	return 0;
}
