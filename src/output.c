/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.c - the tool's own standard streams.
 *
 * A descriptor 0 to 2 that the caller closed (">&-") would be the first
 * one the tool opens: a pidfd, a /proc file, even /proc/TID/mem for
 * writing (the ptrace backend), and what the tool prints to standard
 * output would go there.  So each closed one is held by /dev/null, opened
 * read-only: writing to it fails with EBADF, as writing to a closed
 * descriptor would, and the write error is reported.
 *
 * SIGPIPE is ignored: a reader that goes away (| head -1) must not kill
 * the tool between two targets, leaving some set and some not; the write
 * fails with EPIPE instead, which, as in util-linux, is no error to
 * report (the reader chose to stop).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

static bool closed;

static void hold_open(int fd)
{
	int null;

	if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
		return;
	null = open("/dev/null", O_RDONLY | O_NOCTTY);
	if (null >= 0 && null != fd) {
		dup2(null, fd);
		close(null);
	}
}

bool output_close(void)
{
	bool failed = ferror(stdout) != 0;
	int err = 0;

	closed = true;
	errno = 0;
	if (fclose(stdout) != 0) {
		failed = true;
		err = errno;
	}
	if (!failed || err == EPIPE)
		return true;
	if (err)
		fprintf(stderr, "pidmempolicy: write error: %s\n", strerror(err));
	else	/* an earlier write failed; its errno is gone */
		fprintf(stderr, "pidmempolicy: write error\n");
	return false;
}

static void close_at_exit(void)
{
	if (!closed && !output_close())
		_exit(1);
}

void output_init(void)
{
	for (int fd = 0; fd <= 2; fd++)
		hold_open(fd);
	signal(SIGPIPE, SIG_IGN);
	atexit(close_at_exit);
}
