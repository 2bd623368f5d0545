/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-rseq - a target for the ptrace backend's rseq rule: one thread that
 * spins forever INSIDE an rseq critical section (restartable sequences,
 * rseq(2)), using the rseq area glibc registered for it.
 *
 * Usage: pmp-rseq
 *
 * The section is an endless jump to itself: the thread leaves it only
 * through its abort handler, where the kernel sends it when it is
 * preempted, migrated or given a signal while the section is armed.  The
 * handler counts the abort, answers a pending report request, re-arms the
 * section and enters it again.
 *
 * A tracer that stops the thread in the section, runs a system call on it
 * elsewhere and gives back the saved registers unchanged resumes it INSIDE
 * the section, but the kernel has meanwhile forgotten the section (it
 * clears rseq_cs once the thread runs outside it): no later signal ever
 * aborts it, and the thread never reports again.  A correct tracer resumes
 * it at the abort handler.
 *
 * Prints "ready PID", then answers each command on stdin with ONE line:
 *   tid       "tid=TID" of the spinning thread
 *   report    asks the spinner (flag + SIGUSR1) for its get_mempolicy(2):
 *             "ok=1 mode=M nodes=L aborts=A", or "ok=0 aborts=A" when it
 *             did not answer within 3 s (stuck in a section that no longer
 *             aborts)
 *   exit
 * Exits 1 at once if glibc registered no rseq area (rseq unavailable).
 * x86_64 and aarch64.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__aarch64__)

/* Arms the section (writes its descriptor to *rseq_cs) and enters it;
 * returns only through the abort handler. */
void pmp_rseq_spin(volatile uint64_t *rseq_cs);

/* The descriptor is struct rseq_cs (version, flags, start_ip,
 * post_commit_offset, abort_ip), 32-byte aligned; the 4 bytes before the
 * abort handler are the signature glibc registered (RSEQ_SIG: 0x53053053
 * on x86_64, the instruction brk #0x45e0 = 0xd428bc00 on aarch64). */
#define RSEQ_DESCRIPTOR						\
	"	.pushsection .data\n"					\
	"	.balign 32\n"						\
	"pmp_rseq_desc:\n"					\
	"	.long 0, 0\n"						\
	"	.quad pmp_rseq_start\n"				\
	"	.quad pmp_rseq_post_commit - pmp_rseq_start\n"	\
	"	.quad pmp_rseq_abort\n"				\
	"	.popsection\n"
#if defined(__x86_64__)
__asm__(
	RSEQ_DESCRIPTOR
	"	.text\n"
	"	.globl pmp_rseq_spin\n"
	"	.type pmp_rseq_spin, @function\n"
	"pmp_rseq_spin:\n"
	"	leaq pmp_rseq_desc(%rip), %rax\n"
	"	movq %rax, (%rdi)\n"
	"pmp_rseq_start:\n"
	"	jmp pmp_rseq_start\n"
	"pmp_rseq_post_commit:\n"
	"	ret\n"
	"	.long 0x53053053\n"
	"pmp_rseq_abort:\n"
	"	ret\n"
	"	.size pmp_rseq_spin, . - pmp_rseq_spin\n");
#else
__asm__(
	RSEQ_DESCRIPTOR
	"	.text\n"
	"	.globl pmp_rseq_spin\n"
	"	.type pmp_rseq_spin, %function\n"
	"pmp_rseq_spin:\n"
	"	adrp x1, pmp_rseq_desc\n"
	"	add x1, x1, :lo12:pmp_rseq_desc\n"
	"	str x1, [x0]\n"
	"pmp_rseq_start:\n"
	"	b pmp_rseq_start\n"
	"pmp_rseq_post_commit:\n"
	"	ret\n"
	"	.inst 0xd428bc00\n"
	"pmp_rseq_abort:\n"
	"	ret\n"
	"	.size pmp_rseq_spin, . - pmp_rseq_spin\n");
#endif

#define RSEQ_CS_OFFSET 8	/* struct rseq: cpu_id_start, cpu_id, rseq_cs */

static atomic_int spinner_tid, want_report, reported, report_mode;
static atomic_long aborts;
static char report_nodes[64];

static void on_usr1(int sig)
{
	(void)sig;	/* its delivery is what aborts the section */
}

static void nodes_text(const unsigned long *mask, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int n = 0; n < 64; n++) {
		int end = n;

		if (!(mask[0] >> n & 1))
			continue;
		while (end + 1 < 64 && (mask[0] >> (end + 1) & 1))
			end++;
		used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", n);
		if (end > n && used < len)
			used += (size_t)snprintf(buf + used, len - used, "-%d", end);
		n = end;
		if (used >= len)
			break;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

static void *spinner(void *arg)
{
	char *rseq_area = (char *)__builtin_thread_pointer() + __rseq_offset;

	(void)arg;
	atomic_store(&spinner_tid, (int)gettid());
	for (;;) {
		pmp_rseq_spin((volatile uint64_t *)(rseq_area + RSEQ_CS_OFFSET));
		atomic_fetch_add(&aborts, 1);
		if (atomic_load(&want_report)) {
			unsigned long mask[16] = { 0 };
			int mode = -1;

			if (syscall(SYS_get_mempolicy, &mode, mask, 1024UL, NULL, 0UL) < 0)
				mode = -1;
			nodes_text(mask, report_nodes, sizeof(report_nodes));
			atomic_store(&report_mode, mode);
			atomic_store(&want_report, 0);
			atomic_store(&reported, 1);
		}
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t th;
	sigset_t usr1;
	char line[64];

	if (__rseq_size == 0) {
		fprintf(stderr, "pmp-rseq: glibc registered no rseq area (kernel without rseq, or glibc.pthread.rseq=0)\n");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL) < 0)
		return 1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (pthread_create(&th, NULL, spinner, NULL) != 0)
		return 1;
	/* SIGUSR1 is for the spinner alone */
	if (pthread_sigmask(SIG_BLOCK, &usr1, NULL) != 0)
		return 1;
	while (!atomic_load(&spinner_tid))
		usleep(1000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "tid") == 0) {
			printf("tid=%d\n", atomic_load(&spinner_tid));
		} else if (strcmp(line, "report") == 0) {
			atomic_store(&reported, 0);
			atomic_store(&want_report, 1);
			pthread_kill(th, SIGUSR1);
			for (int i = 0; i < 300 && !atomic_load(&reported); i++)
				usleep(10000);
			if (atomic_load(&reported))
				printf("ok=1 mode=%d nodes=%s aborts=%ld\n", atomic_load(&report_mode),
				       report_nodes, atomic_load(&aborts));
			else
				printf("ok=0 aborts=%ld\n", atomic_load(&aborts));
		} else if (strcmp(line, "exit") == 0) {
			break;
		} else {
			printf("error unknown command '%s'\n", line);
		}
		fflush(stdout);
	}
	return 0;
}

#else

int main(void)
{
	fprintf(stderr, "pmp-rseq: x86_64 and aarch64 only\n");
	return 1;
}

#endif
