/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-inject - drive the ptrace backend directly, without the CLI: every
 * thread of PID is made to call set_mempolicy(2) through
 * ptrace_set_thread_policy(), one at a time, re-reading /proc/PID/task
 * until a pass finds no thread it has not done (at most 10 passes), all
 * in one session, ended (its scratch page unmapped) before the summary.
 *
 * Usage: pmp-inject [--allow-seccomp] [--no-rseq-fixup] [--stale-pidfd] [--tid=TID]
 *                   PID MODE NODES
 *
 *   MODE   default | preferred | bind | interleave | local | preferred-many
 *          | weighted-interleave, optionally +static or +relative
 *          (e.g. bind+static)
 *   NODES  a node list (0  0-3  0,2) or "-" for none
 *   --tid=TID   only that thread
 *   --no-rseq-fixup  resume a thread stopped inside an rseq critical
 *               section where it stopped (the bug the fixup prevents; for
 *               the negative control of the rseq test)
 *   --stale-pidfd  hand the engine, with each TID, the pidfd of a child
 *               that has exited and been reaped: a handle whose task is
 *               gone while its TID is alive, as when the TID was reused
 *               after the caller confirmed it (the engine must refuse)
 *
 * Prints one line per thread, flushed at once:
 *   TID RESULT err=NAME tracer=T yama=Y us=MICROSECONDS rseq=abort|- detail=...
 * then "summary threads=N set=S failed=F gone=G us_per_thread=U".
 * Exit status: 0 if every thread was set (gone ones do not count), 1 if
 * some were not, 2 on a usage error.
 *
 * Built against the tool's sources (needs config.h and libpmp), and linked
 * with -Wl,--wrap=tracee_rseq_abort_ip: the engine's rseq lookup comes
 * here first, which is how rseq= is known and --no-rseq-fixup works
 * without a word of either in the engine.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "ptrace-mem.h"
#include "ptrace.h"
#include "sys.h"

#define MAX_NODES 1024
#define MAX_THREADS 65536
#define MAX_PASSES 10

struct mode_name {
	const char *name;
	int mode;
};

static const struct mode_name modes[] = {
	{ "default", MPOL_DEFAULT },
	{ "preferred", MPOL_PREFERRED },
	{ "bind", MPOL_BIND },
	{ "interleave", MPOL_INTERLEAVE },
	{ "local", MPOL_LOCAL },
	{ "preferred-many", MPOL_PREFERRED_MANY },
	{ "weighted-interleave", MPOL_WEIGHTED_INTERLEAVE },
};

struct run {
	pid_t pid;
	struct ptrace_session *session;
	int pidfd;		/* the handles' pidfd, -1 for none */
	struct ptrace_request req;
	unsigned long mask[MAX_NODES / (8 * sizeof(unsigned long))];
	pid_t *done;
	size_t ndone;
	unsigned long nset, nfailed, ngone;
	double total_us;
};

/* The stand-in for the engine's rseq lookup: what the real one said for
 * the thread being injected, and whether to answer "not in a section"
 * whatever it says. */
static struct {
	bool no_fixup;
	bool aborted;
} rseq_seam;

#if PMP_PTRACE_SUPPORTED
bool __real_tracee_rseq_abort_ip(pid_t tid, uint64_t pc, uint64_t *abort_ip);
bool __wrap_tracee_rseq_abort_ip(pid_t tid, uint64_t pc, uint64_t *abort_ip);

bool __wrap_tracee_rseq_abort_ip(pid_t tid, uint64_t pc, uint64_t *abort_ip)
{
	if (rseq_seam.no_fixup)
		return false;
	rseq_seam.aborted = __real_tracee_rseq_abort_ip(tid, pc, abort_ip);
	return rseq_seam.aborted;
}
#endif

static int usage(void)
{
	fprintf(stderr, "Usage: pmp-inject [--allow-seccomp] [--no-rseq-fixup] [--stale-pidfd] [--tid=TID]"
		" PID MODE NODES\n");
	return 2;
}

static int parse_mode(const char *arg, int *mode)
{
	char name[64];
	const char *plus = strchr(arg, '+');
	size_t len = plus ? (size_t)(plus - arg) : strlen(arg);
	int flags = 0;

	if (len >= sizeof(name))
		return -1;
	memcpy(name, arg, len);
	name[len] = '\0';
	if (plus && strcmp(plus + 1, "static") == 0)
		flags = MPOL_F_STATIC_NODES;
	else if (plus && strcmp(plus + 1, "relative") == 0)
		flags = MPOL_F_RELATIVE_NODES;
	else if (plus)
		return -1;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(name, modes[i].name) == 0) {
			*mode = modes[i].mode | flags;
			return 0;
		}
	return -1;
}

