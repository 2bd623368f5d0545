/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tasklist.c - /proc/PID/task read in large getdents64(2) batches.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tasklist.h"

/* The kernel's PID_MAX_LIMIT (4M): no TID is larger. */
#define PID_LIMIT 4194304L
#define LISTING_BUF_MIN 32768		/* as glibc's readdir */
#define LISTING_BUF_MAX (4u << 20)

int tasklist_open(pid_t pid, size_t slack, struct task_listing *l)
{
	char path[64];
	struct stat st;
	size_t want = LISTING_BUF_MIN;

	l->buf = NULL;
	l->threads = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	l->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->fd < 0)
		return -1;
	/* the directory's link count grows by one per thread: room for them
	 * and for some born meanwhile, so that one call reads them all */
	if (fstat(l->fd, &st) == 0 && st.st_nlink < LISTING_BUF_MAX / TASKLIST_DIRENT_MAX) {
		l->threads = (size_t)st.st_nlink;
		want = (l->threads + l->threads / 8 + slack) * TASKLIST_DIRENT_MAX;
	}
	if (want < LISTING_BUF_MIN)
		want = LISTING_BUF_MIN;
	if (want > LISTING_BUF_MAX)
		want = LISTING_BUF_MAX;
	l->cap = want;
	l->buf = malloc(l->cap);
	if (!l->buf) {
		close(l->fd);
		l->fd = -1;
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void tasklist_close(struct task_listing *l)
{
	if (l->fd >= 0)
		close(l->fd);
	free(l->buf);
	l->fd = -1;
	l->buf = NULL;
}

void tasklist_grow(struct task_listing *l)
{
	char *grown;

	if (l->cap >= LISTING_BUF_MAX)
		return;
	grown = realloc(l->buf, l->cap * 2);
	if (grown) {
		l->buf = grown;
		l->cap *= 2;
	}
}

ssize_t tasklist_fill(struct task_listing *l, int *calls, bool *eof)
{
	size_t used = 0;

	*eof = false;
	while (l->cap - used >= TASKLIST_DIRENT_MAX) {
		ssize_t got = getdents64(l->fd, l->buf + used, l->cap - used);

		if (got < 0)
			return -1;
		if (got == 0) {
			*eof = true;
			break;
		}
		(*calls)++;
		used += (size_t)got;
	}
	return (ssize_t)used;
}

/* At most 7 digits (PID_LIMIT): no overflow to guard against.  Parsed
 * without divisions: it runs once per thread. */
pid_t tasklist_tid(const char *name)
{
	long v = 0;
	int i;

	for (i = 0; name[i] >= '0' && name[i] <= '9'; i++) {
		if (i == 7)
			return 0;
		v = v * 10 + (name[i] - '0');
	}
	return name[i] == '\0' && v <= PID_LIMIT ? (pid_t)v : 0;
}

/* The buffer is mapped, not allocated (no malloc lock), and large enough
 * for one getdents64 call to list 131,072 threads: a listing resumed by
 * position after threads exited passes over others (targets.c), which a
 * caller proving something of every thread must not. */
long tasklist_each(pid_t pid, bool (*fn)(pid_t tid, void *arg), void *arg)
{
	char path[64], *buf;
	long len = 0, met = 0;
	bool more = true;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	buf = mmap(NULL, LISTING_BUF_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	while (more && (len = syscall(SYS_getdents64, fd, buf, LISTING_BUF_MAX)) > 0) {
		for (long at = 0; more && at < len;) {
			const struct dirent64 *de = (const void *)(buf + at);
			pid_t tid = tasklist_tid(de->d_name);

			at += de->d_reclen;
			if (tid > 0) {
				met++;
				more = fn(tid, arg);
			}
		}
	}
	err = len < 0 && more ? errno : 0;
	munmap(buf, LISTING_BUF_MAX);
	close(fd);
	if (err) {
		errno = err;
		return -1;
	}
	return met;
}
