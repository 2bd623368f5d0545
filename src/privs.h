/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * privs.h - what the caller may do, through libcap: used to explain an
 * EPERM or EACCES from the kernel, or to foresee one in a dry run; never
 * to decide whether to call it.
 */
#ifndef PMP_PRIVS_H
#define PMP_PRIVS_H

/* 1 if CAP_SYS_NICE is in the caller's effective set, 0 if not, -1 if
 * libcap could not tell. */
int privs_have_sys_nice(void);

/* The same for CAP_SYS_PTRACE. */
int privs_have_sys_ptrace(void);

#endif
