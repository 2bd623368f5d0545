/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-hostile - targets whose memory is a trap for a tool that reads or
 * writes it: two threads each (one calling sched_yield in a loop: path B;
 * one blocked in ppoll: path A) whose stack pointer is set into memory
 * chosen by the mode:
 *
 *   shared-heap their stack is the middle of a heap buffer filled with a
 *               known pattern, as with Go or coroutines carving stacks out
 *               of a shared heap; a third thread compares the 16 KiB below
 *               both stack pointers with the pattern over and over, so a
 *               tool that writes below the stack pointer, even for
 *               microseconds, is seen (the old stack scratch, written and
 *               put back around each call, was seen thousands of times in
 *               five runs of pmp-inject).
 *   uffd-stack  their stack pointer is in a region registered with
 *               userfaultfd for missing pages, which no one ever fills:
 *               any read of it blocks until the target answers, i.e.
 *               forever.
 *   no-vdso     the [vdso] is unmapped and 8 GiB of executable, readable,
 *               never-touched anonymous memory is mapped at 4 GiB, before
 *               every other mapping: a scan for a system call instruction
 *               that reads it all takes seconds per thread.
 *   unmap-scratch 200 more threads, blocked in pause(2), then a last one
 *               that watches its own maps for the ptrace backend's scratch
 *               page (a new private anonymous read-write mapping of its
 *               size) and unmaps the first it sees: the threads after it
 *               find their node mask gone.
 *   uffd-scratch the same, but the last thread empties the page it finds
 *               (MADV_DONTNEED) and registers it with userfaultfd for
 *               missing pages, which no one fills, for the kernel's own
 *               faults too: a call that reads the mask there would wait
 *               forever.
 *
 * Usage: pmp-hostile MODE.  Prints "ready PID", or "skip REASON" and exits
 * 77 when the mode cannot be set up here (no userfaultfd); then answers
 * each line on stdin: "check" -> "corrupt=N checks=M unmapped=U"
 * (shared-heap: N comparisons found the pattern changed; unmap-scratch
 * and uffd-scratch: U scratch pages unmapped or emptied), and sleeps at
 * its end until killed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REGION_LEN	(1024 * 1024)
#define WATCHED		16384		/* shared-heap: bytes below each stack pointer */

static unsigned char *expected;		/* shared-heap: what the buffer holds */
static unsigned char *stacks;
static atomic_ulong corrupt, checks, unmapped;

/* Never return: the stack is the region from here on. */
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

static unsigned char *stack_of(int i)
{
	return stacks + (size_t)(i + 1) * REGION_LEN / 3 / 16 * 16;
}

static void *checker(void *arg)
{
	(void)arg;
	for (;;) {
		for (int i = 0; i < 2; i++) {
			size_t at = (size_t)(stack_of(i) - WATCHED - stacks);

			if (memcmp(stacks + at, expected + at, WATCHED) != 0)
				atomic_fetch_add(&corrupt, 1);
		}
		atomic_fetch_add(&checks, 1);
	}
	return NULL;
}

/* A malloc'd buffer with a pattern, and a thread watching it. */
static unsigned char *shared_heap(void)
{
	unsigned char *p = malloc(REGION_LEN);
	pthread_t t;

	expected = malloc(REGION_LEN);
	if (!p || !expected)
		return NULL;
	for (size_t i = 0; i < REGION_LEN; i++)
		p[i] = expected[i] = (unsigned char)(i * 131 + 7);
	stacks = p;
	if (pthread_create(&t, NULL, checker, NULL) != 0)
		return NULL;
	return p;
}

static int skip(const char *what)
{
	printf("skip %s: %s\n", what, strerror(errno));
	return 77;
}

/* A region whose missing pages only a userfaultfd reader could fill. */
static unsigned char *uffd_region(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	unsigned char *p;

	if (fd < 0)
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd < 0 || ioctl(fd, UFFDIO_API, &api) < 0)
		return NULL;
	p = mmap(NULL, REGION_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	reg.range.start = (unsigned long)p;
	reg.range.len = REGION_LEN;
	if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0)
		return NULL;
	return p;	/* fd stays open: the region stays registered */
}

/* The starts of the private anonymous read-write mappings of
 * /proc/self/maps that are len bytes long, read without malloc (which
 * could map such a thing itself); their number, at most max. */
#define MAPS_BUF	(1024 * 1024)
#define MAX_STARTS	4096

static char maps_buf[MAPS_BUF];