static int parse_nodes(const char *arg, struct run *r)
{
	const size_t bits = 8 * sizeof(unsigned long);
	const char *p = arg;

	if (strcmp(arg, "-") == 0)
		return 0;
	while (*p) {
		char *end;
		long lo, hi;

		lo = strtol(p, &end, 10);
		if (end == p || lo < 0 || lo >= MAX_NODES)
			return -1;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo || hi >= MAX_NODES)
				return -1;
		}
		for (long n = lo; n <= hi; n++)
			r->mask[(size_t)n / bits] |= 1UL << ((size_t)n % bits);
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	r->req.mask = r->mask;
	r->req.maxnode = MAX_NODES + 1;
	return 0;
}

/* A pidfd whose task has exited and been reaped: a child's, opened while
 * it lived.  -1 with errno on failure. */
static int stale_pidfd(void)
{
	pid_t child = fork();
	int fd, err;

	if (child < 0)
		return -1;
	if (child == 0) {
		pause();
		_exit(0);
	}
	fd = sys_pidfd_open(child, 0);
	err = errno;
	kill(child, SIGKILL);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	errno = err;
	return fd;
}

static bool already_done(const struct run *r, pid_t tid)
{
	for (size_t i = 0; i < r->ndone; i++)
		if (r->done[i] == tid)
			return true;
	return false;
}

static void one(struct run *r, pid_t tid)
{
	struct ptrace_result res;
	struct timespec t0, t1;
	double us;

	struct task_handle h = { .pid = r->pid, .tid = tid, .per_thread = true, .pidfd = r->pidfd };
	const char *what;

	rseq_seam.aborted = false;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ptrace_set_thread_policy(r->session, &h, &r->req, &res);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
	r->total_us += us;
	if (res.failure == FAIL_NONE && res.err == 0)
		r->nset++;
	else if (res.failure == FAIL_EXITED)
		r->ngone++;
	else
		r->nfailed++;
	/* the call ran in the thread and failed: its errno says how */
	what = res.failure != FAIL_NONE ? failure_name(res.failure) : res.err ? "call-failed" : "set";
	printf("%d %s err=%s tracer=%d yama=%d us=%.0f rseq=%s detail=%s\n", (int)tid,
	       what, res.err ? strerrorname_np(res.err) : "0",
	       (int)res.tracer, res.yama_scope, us, rseq_seam.aborted ? "abort" : "-",
	       res.detail[0] ? res.detail : "-");
	fflush(stdout);
}

/* One pass over /proc/PID/task: returns how many new threads it did, or -1
 * if the process is gone. */
static long pass(struct run *r)
{
	char path[64];
	struct dirent *de;
	long n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)r->pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (end == de->d_name || *end || tid <= 0 || already_done(r, (pid_t)tid))
			continue;
		if (r->ndone >= MAX_THREADS)
			break;
		r->done[r->ndone++] = (pid_t)tid;
		one(r, (pid_t)tid);
		n++;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	struct run r;
	long tid_only = 0;
	int i = 1, passes = 0;
	char *end;

	memset(&r, 0, sizeof(r));
	r.pidfd = -1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--allow-seccomp") == 0)
			r.req.allow_seccomp = true;
		else if (strcmp(argv[i], "--no-rseq-fixup") == 0)
			rseq_seam.no_fixup = true;
		else if (strcmp(argv[i], "--stale-pidfd") == 0) {
			r.pidfd = stale_pidfd();
			if (r.pidfd < 0) {
				perror("pmp-inject: a pidfd for an exited child");
				return 1;
			}
		}
		else if (strncmp(argv[i], "--tid=", 6) == 0)
			tid_only = strtol(argv[i] + 6, NULL, 10);
		else
			return usage();
	}
	if (argc - i != 3)
		return usage();
	r.pid = (pid_t)strtol(argv[i], &end, 10);
	if (*end || r.pid <= 0)
		return usage();
	if (parse_mode(argv[i + 1], &r.req.mode) < 0) {
		fprintf(stderr, "pmp-inject: bad mode '%s'\n", argv[i + 1]);
		return usage();
	}
	if (parse_nodes(argv[i + 2], &r) < 0) {
		fprintf(stderr, "pmp-inject: bad node list '%s'\n", argv[i + 2]);
		return usage();
	}
	r.done = calloc(MAX_THREADS, sizeof(*r.done));
	if (!r.done) {
		perror("pmp-inject");
		return 1;
	}
	r.session = ptrace_session_begin(r.pid);
	if (tid_only > 0) {
		r.done[r.ndone++] = (pid_t)tid_only;
		one(&r, (pid_t)tid_only);
	} else {
		long got;

		while (passes++ < MAX_PASSES && (got = pass(&r)) > 0)
			;
	}
	ptrace_session_end(r.session);
	printf("summary threads=%zu set=%lu failed=%lu gone=%lu us_per_thread=%.0f\n", r.ndone, r.nset,
	       r.nfailed, r.ngone, r.ndone ? r.total_us / (double)r.ndone : 0.0);
	free(r.done);
	if (r.pidfd >= 0)
		close(r.pidfd);
	return r.nfailed || r.nset == 0 ? 1 : 0;
}
