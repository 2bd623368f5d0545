/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-blocker - a target for the ptrace backend's host tests: threads that
 * sit in the blocking calls a ptrace injection interrupts, each checking
 * that its call still behaved as documented afterwards, and reporting its
 * own get_mempolicy(2).
 *
 * Usage: pmp-blocker [--ms=N] [--idle=N]
 *
 *   --ms=N     default length of a round's blocking calls (3000 ms)
 *   --idle=N   N extra threads waiting on a condition variable (no timeout)
 *
 * Prints "ready PID", then answers each command on stdin with exactly ONE
 * line on stdout; errors start with "error ".  EOF on stdin ends it.
 *
 * Round threads (names): each makes ONE blocking call per round:
 *   nanosleep        nanosleep(MS) relative        ok: returns 0
 *   clock_nanosleep  clock_nanosleep(TIMER_ABSTIME, now + MS)   ok: 0
 *   poll             poll(NULL, 0, MS)             ok: returns 0 (timeout)
 *   cond_timedwait   pthread_cond_timedwait(now + MS) never signalled
 *                    ok: ETIMEDOUT (spurious wakeups re-wait, counted)
 *   cond_wait        pthread_cond_wait, signalled by "writer" at MS
 *                    ok: woken with the predicate set
 *   read             read(pipe) of 6 bytes that "writer" writes at MS
 *                    ok: returns exactly "hello\n"
 *   epoll            epoll_wait(pipe that stays empty, MS)
 *                    ok: returns 0 (timeout) or -1/EINTR: EINTR is what a
 *                    ptrace stop may cause (signal(7)); rv/errno tell which
 *   busy             register-heavy loop for MS: every general register
 *                    but rsp/rbp and xmm0-xmm3 hold values derived from a
 *                    counter across a spin, then are checked; and 64
 *                    words below the red zone (rsp-640..rsp-136, where an
 *                    injection puts its scratch) hold a canary across it
 *                    ok: no mismatch ever seen (bad=0 canary=0)
 *   writer           clock_nanosleep to now + MS, then writes the pipe and
 *                    signals cond_wait (ok: 0)
 * Each then records its get_mempolicy(2) and the call's elapsed time.
 * Other threads:
 *   sigsuspend       loops in sigsuspend() with SIGUSR1/SIGUSR2 and SIGCONT
 *                    open (every other thread blocks them); counts handler
 *                    runs and returns (each return must be one handler run:
 *                    a SIGCONT after a SIGSTOP must end the call with EINTR)
 *   idle-K           the --idle threads
 *   churn            with "churn on": creates and joins short threads
 *   main             reads commands
 *
 * Commands and replies:
 *   names            the round thread names, space separated
 *   tids             "NAME=TID ..." for main, the round threads, sigsuspend
 *                    (idle and churn threads: see /proc/PID/task)
 *   start [MS]       begin a round; reply "started MS"
 *   wait             block until the round is over; reply "done"
 *   report NAME      "NAME tid=T ok=0|1 rv=R errno=E elapsed_ms=X mode=M
 *                    nodes=L [extra]" for a round thread of the last round
 *   report sigsuspend  "sigsuspend tid=T handled=H returns=R ok=0|1 mode=M
 *                    nodes=L": asks the thread (with SIGUSR2) for its policy;
 *                    ok=1 when returns == handled (USR1, USR2 and CONT
 *                    handler runs)
 *   policy           get_mempolicy of the main thread: "mode=M nodes=L"
 *   idle-check       every idle thread records its policy; reply
 *                    "idle n=N same=K mode=M nodes=L" (K threads agree with
 *                    idle-0's mode/nodes shown)
 *   churn on|off     start/stop the churn thread; reply "ok"
 *   report churn     "churn created=N mode=M nodes=L" (the latest child's
 *                    policy, seen from inside it)
 *   ping             "pong"
 *   exit             "bye", exit 0
 * Modes as in pmp-target: 0 default, 1 preferred, 2 bind, 3 interleave,
 * 4 local, 5 preferred_many.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LINE_LEN 512
#define MAX_NODES 1024
#define MAX_IDLE 4096
#define MPOL_F_STATIC_NODES_ (1 << 15)
#define MPOL_F_RELATIVE_NODES_ (1 << 14)

enum { T_NANOSLEEP, T_CLOCK_NANOSLEEP, T_POLL, T_COND_TIMEDWAIT, T_COND_WAIT, T_READ,
       T_EPOLL, T_BUSY, T_WRITER, NROUND };

static const char *const names[NROUND] = {
	"nanosleep", "clock_nanosleep", "poll", "cond_timedwait", "cond_wait", "read",
	"epoll", "busy", "writer",
};

struct result {
	int ok;
	long rv;
	int err;
	long elapsed_ms;
	char policy[LINE_LEN / 2];
	char extra[96];
};

struct round_thread {
	int index;
	pthread_t thread;
	pid_t tid;
	struct result res;
};

static struct round_thread rt[NROUND];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static long round_no, round_ms;
static int finished;			/* round threads done with round_no */

static int pipefd[2];
static int epfd, epipe[2];
static pthread_mutex_t cw_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cw_cond;		/* CLOCK_MONOTONIC */
static int cw_flag;
static pthread_mutex_t ct_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ct_cond;		/* never signalled */

static atomic_long usr1_handled, usr2_handled, cont_handled;
static pid_t sigsuspend_tid;
static atomic_long sigsuspend_returns;
static atomic_int policy_wanted;	/* set by main, cleared by sigsuspend */
static char sigsuspend_policy[LINE_LEN / 2];

static long nidle;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static long idle_gen, idle_done;
static char (*idle_policy)[LINE_LEN / 2];

static atomic_int churn_on;
static pthread_t churn_thread;
static int churn_started;
static atomic_long churn_created;
static pthread_mutex_t churn_lock = PTHREAD_MUTEX_INITIALIZER;
static char churn_policy[LINE_LEN / 2] = "none";

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec deadline(clockid_t clk, long ms)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

/* get_mempolicy(2) of the calling thread as "mode=M nodes=L[ flags=..]". */
static void own_policy(char *out, size_t outlen)
{
	unsigned long mask[MAX_NODES / (8 * sizeof(unsigned long))];
	const unsigned bits = 8 * sizeof(unsigned long);
	char nodes[128] = "";
	size_t used = 0;
	int mode = 0, flags;

	memset(mask, 0, sizeof(mask));
	if (syscall(SYS_get_mempolicy, &mode, mask, (unsigned long)MAX_NODES, NULL, 0UL) != 0) {
		snprintf(out, outlen, "mode=? nodes=? (get_mempolicy: %s)", strerror(errno));
		return;
	}
	for (unsigned n = 0; n < MAX_NODES; n++) {
		if (!(mask[n / bits] & (1UL << (n % bits))))
			continue;
		unsigned first = n;
		while (n + 1 < MAX_NODES && (mask[(n + 1) / bits] & (1UL << ((n + 1) % bits))))
			n++;
		int w = first == n ? snprintf(nodes + used, sizeof(nodes) - used, "%s%u", used ? "," : "", first)
				   : snprintf(nodes + used, sizeof(nodes) - used, "%s%u-%u", used ? "," : "", first, n);
		if (w < 0 || (size_t)w >= sizeof(nodes) - used)
			break;
		used += (size_t)w;
	}
	flags = mode & (MPOL_F_STATIC_NODES_ | MPOL_F_RELATIVE_NODES_);
	mode &= ~(MPOL_F_STATIC_NODES_ | MPOL_F_RELATIVE_NODES_);
	snprintf(out, outlen, "mode=%d nodes=%s%s%s", mode, used ? nodes : "none",
		 (flags & MPOL_F_STATIC_NODES_) ? " flags=static" : "",
		 (flags & MPOL_F_RELATIVE_NODES_) ? " flags=relative" : "");
}

/* One stretch of the register check: load every general register but
 * rsp/rbp (and xmm0-3) with seed+k, spin, compare.  Returns mismatches.
 * (x86_64 here; aarch64 below.) */
#if defined(__x86_64__)
static unsigned long busy_chunk(unsigned long seed, unsigned long *canary_bad)
{
	unsigned long bad = 0, canary = 0, s = seed;

	__asm__ volatile(
		"mov %[s], %%rax\n\t"
		/* canary: 64 words in [rsp-640, rsp-136), below the red zone,
		 * where the injection puts its node mask (nothing else writes
		 * there: this thread takes no signals) */
		"lea 100(%%rax), %%rbx\n\t"
		"lea -640(%%rsp), %%rdx\n\t"
		"mov $64, %%ecx\n"
		"5:\n\t"
		"mov %%rbx, -8(%%rdx,%%rcx,8)\n\t"
		"dec %%ecx\n\t"
		"jnz 5b\n\t"
		"lea 1(%%rax), %%rbx\n\t"
		"lea 2(%%rax), %%rcx\n\t"
		"lea 3(%%rax), %%rdx\n\t"
		"lea 4(%%rax), %%rsi\n\t"
		"lea 5(%%rax), %%rdi\n\t"
		"lea 6(%%rax), %%r8\n\t"
		"lea 7(%%rax), %%r9\n\t"
		"lea 8(%%rax), %%r10\n\t"
		"lea 9(%%rax), %%r11\n\t"
		"lea 10(%%rax), %%r12\n\t"
		"lea 11(%%rax), %%r13\n\t"
		"lea 12(%%rax), %%r14\n\t"
		"movq %%rax, %%xmm0\n\t"
		"movq %%rbx, %%xmm1\n\t"
		"movq %%rcx, %%xmm2\n\t"
		"movq %%rdx, %%xmm3\n\t"
		"mov $20000, %%r15\n"
		"1:\n\t"
		"pause\n\t"
		"dec %%r15\n\t"
		"jnz 1b\n\t"
#define CHECK(reg, k) \
		"lea " #k "(%%rax), %%r15\n\t" \
		"cmp %%r15, %%" #reg "\n\t" \
		"je 2f\n\t" \
		"incq %[bad]\n" \
		"2:\n\t"
		CHECK(rbx, 1) CHECK(rcx, 2) CHECK(rdx, 3) CHECK(rsi, 4) CHECK(rdi, 5)
		CHECK(r8, 6) CHECK(r9, 7) CHECK(r10, 8) CHECK(r11, 9) CHECK(r12, 10)
		CHECK(r13, 11) CHECK(r14, 12)
#undef CHECK
#define CHECKX(x, reg) \
		"movq %%" #x ", %%r15\n\t" \
		"cmp %%r15, %%" #reg "\n\t" \
		"je 3f\n\t" \
		"incq %[bad]\n" \
		"3:\n\t"
		CHECKX(xmm0, rax) CHECKX(xmm1, rbx) CHECKX(xmm2, rcx) CHECKX(xmm3, rdx)
#undef CHECKX
		"cmp %[s], %%rax\n\t"
		"je 4f\n\t"
		"incq %[bad]\n"
		"4:\n\t"
		"lea 100(%%rax), %%rbx\n\t"
		"lea -640(%%rsp), %%rdx\n\t"
		"mov $64, %%ecx\n"
		"6:\n\t"
		"cmp %%rbx, -8(%%rdx,%%rcx,8)\n\t"
		"je 7f\n\t"
		"incq %[canary]\n"
		"7:\n\t"
		"dec %%ecx\n\t"
		"jnz 6b\n\t"
		: [bad] "+m"(bad), [canary] "+m"(canary)
		: [s] "m"(s)
		: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
		  "r12", "r13", "r14", "r15", "xmm0", "xmm1", "xmm2", "xmm3", "cc", "memory");
	*canary_bad += canary;
	return bad;
}
#elif defined(__aarch64__)
/* The same on aarch64: x1-x16 and x19-x28 hold seed+k (x17 is the scratch
 * register, x18 the platform's, x29/x30 the frame), d0-d3 copies of x0-x3,
 * and the same canary below sp (no red zone here, the same margin).  The
 * state lives in memory reached through one register the compiler picks. */
struct busy_state {
	unsigned long seed, bad, canary;
};

static unsigned long busy_chunk(unsigned long seed, unsigned long *canary_bad)
{
	struct busy_state st = { seed, 0, 0 };

#define LOAD(k) "add x" #k ", x0, #" #k "\n\t"
#define BUMP(off) "ldr x17, [%[p], #" #off "]\n\tadd x17, x17, #1\n\tstr x17, [%[p], #" #off "]\n"
#define CHECK(k) "add x17, x0, #" #k "\n\tcmp x" #k ", x17\n\tb.eq 2f\n\t" BUMP(8) "2:\n\t"
#define CHECKV(k) "fmov x17, d" #k "\n\tcmp x17, x" #k "\n\tb.eq 3f\n\t" BUMP(8) "3:\n\t"
	__asm__ volatile(
		"ldr x0, [%[p]]\n\t"
		"add x1, x0, #100\n\t"
		"sub x2, sp, #640\n\t"
		"mov x3, #64\n"
		"5:\n\t"
		"str x1, [x2], #8\n\t"
		"subs x3, x3, #1\n\t"
		"b.ne 5b\n\t"
		LOAD(1) LOAD(2) LOAD(3) LOAD(4) LOAD(5) LOAD(6) LOAD(7) LOAD(8)
		LOAD(9) LOAD(10) LOAD(11) LOAD(12) LOAD(13) LOAD(14) LOAD(15) LOAD(16)
		LOAD(19) LOAD(20) LOAD(21) LOAD(22) LOAD(23) LOAD(24) LOAD(25) LOAD(26)
		LOAD(27) LOAD(28)
		"fmov d0, x0\n\t"
		"fmov d1, x1\n\t"
		"fmov d2, x2\n\t"
		"fmov d3, x3\n\t"
		"mov x17, #20000\n"
		"1:\n\t"
		"yield\n\t"
		"subs x17, x17, #1\n\t"
		"b.ne 1b\n\t"
		CHECK(1) CHECK(2) CHECK(3) CHECK(4) CHECK(5) CHECK(6) CHECK(7) CHECK(8)
		CHECK(9) CHECK(10) CHECK(11) CHECK(12) CHECK(13) CHECK(14) CHECK(15) CHECK(16)
		CHECK(19) CHECK(20) CHECK(21) CHECK(22) CHECK(23) CHECK(24) CHECK(25) CHECK(26)
		CHECK(27) CHECK(28)
		CHECKV(0) CHECKV(1) CHECKV(2) CHECKV(3)
		"ldr x17, [%[p]]\n\t"
		"cmp x0, x17\n\t"
		"b.eq 4f\n\t"
		BUMP(8)
		"4:\n\t"
		"add x1, x0, #100\n\t"
		"sub x2, sp, #640\n\t"
		"mov x3, #64\n"
		"6:\n\t"
		"ldr x17, [x2], #8\n\t"
		"cmp x17, x1\n\t"
		"b.eq 7f\n\t"
		BUMP(16)
		"7:\n\t"
		"subs x3, x3, #1\n\t"
		"b.ne 6b\n\t"
		:
		: [p] "r"(&st)
		: "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",
		  "x12", "x13", "x14", "x15", "x16", "x17", "x19", "x20", "x21", "x22", "x23",
		  "x24", "x25", "x26", "x27", "x28", "v0", "v1", "v2", "v3", "cc", "memory");
#undef LOAD
#undef BUMP
#undef CHECK
#undef CHECKV
	*canary_bad += st.canary;
	return st.bad;
}
#else
/* The ptrace backend is x86_64 and aarch64 only; elsewhere the loop
 * checks nothing. */
static unsigned long busy_chunk(unsigned long seed, unsigned long *canary_bad)
{
	volatile unsigned long x = seed;

	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1;
	(void)canary_bad;
	return 0;
}
#endif

static void set_result(struct result *r, int ok, long rv, int err, long t0, const char *extra)
{
	r->ok = ok;
	r->rv = rv;
	r->err = err;
	r->elapsed_ms = now_ms() - t0;
	snprintf(r->extra, sizeof(r->extra), "%s", extra ? extra : "");
	own_policy(r->policy, sizeof(r->policy));
}

/* The blocking call of one round. */
static void run_call(struct round_thread *t, long ms)
{
	struct result *r = &t->res;
	char extra[96] = "";
	long t0 = now_ms(), rv;
	int err = 0;

	switch (t->index) {
	case T_NANOSLEEP: {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

		rv = nanosleep(&ts, NULL);
		err = rv ? errno : 0;
		set_result(r, rv == 0, rv, err, t0, NULL);
		break;
	}
	case T_CLOCK_NANOSLEEP:
	case T_WRITER: {
		struct timespec ts = deadline(CLOCK_MONOTONIC, ms);

		rv = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (t->index == T_WRITER) {
			ssize_t w = write(pipefd[1], "hello\n", 6);

			pthread_mutex_lock(&cw_lock);
			cw_flag = 1;
			pthread_cond_signal(&cw_cond);
			pthread_mutex_unlock(&cw_lock);
			snprintf(extra, sizeof(extra), "wrote=%zd", w);
		}
		set_result(r, rv == 0, rv, (int)rv, t0, extra);
		break;
	}
	case T_POLL:
		rv = poll(NULL, 0, (int)ms);
		err = rv < 0 ? errno : 0;
		set_result(r, rv == 0, rv, err, t0, NULL);
		break;
	case T_COND_TIMEDWAIT: {
		struct timespec ts = deadline(CLOCK_MONOTONIC, ms);
		int rc, spurious = 0;

		pthread_mutex_lock(&ct_lock);
		while ((rc = pthread_cond_timedwait(&ct_cond, &ct_lock, &ts)) == 0)
			spurious++;
		pthread_mutex_unlock(&ct_lock);
		snprintf(extra, sizeof(extra), "spurious=%d", spurious);
		set_result(r, rc == ETIMEDOUT, rc, rc, t0, extra);
		break;
	}
	case T_COND_WAIT: {
		int rc = 0, spurious = 0;

		pthread_mutex_lock(&cw_lock);
		while (!cw_flag && rc == 0) {
			rc = pthread_cond_wait(&cw_cond, &cw_lock);
			if (!cw_flag)
				spurious++;
		}
		cw_flag = 0;
		pthread_mutex_unlock(&cw_lock);
		snprintf(extra, sizeof(extra), "spurious=%d", spurious);
		set_result(r, rc == 0, rc, rc, t0, extra);
		break;
	}
	case T_READ: {
		char buf[16] = "";
		ssize_t n = read(pipefd[0], buf, sizeof(buf) - 1);

		err = n < 0 ? errno : 0;
		snprintf(extra, sizeof(extra), "data=%s", n == 6 && memcmp(buf, "hello\n", 6) == 0 ? "hello" : "bad");
		set_result(r, n == 6 && memcmp(buf, "hello\n", 6) == 0, n, err, t0, extra);
		break;
	}
	case T_EPOLL: {
		struct epoll_event ev;
		int n = epoll_wait(epfd, &ev, 1, (int)ms);

		err = n < 0 ? errno : 0;
		set_result(r, n == 0 || (n < 0 && err == EINTR), n, err, t0, NULL);
		break;
	}
	case T_BUSY: {
		unsigned long bad = 0, canary = 0, chunks = 0;

		while (now_ms() - t0 < ms)
			bad += busy_chunk(chunks++ * 1000003UL, &canary);
		snprintf(extra, sizeof(extra), "bad=%lu canary=%lu chunks=%lu", bad, canary, chunks);
		set_result(r, bad == 0 && canary == 0, 0, 0, t0, extra);
		break;
	}
	}
}

static void *round_main(void *arg)
{
	struct round_thread *t = arg;
	long seen = 0;

	pthread_mutex_lock(&lock);
	t->tid = gettid_();
	pthread_cond_broadcast(&changed);
	for (;;) {
		while (round_no == seen)
			pthread_cond_wait(&changed, &lock);
		seen = round_no;
		long ms = round_ms;
		pthread_mutex_unlock(&lock);
		run_call(t, ms);
		pthread_mutex_lock(&lock);
		finished++;
		pthread_cond_broadcast(&changed);
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr1_handled, 1);
}

static void on_usr2(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr2_handled, 1);
}

