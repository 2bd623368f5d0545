/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.h - the tool's own standard streams: descriptors 0 to 2 held
 * open, a reader that goes away unable to stop a run midway, and a write
 * error on standard output reported (as util-linux's close_stdout does).
 */
#ifndef PMP_OUTPUT_H
#define PMP_OUTPUT_H

#include <stdbool.h>

/* First thing in main: hold descriptors 0 to 2 open, ignore SIGPIPE,
 * and check standard output at exit for the runs that leave through
 * exit() (--help, --usage, --version, usage errors). */
void output_init(void);

/* Flush and close standard output.  true if everything written reached
 * it, or its reader had gone (EPIPE); else false, after the line
 * "pidmempolicy: write error: REASON" on standard error. */
bool output_close(void);

#endif
