/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-parse.h - the number parsing of the helpers that take numbers on
 * their command line (pmp-rawcall, pmp-seccomp).  Define PMP_PROG, the
 * program's name for its messages, before including it.
 */
#ifndef PMP_PARSE_H
#define PMP_PARSE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PMP_PROG
# error "define PMP_PROG before including pmp-parse.h"
#endif

/* S, all of it, as a number in C notation (42, 0x2a, 052); anything else
 * is a usage error: "PROG: bad WHAT 'S'" and exit status 2. */
static inline long parse_num(const char *s, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, PMP_PROG ": bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

#endif
