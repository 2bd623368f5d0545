/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: PID and PID:INODE lists, and the walk over a real process. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "compat.h"
#include "sys.h"
#include "options.h"
#include "targets.h"
#include "tasklist.h"
#include "tap.h"

static volatile pid_t sleeper_tid;

/* Descriptors open in this process now. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3;	/* ".", ".." and the directory's own */
}

static int is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

struct seen {
	int handles, ok, leader;
	int done, handles_at_done;
	pid_t done_pid;
	pid_t tids[64];
};

static void count(struct task_handle *h, void *arg)
{
	struct seen *s = arg;

	if (s->handles < 64)
		s->tids[s->handles] = h->tid;
	s->handles++;
	if (h->problem == FAIL_NONE && h->pidfd >= 0)
		s->ok++;
	if (h->tid == h->pid)
		s->leader++;
}

static void done(pid_t pid, void *arg)
{
	struct seen *s = arg;

	s->done++;
	s->done_pid = pid;
	s->handles_at_done = s->handles;
}

static void *sleeper(void *arg)
{
	(void)arg;
	sleeper_tid = gettid();
	pause();
	return NULL;
}

/* A walk in batches: each batch's size, and whether every handle's
 * pidfd was open while its batch was in hand. */
struct batches {
	struct visited *v;
	size_t batches, largest;
	int closed;	/* handles whose pidfd was not open */
	int mixed;	/* batches with handles of more than one process */
};

static void collect(struct task_handle *h, void *arg);

static void collect_batch(struct task_handle *hs, size_t n, void *arg)
{
	struct batches *b = arg;

	b->batches++;
	if (n > b->largest)
		b->largest = n;
	for (size_t i = 0; i < n; i++) {
		if (hs[i].pid != hs[0].pid)
			b->mixed++;
		if (hs[i].problem == FAIL_NONE && fcntl(hs[i].pidfd, F_GETFD) < 0)
			b->closed++;
		collect(&hs[i], b->v);
	}
}

/* Every TID a walk visits, in order of visit. */
struct visited {
	pid_t *tids;
	size_t n, cap;
};

static void collect(struct task_handle *h, void *arg)
{
	struct visited *v = arg;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 1024;
		pid_t *grown = realloc(v->tids, cap * sizeof(*grown));

		if (!grown)
			abort();
		v->tids = grown;
		v->cap = cap;
	}
	v->tids[v->n++] = h->tid;
}

/* Small thread stacks, but not below the architecture's least (128 KiB
 * on aarch64). */
#define SMALL_STACK (64 * 1024 > PTHREAD_STACK_MIN ? 64 * 1024 : PTHREAD_STACK_MIN)

/* collect, and at the first visit start spawn_more threads: more than
 * the listing buffer, sized from the count before, can take in one read */
static int spawn_more;

static void collect_and_spawn(struct task_handle *h, void *arg)
{
	pthread_attr_t attr;

	collect(h, arg);
	if (!spawn_more || pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setstacksize(&attr, SMALL_STACK) != 0)
		return;
	for (; spawn_more > 0; spawn_more--) {
		pthread_t t;

		if (pthread_create(&t, &attr, sleeper, NULL) != 0)
			abort();
	}
}

