/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-rawcall - call pidfd_set_mempolicy(2) directly, without the tool.
 *
 * Usage: pmp-rawcall [--nr=451] (--pid=PID | --fd=FD) --mode=MODE
 *                    [--nodes=LIST] [--maxnode=N] [--flags=N]
 *
 * Makes one raw call  syscall(NR, pidfd, mode, nmask, maxnode, flags)  and
 * prints one line: "ok" if it returned 0, otherwise the errno name
 * (EPERM, ENOSYS, EINVAL, ...). Exit status: 0 for "ok", 1 for an error
 * returned by the call, 2 for a usage error or a failing pidfd_open(2).
 *
 *   --nr=N        syscall number (default 451, pidfd_set_mempolicy on x86_64
 *                 in the v2 patch)
 *   --pid=PID     open a pidfd for PID with pidfd_open(2)
 *   --fd=FD       pass FD as it is (e.g. -1, or an fd that is no pidfd)
 *   --mode=MODE   a number, or default|preferred|bind|interleave|local|
 *                 preferred_many, optionally followed by "+static" or
 *                 "+relative" (MPOL_F_STATIC_NODES / MPOL_F_RELATIVE_NODES)
 *   --nodes=LIST  node list like 0-3 or 0,2; "null" passes a NULL nmask
 *                 (default: NULL)
 *   --maxnode=N   maxnode argument (default: highest node in LIST + 2, or 0
 *                 for a NULL mask)
 *   --flags=N     flags argument (default 0)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMP_PROG "pmp-rawcall"
#include "pmp-parse.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define MASK_BITS 1024

static void usage(FILE *f, int status)
{
	fprintf(f, "Usage: pmp-rawcall [--nr=451] (--pid=PID | --fd=FD) --mode=MODE [--nodes=LIST]\n"
		   "                   [--maxnode=N] [--flags=N]\n"
		   "MODE: number or default|preferred|bind|interleave|local|preferred_many[+static|+relative]\n");
	exit(status);
}

static int parse_mode(const char *s)
{
	static const char *names[] = {"default", "preferred", "bind", "interleave", "local", "preferred_many"};
	char buf[64];
	int flags = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	char *plus = strchr(buf, '+');
	if (plus) {
		*plus++ = '\0';
		if (strcmp(plus, "static") == 0)
			flags = 1 << 15;
		else if (strcmp(plus, "relative") == 0)
			flags = 1 << 14;
		else {
			fprintf(stderr, "pmp-rawcall: bad mode flag '%s'\n", plus);
			exit(2);
		}
	}
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(buf, names[i]) == 0)
			return (int)i | flags;
	return (int)parse_num(buf, "mode") | flags;
}

/* Returns the highest node set, -1 if none. */
static int parse_nodes(const char *s, unsigned long *mask)
{
	int highest = -1;
	char *copy = strdup(s);
	if (!copy) {
		fprintf(stderr, "pmp-rawcall: out of memory\n");
		exit(2);
	}
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		long a, b;
		if (dash) {
			*dash = '\0';
			a = parse_num(tok, "node");
			b = parse_num(dash + 1, "node");
		} else {
			a = b = parse_num(tok, "node");
		}
		if (a < 0 || b < a || b >= MASK_BITS) {
			fprintf(stderr, "pmp-rawcall: bad node range in '%s'\n", s);
			exit(2);
		}
		for (long n = a; n <= b; n++)
			mask[n / (8 * sizeof(long))] |= 1UL << (n % (8 * sizeof(long)));
		if (b > highest)
			highest = (int)b;
	}
	free(copy);
	return highest;
}

int main(int argc, char **argv)
{
	long nr = 451, pid = -1, fd = -1, maxnode = -1, flags = 0;
	int have_pid = 0, have_fd = 0, have_mode = 0, mode = 0;
	const char *nodes = NULL;
	unsigned long mask[MASK_BITS / (8 * sizeof(unsigned long))];

	memset(mask, 0, sizeof(mask));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--nr=", 5) == 0)
			nr = parse_num(a + 5, "--nr");
		else if (strncmp(a, "--pid=", 6) == 0)
			pid = parse_num(a + 6, "--pid"), have_pid = 1;
		else if (strncmp(a, "--fd=", 5) == 0)
			fd = parse_num(a + 5, "--fd"), have_fd = 1;
		else if (strncmp(a, "--mode=", 7) == 0)
			mode = parse_mode(a + 7), have_mode = 1;
		else if (strncmp(a, "--nodes=", 8) == 0)
			nodes = a + 8;
		else if (strncmp(a, "--maxnode=", 10) == 0)
			maxnode = parse_num(a + 10, "--maxnode");
		else if (strncmp(a, "--flags=", 8) == 0)
			flags = parse_num(a + 8, "--flags");
		else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			usage(stdout, 0);
		else {
			fprintf(stderr, "pmp-rawcall: unknown argument '%s'\n", a);
			usage(stderr, 2);
		}
	}
	if (have_pid == have_fd || !have_mode) {
		fprintf(stderr, "pmp-rawcall: need exactly one of --pid/--fd, and --mode\n");
		usage(stderr, 2);
	}

	unsigned long *maskp = NULL;
	if (nodes && strcmp(nodes, "null") != 0) {
		int highest = parse_nodes(nodes, mask);
		maskp = mask;
		if (maxnode < 0)
			maxnode = highest + 2;
	}
	if (maxnode < 0)
		maxnode = 0;
	if (maxnode > MASK_BITS)
		maxnode = MASK_BITS; /* the buffer is only this large */

	if (have_pid) {
		fd = syscall(SYS_pidfd_open, (pid_t)pid, 0U);
		if (fd < 0) {
			fprintf(stderr, "pmp-rawcall: pidfd_open(%ld): %s\n", pid, strerror(errno));
			return 2;
		}
	}

	long r = syscall(nr, (int)fd, mode, maskp, (unsigned long)maxnode, (unsigned int)flags);
	if (r == 0) {
		puts("ok");
		return 0;
	}
	const char *name = strerrorname_np(errno);
	if (name)
		puts(name);
	else
		printf("E%d\n", errno);
	return 1;
}
