/*
 * privs.h - what the caller may do, through libcap: used to explain an
 * EPERM or EACCES from the kernel, never to decide whether to call it.
 */
#ifndef PMP_PRIVS_H
#define PMP_PRIVS_H

/* 1 if CAP_SYS_NICE is in the caller's effective set, 0 if not, -1 if
 * libcap could not tell. */
int privs_have_sys_nice(void);

#endif
