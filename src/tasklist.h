/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tasklist.h - reading /proc/PID/task: the threads of a process in the
 * kernel's thread-list order, many entries per getdents64(2) call, into a
 * buffer sized from the thread count.  What a listing means for the walk
 * (which threads are new, whether a pass holds) is targets.c's.
 */
#ifndef PMP_TASKLIST_H
#define PMP_TASKLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* No entry of /proc/PID/task is longer: an 8-byte-aligned dirent64 with a
 * name of 7 digits (PID_MAX_LIMIT) takes 32 bytes. */
#define TASKLIST_DIRENT_MAX 32

struct task_listing {
	int fd;			/* /proc/PID/task */
	char *buf;
	size_t cap;
	size_t threads;		/* how many it had when opened, as far as known */
};

/* Open /proc/PID/task with a buffer for its threads and some born
 * meanwhile, plus `slack` entries.  0, or -1 with errno. */
int tasklist_open(pid_t pid, size_t slack, struct task_listing *l);

void tasklist_close(struct task_listing *l);

/* A larger buffer for the next read, when this one did not fit. */
void tasklist_grow(struct task_listing *l);

/* Read entries into l->buf from the directory's current position until
 * its end or until the buffer is nearly full.  Returns the bytes read, or
 * -1 with errno; *calls counts the reads that returned entries, *eof is
 * set at the end. */
ssize_t tasklist_fill(struct task_listing *l, int *calls, bool *eof);

/* The TID an entry's name gives, or 0 for "." and "..". */
pid_t tasklist_tid(const char *name);

/* Call fn for each thread of process pid until it returns false, all of
 * them read in one go where the kernel allows, without malloc: the
 * orphaned tracing process calls it (its tool, killed, may have held
 * malloc's locks).  The threads met, or -1 with errno when /proc/PID/task
 * cannot be read. */
long tasklist_each(pid_t pid, bool (*fn)(pid_t tid, void *arg), void *arg);

#endif