static int compare_tids(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* How many entries /proc/self/task lists now. */
static size_t threads_listed(void)
{
	DIR *d = opendir("/proc/self/task");
	size_t n = 0;
	struct dirent *de;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static const char *parse(const char *arg, size_t *n, struct pid_spec **specs)
{
	static char why[256];

	why[0] = '\0';
	if (options_parse_pids(arg, specs, n, why, sizeof(why)) == 0)
		return "";
	return why;
}

/* tasklist_each's visitor: counts, and stops after `stop' threads. */
struct each {
	int met, stop;
	bool leader;
};

static bool each_tid(pid_t tid, void *arg)
{
	struct each *e = arg;

	e->met++;
	e->leader |= tid == getpid();
	return e->met != e->stop;
}

int main(void)
{
	struct pid_spec *specs = NULL;
	size_t n = 0;
	struct seen s;
	pthread_t th[3];

	is_str(parse("1200", &n, &specs), "", "one PID");
	ok(n == 1 && specs[0].pid == 1200 && !specs[0].pinned, "PID stored");
	is_str(parse("1,2,3:77", &n, &specs), "", "a comma list with PID:INODE");
	ok(n == 4 && specs[3].pid == 3 && specs[3].pinned && specs[3].inode == 77, "PID:INODE stored");
	is_str(parse("0", &n, &specs), "invalid PID '0': expected a number from 1 to 4194304", "PID 0");
	is_str(parse("-5", &n, &specs), "invalid PID '-5': expected a number from 1 to 4194304", "negative PID");
	is_str(parse("12a", &n, &specs), "invalid PID '12a': expected a number from 1 to 4194304", "not a number");
	is_str(parse("99999999999999999999999", &n, &specs),
	       "invalid PID '99999999999999999999999': expected a number from 1 to 4194304", "overflow");
	is_str(parse("4194305", &n, &specs), "invalid PID '4194305': expected a number from 1 to 4194304",
	       "past PID_MAX_LIMIT");
	is_str(parse("12:", &n, &specs), "invalid PID:INODE '12:': the inode must be a positive number", "empty inode");
	is_str(parse("12:0", &n, &specs), "invalid PID:INODE '12:0': the inode must be a positive number", "inode 0");
	is_str(parse("12:x", &n, &specs), "invalid PID:INODE '12:x': the inode must be a positive number", "bad inode");
	is_str(parse("1,,2", &n, &specs), "empty PID in list '1,,2'", "empty list item");
	is_str(parse("", &n, &specs), "empty PID in list ''", "empty argument");
	is_str(parse(" 1", &n, &specs), "invalid PID ' 1': expected a number from 1 to 4194304", "leading blank");
	ok(n == 4, "failed parses append nothing");
	free(specs);

	/* one entry per process, where first given; a pin wins */
	specs = NULL;
	n = 0;
	is_str(parse("7,3,7", &n, &specs), "", "a PID twice");
	is_str(parse("3:40,9,3", &n, &specs), "", "again, pinned once");
	{
		char why[128] = "";

		ok(options_merge_pids(specs, &n, why, sizeof(why)) == 0, "merged");
		ok(n == 3 && specs[0].pid == 7 && specs[1].pid == 3 && specs[2].pid == 9, "first places kept: 7 3 9");
		ok(specs[1].pinned && specs[1].inode == 40 && !specs[0].pinned, "PID then PID:INODE: the pin holds");
		is_str(parse("9:1,9:2", &n, &specs), "", "one PID, two pins");
		ok(options_merge_pids(specs, &n, why, sizeof(why)) < 0, "refused");
		is_str(why, "pid 9 is pinned to two processes (inodes 1 and 2)", "why");
	}
	free(specs);

	/* walk this process: three extra threads */
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, sleeper, NULL) != 0)
			return 99;
	{
		struct each all = { 0, -1, false }, two = { 0, 2, false };

		ok(tasklist_each(getpid(), each_tid, &all) == 4 && all.met == 4 && all.leader,
		   "tasklist_each: four threads, the leader among them (met %d)", all.met);
		ok(tasklist_each(getpid(), each_tid, &two) == 2 && two.met == 2, "tasklist_each stops when told");
		errno = 0;
		ok(tasklist_each(-1, each_tid, &all) == -1 && errno == ENOENT, "tasklist_each: no such process");
	}
	{
		struct pid_spec self = { .pid = getpid() };

		memset(&s, 0, sizeof(s));
		ok(targets_walk(&self, false, &(struct task_visitor){ count, NULL, &s, NULL }) == 0, "walk of the process");
		ok(s.handles == 1 && s.ok == 1 && s.leader == 1, "without -a: the leader alone, confirmed");

		memset(&s, 0, sizeof(s));
		ok(targets_walk(&self, true, &(struct task_visitor){ count, done, &s, NULL }) == 0, "walk of every thread");
		ok(s.handles == 4, "with -a: four threads visited once each (got %d)", s.handles);
		ok(s.done == 1 && s.done_pid == self.pid && s.handles_at_done == 4,
		   "the process said done once, after its last thread");
		ok(s.leader == 1, "the leader among them");
		/* on kernels before 6.9 the other threads come back as FAIL_NO_THREAD_PIDFD */
		ok(s.ok == 4 || s.ok == 1, "threads opened or reported (ok=%d)", s.ok);
	}
	{
		struct pid_spec self = { .pid = getpid() };
		int before = open_fds();

		while (!sleeper_tid)
			usleep(1000);
		ok(sys_null_signal_works(), "the null-signal probe works here");
		{
			int fd = sys_pidfd_open(sleeper_tid, PIDFD_THREAD);

			ok(sys_thread_pidfds_supported() == (fd >= 0),
			   "PIDFD_THREAD support is told right (a worker's thread pidfd: %d)", fd);
			if (fd >= 0)
				close(fd);
		}
		ok(sys_is_thread_of(getpid(), sleeper_tid), "a thread of ours is a thread of ours");
		ok(!sys_is_thread_of(getppid(), sleeper_tid), "and not a thread of our parent");
		ok(!sys_is_thread_of(getpid(), getppid()), "our parent is not a thread of ours");
		memset(&s, 0, sizeof(s));
		targets_walk(&self, true, &(struct task_visitor){ count, NULL, &s, NULL });
		ok(open_fds() == before, "a walk leaves no descriptor open (%d before, %d after)",
		   before, open_fds());
	}
	{
		int fds[6], closing[5];

		for (int i = 0; i < 6; i++)
			fds[i] = dup(0);
		/* out of order, with a gap: fds[2] stays open */
		closing[0] = fds[4];
		closing[1] = fds[0];
		closing[2] = fds[5];
		closing[3] = fds[1];
		closing[4] = fds[3];
		sys_close_fds(closing, 5);
		ok(!is_open(fds[0]) && !is_open(fds[1]) && !is_open(fds[3]) && !is_open(fds[4]) &&
		   !is_open(fds[5]), "sys_close_fds closes every fd it was given");
		ok(is_open(fds[2]), "and not the one in the gap");
		close(fds[2]);
	}
	{
		/* 2,000 threads more: a listing of some 60 KiB, each visited once */
		struct pid_spec self = { .pid = getpid() };
		struct visited v = { 0 };
		pthread_attr_t attr;
		size_t dups = 0, listed;
		int started = 0;

		if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, SMALL_STACK) != 0)
			return 99;
		for (; started < 2000; started++) {
			pthread_t t;

			if (pthread_create(&t, &attr, sleeper, NULL) != 0)
				break;
		}
		listed = threads_listed();
		ok(targets_walk(&self, true, &(struct task_visitor){ collect, NULL, &v, NULL }) == 0, "walk of %zu threads", listed);
		qsort(v.tids, v.n, sizeof(*v.tids), compare_tids);
		for (size_t i = 1; i < v.n; i++)
			dups += v.tids[i] == v.tids[i - 1];
		ok(started == 2000 && v.n == listed && dups == 0,
		   "each of them visited once (%d started, %zu listed, %zu visits, %zu twice)",
		   started, listed, v.n, dups);
		free(v.tids);

		/* the same walk in batches: each thread once, in batches of at
		 * most TARGETS_BATCH, each handle's pidfd open in its batch,
		 * and none left open after */
		{
			struct batches b = { .v = &v };
			int fds_before = open_fds();

			memset(&v, 0, sizeof(v));
			ok(targets_walk(&self, true, &(struct task_visitor){ .tasks = collect_batch, .arg = &b }) == 0,
			   "walk of %zu threads in batches", listed);
			qsort(v.tids, v.n, sizeof(*v.tids), compare_tids);
			dups = 0;
			for (size_t i = 1; i < v.n; i++)
				dups += v.tids[i] == v.tids[i - 1];
			ok(v.n == listed && dups == 0, "in batches, each visited once (%zu visits, %zu twice)", v.n, dups);
			ok(b.largest <= TARGETS_BATCH && b.batches >= v.n / TARGETS_BATCH && b.mixed == 0,
			   "%zu batches of at most %d (largest %zu), one process each", b.batches, TARGETS_BATCH,
			   b.largest);
			ok(b.closed == 0, "every handle's pidfd open while its batch is in hand");
			ok(open_fds() == fds_before, "no descriptor left after a walk in batches");
			free(v.tids);
		}

		/* 6,000 born during the first pass: the reads of the end of
		 * the list, and then the whole list, no longer fit the buffer */
		memset(&v, 0, sizeof(v));
		spawn_more = 6000;
		ok(targets_walk(&self, true, &(struct task_visitor){ collect_and_spawn, NULL, &v, NULL }) == 0, "walk of threads multiplying");
		listed = threads_listed();
		qsort(v.tids, v.n, sizeof(*v.tids), compare_tids);
		dups = 0;
		for (size_t i = 1; i < v.n; i++)
			dups += v.tids[i] == v.tids[i - 1];
		ok(spawn_more == 0 && v.n == listed && dups == 0,
		   "each old and new thread visited once (%zu listed, %zu visits, %zu twice)",
		   listed, v.n, dups);
		free(v.tids);
	}
	{
		struct pid_spec gone = { .pid = 4194304 };

		memset(&s, 0, sizeof(s));
		targets_walk(&gone, true, &(struct task_visitor){ count, NULL, &s, NULL });
		ok(s.handles == 1 && s.ok == 0, "a PID that names nothing gives one problem handle");
	}
	return tap_done();
}