static void on_cont(int sig)
{
	(void)sig;
	atomic_fetch_add(&cont_handled, 1);
}

static void *sigsuspend_main(void *arg)
{
	sigset_t open_mask;

	(void)arg;
	pthread_sigmask(SIG_SETMASK, NULL, &open_mask);
	sigdelset(&open_mask, SIGUSR1);
	sigdelset(&open_mask, SIGUSR2);
	sigdelset(&open_mask, SIGCONT);
	pthread_mutex_lock(&lock);
	sigsuspend_tid = gettid_();
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	for (;;) {
		sigsuspend(&open_mask);	/* always -1/EINTR */
		atomic_fetch_add(&sigsuspend_returns, 1);
		if (atomic_load(&policy_wanted)) {
			own_policy(sigsuspend_policy, sizeof(sigsuspend_policy));
			atomic_store(&policy_wanted, 0);
		}
	}
	return NULL;
}

static void *idle_main(void *arg)
{
	long k = (long)(intptr_t)arg, seen = 0;

	pthread_mutex_lock(&idle_lock);
	for (;;) {
		while (idle_gen == seen)
			pthread_cond_wait(&idle_cond, &idle_lock);
		seen = idle_gen;
		own_policy(idle_policy[k], sizeof(idle_policy[k]));
		idle_done++;
		pthread_cond_broadcast(&idle_cond);
	}
	return NULL;
}

