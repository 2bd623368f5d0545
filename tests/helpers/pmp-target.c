/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-target - a scriptable target process for the pidmempolicy guest tests.
 *
 * Usage: pmp-target [--threads=N] [--name=HEX]... [--leader-exit]
 *
 * --name=HEX names a thread (its comm) with the bytes HEX spells (1 to 15,
 * no NUL; any others, as a hostile process may choose): the first --name
 * names the main thread, the next ones workers 1, 2, ... in turn.
 * --leader-exit: once "ready" is printed the main thread calls
 * pthread_exit(3) and a thread of its own reads the commands (commands
 * "run in the main thread" then run in it); the process lives on, its
 * leader a zombie.
 *
 * Prints "ready PID" on stdout, then reads one command per line on stdin and
 * answers every command with exactly ONE line on stdout (flushed at once), so
 * a bats test can drive it through a fifo (see tests/guest/lib.bash).
 * Errors are answered with a line starting with "error ". EOF on stdin makes
 * it exit (status 0).
 *
 * Threads are addressed by index: 0 is the main thread, 1..N the worker
 * threads (started with --threads=N or "spawn N"). Workers sit idle waiting
 * for commands, so memory they fault in is allocated under THEIR task policy.
 *
 * Commands and replies:
 *   alloc MIB            mmap MIB MiB of private anonymous memory (no mbind),
 *                        touch every page from the main thread; reply: the
 *                        start address in hex as /proc/PID/numa_maps prints
 *                        it ("%08lx", e.g. 7f12a0000000). Each allocation is
 *                        its own VMA (it is fenced by PROT_NONE guard pages),
 *                        so it has its own numa_maps line.
 *   alloc-thread I MIB   the same, but mapped and touched by thread I.
 *   alloc-huge MIB       as alloc, but 2 MiB-aligned and madvise(MADV_HUGEPAGE)d
 *                        before the touch: transparent huge pages where the
 *                        kernel has them.
 *   alloc-shared MIB     as alloc, but MAP_SHARED anonymous memory (shmem).
 *   alloc-hugetlb MIB    as alloc, but shared hugetlbfs memory (MAP_HUGETLB,
 *                        2 MiB pages from vm.nr_hugepages; MIB even).
 *   alloc-file MIB PATH  as alloc, but the file at PATH (created, sized to
 *                        MIB MiB) mapped MAP_SHARED.
 *   touch ADDR           write every page of the allocation at ADDR again
 *                        (from the main thread); reply "ok".
 *   free ADDR            munmap the allocation at ADDR; reply "ok".
 *   policy               get_mempolicy(2) of the main thread; reply
 *                        "mode=M nodes=LIST", e.g. "mode=3 nodes=0-3",
 *                        "mode=0 nodes=none". M is the mode without the mode
 *                        flags; if MPOL_F_STATIC_NODES/MPOL_F_RELATIVE_NODES
 *                        are set, " flags=static" / " flags=relative" is
 *                        appended. Modes: 0 default, 1 preferred, 2 bind,
 *                        3 interleave, 4 local, 5 preferred_many.
 *   policy-thread I      the same, run in thread I.
 *   threads              reply: the tids of thread 0..N, space separated
 *                        (the first one is the PID).
 *   spawn N              start N more worker threads; reply "ok COUNT" with
 *                        the new number of worker threads.
 *   reap N               end the N highest-numbered workers; reply "ok COUNT".
 *   churn on|off         "on" starts ONE churn thread (if not running yet)
 *                        that keeps CHURN_KIDS short-lived threads alive,
 *                        creating a new one and ending the oldest every
 *                        millisecond or so: threads appear and disappear all
 *                        the time. New threads are created by the churn
 *                        thread, so they inherit ITS task policy. "off" stops
 *                        the churning; the churn thread and its last
 *                        CHURN_KIDS threads stay alive (idle) until exit.
 *                        Reply "ok CYCLES" (threads created so far). Churn
 *                        threads are not workers: they have no index.
 *   faulters N MIB       stop the running faulter threads (if any), then
 *                        start N faulter threads (N = 0: just stop) that
 *                        loop: mmap MIB MiB, touch every page, get_mempolicy
 *                        of themselves, munmap. Reply "ok LOOPS" with the
 *                        loops the stopped faulters completed. Not workers.
 *   zombie               fork a child that exits at once and is NOT reaped
 *                        (until "exit"); reply: the child's PID.
 *   mlock ADDR           mlock(2) the allocation at ADDR; reply "ok".
 *   pin ADDR KIB         vmsplice(2) the first KIB KiB of the allocation at
 *                        ADDR into a pipe that is never read, so that the
 *                        pipe holds a reference to each page and the kernel
 *                        cannot migrate them (as an O_DIRECT or RDMA buffer
 *                        is pinned); reply "ok PAGES" with the pages held.
 *   mbind-low MODE       map one page below the program's text, touch it
 *                        and give it a policy of its own, mbind(2) MODE (a
 *                        number: 1 preferred, 2 bind, 3 interleave) on node
 *                        0: the lowest line of numa_maps is then that
 *                        policy, whatever the task's; reply "ok".
 *   mbind-anon MODE      the same for every private anonymous mapping the
 *                        process has (as a JVM with -XX:+UseNUMA mbinds its
 *                        heap); reply "ok N" with the mappings that took it.
 *                        File mappings are left alone: on tmpfs (the
 *                        guest's root) mbind would set a policy on the file
 *                        itself, for every process that maps it.
 *   ping                 reply "pong".
 *   exit                 reply "bye" and exit 0.
 *
 * Only libc and pthreads are used (get_mempolicy via syscall(2)), so no
 * libnuma is needed in the guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 256
#define MAX_ALLOCS 1024
#define MAX_NODES 1024
#define LINE_MAX_LEN 512
#define MPOL_F_STATIC_NODES_ (1 << 15)
#define MPOL_F_RELATIVE_NODES_ (1 << 14)

struct worker {
	pthread_t thread;
	pid_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state; /* 0 idle, 1 request pending, 2 reply ready */
	int quit;
	char cmd[LINE_MAX_LEN];
	char reply[LINE_MAX_LEN];
};

struct alloc {
	uintptr_t start;
	size_t len;
};

static struct worker *workers[MAX_THREADS + 1]; /* index 1..nworkers */
static int nworkers;
static struct alloc allocs[MAX_ALLOCS];
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
static long page_size;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ---- churn: threads that come and go ---- */
#define CHURN_KIDS 4
struct churn_kid {
	pthread_t thread;
	volatile int quit;
};
static pthread_t churn_thread;
static int churn_started;
static volatile int churn_run;
static volatile long churn_cycles;

static void *churn_kid_main(void *arg)
{
	struct churn_kid *k = arg;

	while (!k->quit)
		usleep(200);
	return NULL;
}

static void *churn_main(void *arg)
{
	struct churn_kid *kids[CHURN_KIDS] = { 0 };
	unsigned next = 0;

	(void)arg;
	for (;;) {
		while (!churn_run)
			usleep(1000);
		struct churn_kid *old = kids[next];
		if (old) {
			old->quit = 1;
			pthread_join(old->thread, NULL);
			free(old);
			kids[next] = NULL;
		}
		struct churn_kid *k = calloc(1, sizeof(*k));
		if (k && pthread_create(&k->thread, NULL, churn_kid_main, k) == 0) {
			kids[next] = k;
			churn_cycles++;
		} else {
			free(k);
		}
		next = (next + 1) % CHURN_KIDS;
		usleep(1000);
	}
	return NULL;
}

/* ---- faulters: threads that fault memory in all the time ---- */
#define MAX_FAULTERS 64
static pthread_t faulter_threads[MAX_FAULTERS];
static int nfaulters;
static volatile int faulters_quit;
static volatile long faulter_loops;
static size_t faulter_len;

static void *faulter_main(void *arg)
{
	long ps = sysconf(_SC_PAGESIZE);
	unsigned long mask[MAX_NODES / (8 * sizeof(unsigned long))];

	(void)arg;
	while (!faulters_quit) {
		char *p = mmap(NULL, faulter_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			for (size_t off = 0; off < faulter_len; off += (size_t)ps)
				((volatile char *)p)[off] = 1;
			int mode;
			syscall(SYS_get_mempolicy, &mode, mask, (unsigned long)MAX_NODES, NULL, 0UL);
			munmap(p, faulter_len);
		}
		__atomic_add_fetch(&faulter_loops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static long stop_faulters(void)
{
	faulters_quit = 1;
	for (int i = 0; i < nfaulters; i++)
		pthread_join(faulter_threads[i], NULL);
	nfaulters = 0;
	faulters_quit = 0;
	long loops = faulter_loops;
	faulter_loops = 0;
	return loops;
}

static void reply_fmt(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, LINE_MAX_LEN, fmt, ap);
	va_end(ap);
}

/* Format a node mask as a list of ranges ("0-3", "0,2", "none"). */
static void format_nodes(const unsigned long *mask, unsigned maxnode, char *out, size_t outlen)
{
	size_t used = 0;
	unsigned n = 0;
	const unsigned bits = 8 * sizeof(unsigned long);

	out[0] = '\0';
	while (n < maxnode) {
		if (!(mask[n / bits] & (1UL << (n % bits)))) {
			n++;
			continue;
		}
		unsigned first = n;
		while (n + 1 < maxnode && (mask[(n + 1) / bits] & (1UL << ((n + 1) % bits))))
			n++;
		int w;
		if (first == n)
			w = snprintf(out + used, outlen - used, "%s%u", used ? "," : "", first);
		else
			w = snprintf(out + used, outlen - used, "%s%u-%u", used ? "," : "", first, n);
		if (w < 0 || (size_t)w >= outlen - used)
			break;
		used += (size_t)w;
		n++;
	}
	if (!used)
		snprintf(out, outlen, "none");
}

/* get_mempolicy(2) of the calling thread. */
static void do_policy(char *reply)
{
	int mode = 0;
	unsigned long mask[MAX_NODES / (8 * sizeof(unsigned long))];
	char nodes[LINE_MAX_LEN - 64];

	memset(mask, 0, sizeof(mask));
	if (syscall(SYS_get_mempolicy, &mode, mask, (unsigned long)MAX_NODES, NULL, 0UL) != 0) {
		reply_fmt(reply, "error get_mempolicy: %s", strerror(errno));
		return;
	}
	format_nodes(mask, MAX_NODES, nodes, sizeof(nodes));
	int flags = mode & (MPOL_F_STATIC_NODES_ | MPOL_F_RELATIVE_NODES_);
	mode &= ~(MPOL_F_STATIC_NODES_ | MPOL_F_RELATIVE_NODES_);
	reply_fmt(reply, "mode=%d nodes=%s%s%s", mode, nodes,
		  (flags & MPOL_F_STATIC_NODES_) ? " flags=static" : "",
		  (flags & MPOL_F_RELATIVE_NODES_) ? " flags=relative" : "");
}

static void touch_pages(uintptr_t start, size_t len)
{
	for (size_t off = 0; off < len; off += (size_t)page_size)
		((volatile char *)start)[off] = 1;
}

enum alloc_kind { ALLOC_PLAIN, ALLOC_HUGE, ALLOC_SHARED, ALLOC_HUGETLB, ALLOC_FILE };

/* mmap + touch MIB MiB in the calling thread; ALLOC_HUGE: 2 MiB-aligned
 * and madvise(MADV_HUGEPAGE)d first, so that the kernel backs it with
 * transparent huge pages where it has them; ALLOC_SHARED: MAP_SHARED
 * anonymous memory (shmem) in place of the private data part;
 * ALLOC_HUGETLB: the same with MAP_HUGETLB (hugetlbfs pages); ALLOC_FILE:
 * the file at path, shared. */
static void do_alloc(const char *arg, char *reply, enum alloc_kind kind, const char *path)
{
	bool huge = kind == ALLOC_HUGE || kind == ALLOC_HUGETLB;
	char *end;
	errno = 0;
	unsigned long mib = strtoul(arg, &end, 10);

	if (errno || end == arg || *end || mib == 0 || mib > 1UL << 20 || (kind == ALLOC_HUGETLB && mib % 2)) {
		reply_fmt(reply, "error alloc: bad size '%s'", arg);
		return;
	}
	size_t len = mib << 20;
	size_t guard = (size_t)page_size;
	size_t align = huge || kind == ALLOC_FILE ? (size_t)2 << 20 : guard;	/* a hugetlbfs file needs it */
	/* Reserve guard + data + guard as PROT_NONE, then open up the data part:
	 * neighbours with other protections keep the kernel from merging this
	 * VMA with another allocation, so its numa_maps line starts at the
	 * returned address. */
	size_t span = len + 2 * align;
	char *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		reply_fmt(reply, "error mmap: %s", strerror(errno));
		return;
	}
	/* at least one guard page below and above, the data aligned */
	char *data = (char *)(((uintptr_t)base + guard + align - 1) & ~(uintptr_t)(align - 1));
	if (mprotect(data, len, PROT_READ | PROT_WRITE) != 0) {
		reply_fmt(reply, "error mprotect: %s", strerror(errno));
		munmap(base, span);
		return;
	}
	if (kind == ALLOC_SHARED &&
	    mmap(data, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		reply_fmt(reply, "error mmap shared: %s", strerror(errno));
		munmap(base, span);
		return;
	}
	if (kind == ALLOC_FILE) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0 || ftruncate(fd, (off_t)len) != 0 ||
		    mmap(data, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			reply_fmt(reply, "error file %s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			munmap(base, span);
			return;
		}
		close(fd);
	}
	if (kind == ALLOC_HUGETLB &&
	    mmap(data, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB | MAP_FIXED, -1, 0) ==
		    MAP_FAILED) {
		reply_fmt(reply, "error mmap hugetlb: %s", strerror(errno));
		munmap(base, span);
		return;
	}
	if (kind == ALLOC_HUGE && madvise(data, len, MADV_HUGEPAGE) != 0) {
		reply_fmt(reply, "error madvise: %s", strerror(errno));
		munmap(base, span);
		return;
	}
	touch_pages((uintptr_t)data, len);

	pthread_mutex_lock(&allocs_lock);
	int slot = -1;
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (!allocs[i].start) {
			slot = i;
			break;
		}
	if (slot >= 0) {
		allocs[slot].start = (uintptr_t)data;
		allocs[slot].len = len;
	}
	pthread_mutex_unlock(&allocs_lock);
	if (slot < 0) {
		munmap(base, span);
		reply_fmt(reply, "error alloc: too many allocations");
		return;
	}
	reply_fmt(reply, "%08lx", (unsigned long)data);
}

static int find_alloc(const char *arg, char *reply)
{
	char *end;
	errno = 0;
	unsigned long addr = strtoul(arg, &end, 16);

	if (errno || end == arg || *end) {
		reply_fmt(reply, "error bad address '%s'", arg);
		return -1;
	}
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (allocs[i].start == addr)
			return i;
	reply_fmt(reply, "error no allocation at %s", arg);
	return -1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->lock);
	w->tid = gettid_();
	pthread_cond_broadcast(&w->cond);
	for (;;) {
		while (w->state != 1 && !w->quit)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->quit)
			break;
		if (strncmp(w->cmd, "alloc ", 6) == 0)
			do_alloc(w->cmd + 6, w->reply, ALLOC_PLAIN, NULL);
		else if (strcmp(w->cmd, "policy") == 0)
			do_policy(w->reply);
		else
			reply_fmt(w->reply, "error internal: bad worker command");
		w->state = 2;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static int spawn_one(char *reply)
{
	if (nworkers >= MAX_THREADS) {
		reply_fmt(reply, "error spawn: at most %d threads", MAX_THREADS);
		return -1;
	}
	struct worker *w = calloc(1, sizeof(*w));
	if (!w) {
		reply_fmt(reply, "error spawn: out of memory");
		return -1;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	int err = pthread_create(&w->thread, NULL, worker_main, w);
	if (err) {
		reply_fmt(reply, "error pthread_create: %s", strerror(err));
		free(w);
		return -1;
	}
	pthread_mutex_lock(&w->lock);
	while (!w->tid)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	workers[++nworkers] = w;
	return 0;
}

static void reap_one(void)
{
	struct worker *w = workers[nworkers];

	pthread_mutex_lock(&w->lock);
	w->quit = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
	workers[nworkers--] = NULL;
}

/* Run a command in worker I (I = 0 runs it in the main thread). */
static void in_thread(const char *index_str, const char *cmd, char *reply)
{
	char *end;
	errno = 0;
	long i = strtol(index_str, &end, 10);

	if (errno || end == index_str || *end || i < 0 || i > nworkers) {
		reply_fmt(reply, "error no thread '%s' (have 0..%d)", index_str, nworkers);
		return;
	}
	if (i == 0) {
		if (strncmp(cmd, "alloc ", 6) == 0)
			do_alloc(cmd + 6, reply, ALLOC_PLAIN, NULL);
		else
			do_policy(reply);
		return;
	}
	struct worker *w = workers[i];
	pthread_mutex_lock(&w->lock);
	snprintf(w->cmd, sizeof(w->cmd), "%s", cmd);
	w->state = 1;
	pthread_cond_broadcast(&w->cond);
	while (w->state != 2)
		pthread_cond_wait(&w->cond, &w->lock);
	memcpy(reply, w->reply, LINE_MAX_LEN);
	w->state = 0;
	pthread_mutex_unlock(&w->lock);
}

static long parse_count(const char *s)
{
	char *end;
	errno = 0;
	long n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < 0 || n > MAX_THREADS)
		return -1;
	return n;
}

/* pin ADDR KIB: see the header.  The pipe stays open until exit. */
static void do_pin(void *start, size_t len, const char *kib, char *reply)
{
	size_t want = kib ? (size_t)strtoul(kib, NULL, 10) * 1024 : 0;
	struct iovec iov;
	int fds[2];
	ssize_t n;

	if (!want || want > len) {
		reply_fmt(reply, "error usage: pin ADDR KIB (at most the allocation)");
		return;
	}
	if (pipe(fds) < 0) {
		reply_fmt(reply, "error pipe: %s", strerror(errno));
		return;
	}
	/* room for all of it, so that vmsplice does not block */
	if (fcntl(fds[1], F_SETPIPE_SZ, (int)want) < 0) {
		reply_fmt(reply, "error F_SETPIPE_SZ: %s", strerror(errno));
		return;
	}
	iov.iov_base = start;
	iov.iov_len = want;
	n = vmsplice(fds[1], &iov, 1, SPLICE_F_NONBLOCK);
	if (n < 0) {
		reply_fmt(reply, "error vmsplice: %s", strerror(errno));
		return;
	}
	reply_fmt(reply, "ok %ld", (long)(n / page_size));
}

static int parse_mode(const char *s, long *mode)
{
	char *end;

	*mode = strtol(s, &end, 10);
	return end == s || *end || *mode < 1 || *mode > 3 ? -1 : 0;
}

/* mbind-low MODE: see the header. */
static void do_mbind_low(const char *arg, char *reply)
{
	unsigned long mask = 1, text = 0;
	long mode;
	char line[512];
	FILE *maps;
	void *page;

	if (parse_mode(arg, &mode) < 0) {
		reply_fmt(reply, "error usage: mbind-low MODE");
		return;
	}
	maps = fopen("/proc/self/maps", "r");
	if (!maps || !fgets(line, sizeof(line), maps) || sscanf(line, "%lx", &text) != 1) {
		reply_fmt(reply, "error maps");
		if (maps)
			fclose(maps);
		return;
	}
	fclose(maps);
	/* a page below the lowest mapping, above mmap_min_addr */
	page = mmap((void *)(text - 16 * (unsigned long)page_size), (size_t)page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (page == MAP_FAILED) {
		reply_fmt(reply, "error mmap: %s", strerror(errno));
		return;
	}
	if (syscall(SYS_mbind, (unsigned long)page, (unsigned long)page_size, (int)mode, &mask,
		    (unsigned long)(sizeof(mask) * 8), 0U) < 0) {
		reply_fmt(reply, "error mbind: %s", strerror(errno));
		return;
	}
	*(volatile char *)page = 1;
	reply_fmt(reply, "ok");
}

/* mbind-anon MODE: see the header. */
static void do_mbind_anon(const char *arg, char *reply)
{
	unsigned long start, stop, inode, mask = 1;
	long mode, done = 0;
	char line[512], perms[8], path[256];
	FILE *maps;

	if (parse_mode(arg, &mode) < 0) {
		reply_fmt(reply, "error usage: mbind-anon MODE");
		return;
	}
	maps = fopen("/proc/self/maps", "r");
	if (!maps) {
		reply_fmt(reply, "error maps: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), maps)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %255s", &start, &stop, perms, &inode, path) < 4)
			continue;
		if (perms[3] != 'p' || inode != 0 || (path[0] == '[' && strcmp(path, "[heap]") != 0 &&
						      strcmp(path, "[stack]") != 0))
			continue;
		if (syscall(SYS_mbind, start, stop - start, (int)mode, &mask, (unsigned long)(sizeof(mask) * 8),
			    0U) == 0)
			done++;
	}
	fclose(maps);
	reply_fmt(reply, "ok %ld", done);
}

/* Read and answer the commands until EOF or "exit". */
static void *serve(void *exit_at_end)
{
	char line[LINE_MAX_LEN];
	char reply[LINE_MAX_LEN];
	pid_t zombies[64];
	int nzombies = 0;

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *cmd = line;
		while (*cmd == ' ' || *cmd == '\t')
			cmd++;
		char *arg = strchr(cmd, ' ');
		if (arg) {
			*arg++ = '\0';
			while (*arg == ' ')
				arg++;
		} else {
			arg = cmd + strlen(cmd);
		}

		if (*cmd == '\0') {
			continue; /* blank lines are ignored, no reply */
		} else if (strcmp(cmd, "alloc") == 0) {
			do_alloc(arg, reply, ALLOC_PLAIN, NULL);
		} else if (strcmp(cmd, "alloc-huge") == 0) {
			do_alloc(arg, reply, ALLOC_HUGE, NULL);
		} else if (strcmp(cmd, "alloc-shared") == 0) {
			do_alloc(arg, reply, ALLOC_SHARED, NULL);
		} else if (strcmp(cmd, "alloc-hugetlb") == 0) {
			do_alloc(arg, reply, ALLOC_HUGETLB, NULL);
		} else if (strcmp(cmd, "alloc-file") == 0) {
			char *path = strchr(arg, ' ');

			if (!path) {
				reply_fmt(reply, "error usage: alloc-file MIB PATH");
			} else {
				*path++ = '\0';
				do_alloc(arg, reply, ALLOC_FILE, path);
			}
		} else if (strcmp(cmd, "alloc-thread") == 0) {
			char *mib = strchr(arg, ' ');
			if (!mib) {
				reply_fmt(reply, "error usage: alloc-thread I MIB");
			} else {
				char sub[LINE_MAX_LEN];
				*mib++ = '\0';
				snprintf(sub, sizeof(sub), "alloc %s", mib);
				in_thread(arg, sub, reply);
			}
		} else if (strcmp(cmd, "touch") == 0 || strcmp(cmd, "free") == 0) {
			int i = find_alloc(arg, reply);
			if (i >= 0) {
				if (cmd[0] == 't') {
					touch_pages(allocs[i].start, allocs[i].len);
				} else {
					munmap((char *)allocs[i].start - page_size, allocs[i].len + 2 * (size_t)page_size);
					pthread_mutex_lock(&allocs_lock);
					allocs[i].start = 0;
					allocs[i].len = 0;
					pthread_mutex_unlock(&allocs_lock);
				}
				reply_fmt(reply, "ok");
			}
		} else if (strcmp(cmd, "policy") == 0) {
			do_policy(reply);
		} else if (strcmp(cmd, "mlock") == 0 || strcmp(cmd, "pin") == 0) {
			char *kib = strchr(arg, ' ');
			int i;

			if (kib)
				*kib++ = '\0';
			i = find_alloc(arg, reply);
			if (i >= 0 && cmd[1] == 'l') {
				if (mlock((void *)allocs[i].start, allocs[i].len) < 0)
					reply_fmt(reply, "error mlock: %s", strerror(errno));
				else
					reply_fmt(reply, "ok");
			} else if (i >= 0) {
				do_pin((void *)allocs[i].start, allocs[i].len, kib, reply);
			}
		} else if (strcmp(cmd, "mbind-low") == 0) {
			do_mbind_low(arg, reply);
		} else if (strcmp(cmd, "mbind-anon") == 0) {
			do_mbind_anon(arg, reply);
		} else if (strcmp(cmd, "policy-thread") == 0) {
			in_thread(arg, "policy", reply);
		} else if (strcmp(cmd, "threads") == 0) {
			size_t used = (size_t)snprintf(reply, LINE_MAX_LEN, "%d", (int)getpid());
			for (int i = 1; i <= nworkers && used < LINE_MAX_LEN; i++)
				used += (size_t)snprintf(reply + used, LINE_MAX_LEN - used, " %d", (int)workers[i]->tid);
			if (used >= LINE_MAX_LEN)
				reply_fmt(reply, "error threads: reply too long");
		} else if (strcmp(cmd, "spawn") == 0) {
			long n = parse_count(arg);
			if (n < 0) {
				reply_fmt(reply, "error usage: spawn N (N <= %d)", MAX_THREADS);
			} else {
				int ok = 1;
				for (long i = 0; i < n && ok; i++)
					ok = spawn_one(reply) == 0;
				if (ok)
					reply_fmt(reply, "ok %d", nworkers);
			}
		} else if (strcmp(cmd, "reap") == 0) {
			long n = parse_count(arg);
			if (n < 0 || n > nworkers) {
				reply_fmt(reply, "error usage: reap N (N <= %d)", nworkers);
			} else {
				for (long i = 0; i < n; i++)
					reap_one();
				reply_fmt(reply, "ok %d", nworkers);
			}
		} else if (strcmp(cmd, "zombie") == 0) {
			if (nzombies >= (int)(sizeof(zombies) / sizeof(zombies[0]))) {
				reply_fmt(reply, "error zombie: too many");
			} else {
				fflush(stdout);
				pid_t pid = fork();
				if (pid < 0) {
					reply_fmt(reply, "error fork: %s", strerror(errno));
				} else if (pid == 0) {
					_exit(0);
				} else {
					/* Wait until it really is a zombie, without reaping it. */
					siginfo_t si;
					memset(&si, 0, sizeof(si));
					if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0) {
						reply_fmt(reply, "error waitid: %s", strerror(errno));
					} else {
						zombies[nzombies++] = pid;
						reply_fmt(reply, "%d", (int)pid);
					}
				}
			}
		} else if (strcmp(cmd, "churn") == 0) {
			if (strcmp(arg, "on") == 0) {
				int err = 0;
				if (!churn_started) {
					err = pthread_create(&churn_thread, NULL, churn_main, NULL);
					churn_started = err == 0;
				}
				if (err) {
					reply_fmt(reply, "error pthread_create: %s", strerror(err));
				} else {
					churn_run = 1;
					reply_fmt(reply, "ok %ld", churn_cycles);
				}
			} else if (strcmp(arg, "off") == 0) {
				churn_run = 0;
				usleep(5000); /* let a cycle in progress finish */
				reply_fmt(reply, "ok %ld", churn_cycles);
			} else {
				reply_fmt(reply, "error usage: churn on|off");
			}
		} else if (strcmp(cmd, "faulters") == 0) {
			char *mib = strchr(arg, ' ');
			long n = -1;
			unsigned long m = 0;
			if (mib) {
				*mib++ = '\0';
				n = parse_count(arg);
				m = strtoul(mib, NULL, 10);
			}
			if (n < 0 || n > MAX_FAULTERS || m == 0 || m > 1024) {
				reply_fmt(reply, "error usage: faulters N MIB (N <= %d, 1 <= MIB <= 1024)", MAX_FAULTERS);
			} else {
				long loops = stop_faulters();
				int err = 0;
				faulter_len = m << 20;
				for (long i = 0; i < n && !err; i++) {
					err = pthread_create(&faulter_threads[nfaulters], NULL, faulter_main, NULL);
					if (!err)
						nfaulters++;
				}
				if (err)
					reply_fmt(reply, "error pthread_create: %s", strerror(err));
				else
					reply_fmt(reply, "ok %ld", loops);
			}
		} else if (strcmp(cmd, "ping") == 0) {
			reply_fmt(reply, "pong");
		} else if (strcmp(cmd, "exit") == 0) {
			printf("bye\n");
			fflush(stdout);
			break;
		} else {
			reply_fmt(reply, "error unknown command '%s'", cmd);
		}
		printf("%s\n", reply);
		fflush(stdout);
	}
	stop_faulters();
	for (int i = 0; i < nzombies; i++)
		waitpid(zombies[i], NULL, 0);
	while (nworkers > 0)
		reap_one();
	if (exit_at_end)	/* --leader-exit: no main thread returns for us */
		exit(0);
	return NULL;
}

/* Name thread I (0: the main thread) with the bytes of the hex string. */
static int name_thread(pthread_t thread, const char *hex)
{
	char name[16];
	size_t n = strlen(hex) / 2;

	if (strlen(hex) % 2 || n == 0 || n >= sizeof(name))
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int byte;

		if (sscanf(hex + 2 * i, "%2x", &byte) != 1 || byte == 0)
			return -1;
		name[i] = (char)byte;
	}
	name[n] = '\0';
	return pthread_setname_np(thread, name) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	char reply[LINE_MAX_LEN];
	long want_threads = 0;
	const char *names[MAX_THREADS + 1];
	int nnames = 0, leader_exit = 0;

	page_size = sysconf(_SC_PAGESIZE);
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--threads=", 10) == 0) {
			want_threads = parse_count(argv[i] + 10);
			if (want_threads < 0) {
				fprintf(stderr, "pmp-target: bad --threads value '%s'\n", argv[i] + 10);
				return 2;
			}
		} else if (strncmp(argv[i], "--name=", 7) == 0 && nnames <= MAX_THREADS) {
			names[nnames++] = argv[i] + 7;
		} else if (strcmp(argv[i], "--leader-exit") == 0) {
			leader_exit = 1;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf("Usage: pmp-target [--threads=N] [--name=HEX]... [--leader-exit]\n"
			       "Reads commands on stdin (alloc MIB, alloc-thread I MIB, touch ADDR, free ADDR,\n"
			       "policy, policy-thread I, threads, spawn N, reap N, churn on|off,\n"
			       "faulters N MIB, zombie, ping, exit),\n"
			       "answers one line per command on stdout. See the source header.\n");
			return 0;
		} else {
			fprintf(stderr, "pmp-target: unknown argument '%s'\nUsage: pmp-target [--threads=N] [--name=HEX]... [--leader-exit]\n", argv[i]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (long i = 0; i < want_threads; i++) {
		if (spawn_one(reply) != 0) {
			fprintf(stderr, "pmp-target: %s\n", reply);
			return 1;
		}
	}
	for (int i = 0; i < nnames; i++) {
		if (i > nworkers || name_thread(i ? workers[i]->thread : pthread_self(), names[i]) < 0) {
			fprintf(stderr, "pmp-target: cannot name thread %d '%s' (1 to 15 bytes in hex, "
				"not NUL; a thread --threads started)\n", i, names[i]);
			return 2;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	if (leader_exit) {
		pthread_t server;

		if (pthread_create(&server, NULL, serve, &leader_exit) != 0) {
			fprintf(stderr, "pmp-target: cannot start the command thread\n");
			return 1;
		}
		pthread_exit(NULL);	/* the process lives on in its other threads */
	}
	serve(NULL);
	return 0;
}
