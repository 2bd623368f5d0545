/*
 * pmp-sharedstack - a target whose threads' stacks are another thread's
 * data, as with Go or coroutines carving stacks out of a shared heap: two
 * threads run with their stack pointer in the middle of a heap buffer
 * filled with a known pattern (one calling sched_yield in a loop, one
 * blocked in ppoll: the two injection paths), while a third compares the bytes below
 * both stack pointers with the pattern, over and over.  A tool that writes
 * below the stack pointer is seen whenever the checker runs while the
 * bytes are there (the old stack scratch, written and put back around each
 * injected call, was seen thousands of times in five runs of pmp-inject).
 *
 * Usage: pmp-sharedstack.  Prints "ready PID", then answers each line on
 * stdin: "check" -> "corrupt=N checks=M" (N: comparisons that found the
 * pattern changed, since the start).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_LEN		(1024 * 1024)
#define WATCHED		16384		/* bytes below each stack pointer */

static unsigned char *buf, *expected;
static unsigned char *sps[2];
static atomic_ulong corrupt, checks;

static void fill(unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 131 + 7);
}

/* Never return: the stack is the buffer from here on.  sched_yield in a
 * loop: stopped in user code or after a call that is not restarted (path
 * B), and leaving the CPU to the checker. */
static void *spin_on(void *sp)
{
#if defined(__x86_64__)
	__asm__ volatile("mov %0, %%rsp\n1: mov $24, %%eax\n syscall\n jmp 1b"
			 : : "r"(sp) : "memory", "rax", "rcx", "r11");
#elif defined(__aarch64__)
	__asm__ volatile("mov sp, %0\n1: mov x8, #124\n svc #0\n b 1b" : : "r"(sp) : "memory", "x0", "x8");
#endif
	__builtin_unreachable();
}

/* ppoll(NULL, 0, NULL, NULL) forever, restarted after each stop. */
static void *block_on(void *sp)
{
#if defined(__x86_64__)
	__asm__ volatile("mov %0, %%rsp\n"
			 "1: mov $271, %%eax\n xor %%edi, %%edi\n xor %%esi, %%esi\n"
			 " xor %%edx, %%edx\n xor %%r10d, %%r10d\n xor %%r8d, %%r8d\n syscall\n jmp 1b"
			 : : "r"(sp) : "memory", "rax", "rdi", "rsi", "rdx", "r10", "r8", "rcx", "r11");
#elif defined(__aarch64__)
	__asm__ volatile("mov sp, %0\n"
			 "1: mov x8, #73\n mov x0, xzr\n mov x1, xzr\n mov x2, xzr\n mov x3, xzr\n"
			 " mov x4, xzr\n svc #0\n b 1b"
			 : : "r"(sp) : "memory", "x0", "x1", "x2", "x3", "x4", "x8");
#endif
	__builtin_unreachable();
}

static void *checker(void *arg)
{
	(void)arg;
	for (;;) {
		for (int i = 0; i < 2; i++) {
			size_t at = (size_t)(sps[i] - WATCHED - buf);

			if (memcmp(buf + at, expected + at, WATCHED) != 0)
				atomic_fetch_add(&corrupt, 1);
		}
		atomic_fetch_add(&checks, 1);
	}
	return NULL;
}

int main(void)
{
	void *(*fns[2])(void *) = { spin_on, block_on };
	char line[64];
	pthread_t t;

	buf = malloc(BUF_LEN);
	expected = malloc(BUF_LEN);
	if (!buf || !expected)
		return 1;
	fill(buf, BUF_LEN);
	fill(expected, BUF_LEN);
	for (int i = 0; i < 2; i++) {
		sps[i] = buf + (size_t)(i + 1) * BUF_LEN / 3;
		sps[i] = (unsigned char *)((unsigned long)sps[i] & ~15UL);
		if (pthread_create(&t, NULL, fns[i], sps[i]) != 0)
			return 1;
	}
	if (pthread_create(&t, NULL, checker, NULL) != 0)
		return 1;
	usleep(100000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "check", 5) == 0)
			printf("corrupt=%lu checks=%lu\n", atomic_load(&corrupt), atomic_load(&checks));
		else
			printf("error unknown command\n");
		fflush(stdout);
	}
	return 0;
}