static void *churn_child(void *arg)
{
	char pol[LINE_LEN / 2];

	(void)arg;
	own_policy(pol, sizeof(pol));
	pthread_mutex_lock(&churn_lock);
	memcpy(churn_policy, pol, sizeof(pol));
	pthread_mutex_unlock(&churn_lock);
	return NULL;
}

static void *churn_main(void *arg)
{
	(void)arg;
	while (atomic_load(&churn_on)) {
		pthread_t kids[4];
		int n = 0;

		for (int i = 0; i < 4; i++)
			if (pthread_create(&kids[n], NULL, churn_child, NULL) == 0)
				n++;
		for (int i = 0; i < n; i++)
			pthread_join(kids[i], NULL);
		atomic_fetch_add(&churn_created, n);
		usleep(200);
	}
	return NULL;
}

static long parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	return v;
}

static int start_threads(void)
{
	pthread_condattr_t ca;
	struct epoll_event ev = { .events = EPOLLIN };

	if (pipe(pipefd) || pipe(epipe))
		return -1;
	epfd = epoll_create1(0);
	ev.data.fd = epipe[0];
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, epipe[0], &ev))
		return -1;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cw_cond, &ca);
	pthread_cond_init(&ct_cond, &ca);
	pthread_condattr_destroy(&ca);

	for (int i = 0; i < NROUND; i++) {
		rt[i].index = i;
		if (pthread_create(&rt[i].thread, NULL, round_main, &rt[i]))
			return -1;
	}
	pthread_t st;
	if (pthread_create(&st, NULL, sigsuspend_main, NULL))
		return -1;
	if (nidle) {
		idle_policy = calloc((size_t)nidle, sizeof(*idle_policy));
		if (!idle_policy)
			return -1;
	}
	for (long k = 0; k < nidle; k++) {
		pthread_t it;

		if (pthread_create(&it, NULL, idle_main, (void *)(intptr_t)k))
			return -1;
	}
	pthread_mutex_lock(&lock);
	for (;;) {
		int all = sigsuspend_tid != 0;

		for (int i = 0; i < NROUND; i++)
			all = all && rt[i].tid != 0;
		if (all)
			break;
		pthread_cond_wait(&changed, &lock);
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

static void do_report(const char *name, char *reply)
{
	if (strcmp(name, "sigsuspend") == 0) {
		atomic_store(&policy_wanted, 1);
		syscall(SYS_tgkill, getpid(), sigsuspend_tid, SIGUSR2);
		for (int i = 0; i < 5000 && atomic_load(&policy_wanted); i++)
			usleep(1000);
		long h1 = atomic_load(&usr1_handled), h2 = atomic_load(&usr2_handled) + atomic_load(&cont_handled);
		long ret = atomic_load(&sigsuspend_returns);
		snprintf(reply, LINE_LEN, "sigsuspend tid=%d handled=%ld returns=%ld ok=%d %s",
			 (int)sigsuspend_tid, h1 + h2, ret, ret == h1 + h2,
			 atomic_load(&policy_wanted) ? "mode=? nodes=? (no answer)" : sigsuspend_policy);
		return;
	}
	if (strcmp(name, "churn") == 0) {
		pthread_mutex_lock(&churn_lock);
		snprintf(reply, LINE_LEN, "churn created=%ld %s", atomic_load(&churn_created), churn_policy);
		pthread_mutex_unlock(&churn_lock);
		return;
	}
	for (int i = 0; i < NROUND; i++) {
		if (strcmp(name, names[i]) != 0)
			continue;
		pthread_mutex_lock(&lock);
		struct result r = rt[i].res;
		pthread_mutex_unlock(&lock);
		snprintf(reply, LINE_LEN, "%s tid=%d ok=%d rv=%ld errno=%d elapsed_ms=%ld %s%s%s",
			 names[i], (int)rt[i].tid, r.ok, r.rv, r.err, r.elapsed_ms, r.policy,
			 r.extra[0] ? " " : "", r.extra);
		return;
	}
	snprintf(reply, LINE_LEN, "error no thread '%.64s'", name);
}

static void do_idle_check(char *reply)
{
	long same = 0;

	pthread_mutex_lock(&idle_lock);
	idle_done = 0;
	idle_gen++;
	pthread_cond_broadcast(&idle_cond);
	while (idle_done < nidle)
		pthread_cond_wait(&idle_cond, &idle_lock);
	for (long k = 0; k < nidle; k++)
		same += strcmp(idle_policy[k], idle_policy[0]) == 0;
	snprintf(reply, LINE_LEN, "idle n=%ld same=%ld %s", nidle, same, nidle ? idle_policy[0] : "mode=- nodes=-");
	pthread_mutex_unlock(&idle_lock);
}

int main(int argc, char **argv)
{
	char line[LINE_LEN], reply[LINE_LEN];
	long default_ms = 3000;
	struct sigaction sa;
	sigset_t block;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--ms=", 5) == 0 && (default_ms = parse_long(argv[i] + 5, 1, 600000)) > 0)
			continue;
		if (strncmp(argv[i], "--idle=", 7) == 0 && (nidle = parse_long(argv[i] + 7, 0, MAX_IDLE)) >= 0)
			continue;
		fprintf(stderr, "pmp-blocker: bad argument '%s'\nUsage: pmp-blocker [--ms=N] [--idle=N]\n", argv[i]);
		return 2;
	}
	/* Without root, let any process of ours trace us (Yama scope 1). */
	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_cont;
	sigaction(SIGCONT, &sa, NULL);
	/* Only the sigsuspend thread takes SIGUSR1/2 and SIGCONT's handler:
	 * threads inherit this. */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGCONT);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (start_threads() < 0) {
		fprintf(stderr, "pmp-blocker: cannot start threads: %s\n", strerror(errno));
		return 1;
	}
	printf("ready %d\n", (int)getpid());

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *cmd = line, *arg = strchr(line, ' ');

		if (arg) {
			*arg++ = '\0';
			while (*arg == ' ')
				arg++;
		} else {
			arg = line + strlen(line);
		}
		if (!*cmd)
			continue;
		if (strcmp(cmd, "names") == 0) {
			size_t used = 0;

			reply[0] = '\0';
			for (int i = 0; i < NROUND; i++)
				used += (size_t)snprintf(reply + used, LINE_LEN - used, "%s%s", i ? " " : "", names[i]);
		} else if (strcmp(cmd, "tids") == 0) {
			size_t used = (size_t)snprintf(reply, LINE_LEN, "main=%d sigsuspend=%d", (int)getpid(), (int)sigsuspend_tid);

			for (int i = 0; i < NROUND; i++)
				used += (size_t)snprintf(reply + used, LINE_LEN - used, " %s=%d", names[i], (int)rt[i].tid);
		} else if (strcmp(cmd, "start") == 0) {
			long ms = *arg ? parse_long(arg, 1, 600000) : default_ms;

			if (ms < 0) {
				snprintf(reply, LINE_LEN, "error usage: start [MS]");
			} else {
				pthread_mutex_lock(&lock);
				if (finished < round_no * NROUND) {
					snprintf(reply, LINE_LEN, "error a round is running");
				} else {
					round_ms = ms;
					round_no++;
					pthread_cond_broadcast(&changed);
					snprintf(reply, LINE_LEN, "started %ld", ms);
				}
				pthread_mutex_unlock(&lock);
			}
		} else if (strcmp(cmd, "wait") == 0) {
			pthread_mutex_lock(&lock);
			while (finished < round_no * NROUND)
				pthread_cond_wait(&changed, &lock);
			pthread_mutex_unlock(&lock);
			snprintf(reply, LINE_LEN, "done");
		} else if (strcmp(cmd, "report") == 0) {
			do_report(arg, reply);
		} else if (strcmp(cmd, "policy") == 0) {
			own_policy(reply, LINE_LEN);
		} else if (strcmp(cmd, "idle-check") == 0) {
			do_idle_check(reply);
		} else if (strcmp(cmd, "churn") == 0 && strcmp(arg, "on") == 0) {
			if (!churn_started) {
				atomic_store(&churn_on, 1);
				churn_started = pthread_create(&churn_thread, NULL, churn_main, NULL) == 0;
			}
			snprintf(reply, LINE_LEN, churn_started ? "ok" : "error cannot start churn");
		} else if (strcmp(cmd, "churn") == 0 && strcmp(arg, "off") == 0) {
			atomic_store(&churn_on, 0);
			if (churn_started)
				pthread_join(churn_thread, NULL);
			churn_started = 0;
			snprintf(reply, LINE_LEN, "ok");
		} else if (strcmp(cmd, "ping") == 0) {
			snprintf(reply, LINE_LEN, "pong");
		} else if (strcmp(cmd, "exit") == 0) {
			printf("bye\n");
			return 0;
		} else {
			snprintf(reply, LINE_LEN, "error unknown command '%.64s'", cmd);
		}
		printf("%s\n", reply);
	}
	return 0;
}