static int anon_of_len(unsigned long len, unsigned long *starts, int max)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), n = 0;
	size_t used = 0;
	ssize_t got;

	if (fd < 0)
		return 0;
	while (used < MAPS_BUF - 1 && (got = read(fd, maps_buf + used, MAPS_BUF - 1 - used)) > 0)
		used += (size_t)got;
	close(fd);
	maps_buf[used] = '\0';
	for (char *line = maps_buf, *next; line && *line && n < max; line = next) {
		unsigned long lo, hi, off, ino;
		char perms[8];
		int name_at = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %lu %n", &lo, &hi, perms, &off, &ino, &name_at) >= 5 &&
		    hi - lo == len && strcmp(perms, "rw-p") == 0 && ino == 0 && line[name_at] == '\0')
			starts[n++] = lo;
	}
	return n;
}

/* The size of the engine's scratch mapping (scratch_len in src/ptrace.c):
 * a 64-byte header and the largest mask, 8 KiB, in whole pages. */
static unsigned long scratch_size(void)
{
	unsigned long pg = (unsigned long)sysconf(_SC_PAGESIZE);

	return (64 + 8192 + pg - 1) / pg * pg;
}

static void *idle(void *arg)
{
	(void)arg;
	while (pause() < 0)
		;
	return NULL;
}

static unsigned long known[MAX_STARTS];
static int nknown;

static int uffd = -1;	/* uffd-scratch: where the page found is registered */

/* unmap-scratch: unmap it; uffd-scratch: empty it, and register it. */
static int take_away(unsigned long at, unsigned long len)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING,
				       .range = { .start = at, .len = len } };

	if (uffd < 0)
		return munmap((void *)at, len);
	if (madvise((void *)at, len, MADV_DONTNEED) < 0)
		return -1;
	return ioctl(uffd, UFFDIO_REGISTER, &reg);
}

static void *scratch_hunter(void *arg)
{
	unsigned long now[MAX_STARTS];

	(void)arg;
	for (;;) {
		int n = anon_of_len(scratch_size(), now, MAX_STARTS);

		for (int i = 0; i < n; i++) {
			bool seen = false;

			for (int j = 0; j < nknown && !seen; j++)
				seen = known[j] == now[i];
			if (!seen && take_away(now[i], scratch_size()) == 0) {
				atomic_fetch_add(&unmapped, 1);
				return idle(NULL);	/* one only */
			}
		}
	}
}

static int unmap_vdso(void)
{
	char line[512];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "re");
	int r = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			r = munmap((void *)lo, hi - lo);
	fclose(f);
	return r;
}

int main(int argc, char **argv)
{
	void *(*fns[2])(void *) = { spin_on, block_on };
	char line[64];
	pthread_t t;

	if (argc != 2)
		return 2;
	if (strcmp(argv[1], "shared-heap") == 0) {
		if (!shared_heap())
			return 1;
	} else if (strcmp(argv[1], "uffd-stack") == 0) {
		stacks = uffd_region();
		if (!stacks)
			return skip("userfaultfd");
	} else if (strcmp(argv[1], "uffd-scratch") == 0) {
		struct uffdio_api api = { .api = UFFD_API };

		/* not UFFD_USER_MODE_ONLY: the kernel's own reads must wait
		 * too, which takes root or vm.unprivileged_userfaultfd */
		uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
		if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0)
			return skip("userfaultfd for the kernel's faults");
		stacks = mmap(NULL, REGION_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stacks == MAP_FAILED)
			return 1;
	} else if (strcmp(argv[1], "unmap-scratch") == 0) {
		stacks = mmap(NULL, REGION_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stacks == MAP_FAILED)
			return 1;
	} else if (strcmp(argv[1], "no-vdso") == 0) {
		stacks = mmap(NULL, REGION_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stacks == MAP_FAILED)
			return 1;
		/* low, so that it comes before every other mapping in maps */
		if (mmap((void *)(1UL << 32), 8UL << 30, PROT_EXEC | PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED)
			return skip("an 8 GiB mapping");
	} else {
		return 2;
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t, NULL, fns[i], stack_of(i)) != 0)
			return 1;
	if (strcmp(argv[1], "no-vdso") == 0 && unmap_vdso() < 0)
		return skip("unmapping the vDSO");
	if (strcmp(argv[1], "unmap-scratch") == 0 || strcmp(argv[1], "uffd-scratch") == 0) {
		for (int i = 0; i < 200; i++)
			if (pthread_create(&t, NULL, idle, NULL) != 0)
				return 1;
		nknown = anon_of_len(scratch_size(), known, MAX_STARTS);
		if (pthread_create(&t, NULL, scratch_hunter, NULL) != 0)	/* the last thread */
			return 1;
	}
	usleep(100000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "check", 5) == 0)
			printf("corrupt=%lu checks=%lu unmapped=%lu\n", atomic_load(&corrupt),
			       atomic_load(&checks), atomic_load(&unmapped));
		else
			printf("error unknown command\n");
		fflush(stdout);
	}
	for (;;)
		pause();
}
