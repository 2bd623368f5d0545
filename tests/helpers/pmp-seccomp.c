/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-seccomp - run a command under a seccomp filter that traps chosen
 * syscall numbers, to prove a program never makes (or copes with the
 * absence of) a system call.
 *
 * Usage: pmp-seccomp --deny=NR[,NR...] [--action=kill|errno:NAME|errno:N]
 *                    [--] CMD [ARGS...]
 *
 *   --deny=LIST     x86_64 syscall numbers to trap (e.g. 451)
 *   --action=A      kill (default): the whole process is killed with SIGSYS
 *                   (a shell sees exit status 159) as soon as it makes one
 *                   of the calls; errno:ENOSYS / errno:EPERM / errno:N: the
 *                   call fails with that errno instead.
 *
 * Everything else is allowed. Calls made with a non-x86_64 ABI (i386 int 0x80,
 * x32) are killed, so the filter cannot be sidestepped. Sets
 * PR_SET_NO_NEW_PRIVS (required for unprivileged filters; it also means a
 * setuid CMD gains nothing). Errors: "pmp-seccomp: ..." on stderr, exit 126.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMP_PROG "pmp-seccomp"
#include "pmp-parse.h"

/* The filter kills a call made through any other ABI (i386, x32, AArch32). */
#if defined(__x86_64__)
# define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
# define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
# error "pmp-seccomp: add this architecture's AUDIT_ARCH"
#endif

#define MAX_DENY 64

struct errno_name {
	const char *name;
	int value;
};

static const struct errno_name errnos[] = {
	{"ENOSYS", ENOSYS}, {"EPERM", EPERM}, {"EINVAL", EINVAL}, {"EACCES", EACCES},
	{"ESRCH", ESRCH},   {"EFAULT", EFAULT}, {"EBADF", EBADF},   {"ENOMEM", ENOMEM},
};

static void usage(FILE *f, int status)
{
	fprintf(f, "Usage: pmp-seccomp --deny=NR[,NR...] [--action=kill|errno:NAME|errno:N] [--] CMD [ARGS...]\n");
	exit(status);
}

int main(int argc, char **argv)
{
	long deny[MAX_DENY];
	int ndeny = 0;
	unsigned int action = SECCOMP_RET_KILL_PROCESS;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strncmp(a, "--deny=", 7) == 0) {
			char *copy = strdup(a + 7);
			if (!copy) {
				fprintf(stderr, "pmp-seccomp: out of memory\n");
				return 126;
			}
			for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (ndeny >= MAX_DENY) {
					fprintf(stderr, "pmp-seccomp: at most %d syscalls\n", MAX_DENY);
					return 2;
				}
				long nr = parse_num(t, "syscall number");
				if (nr < 0 || nr > 4095) {
					fprintf(stderr, "pmp-seccomp: bad syscall number '%s'\n", t);
					return 2;
				}
				deny[ndeny++] = nr;
			}
			free(copy);
		} else if (strncmp(a, "--action=", 9) == 0) {
			const char *v = a + 9;
			if (strcmp(v, "kill") == 0) {
				action = SECCOMP_RET_KILL_PROCESS;
			} else if (strncmp(v, "errno:", 6) == 0) {
				long e = -1;
				for (unsigned k = 0; k < sizeof(errnos) / sizeof(errnos[0]); k++)
					if (strcmp(v + 6, errnos[k].name) == 0)
						e = errnos[k].value;
				if (e < 0)
					e = parse_num(v + 6, "errno");
				if (e <= 0 || e > 4095) {
					fprintf(stderr, "pmp-seccomp: bad errno '%s'\n", v + 6);
					return 2;
				}
				action = SECCOMP_RET_ERRNO | (unsigned int)e;
			} else {
				fprintf(stderr, "pmp-seccomp: bad --action '%s'\n", v);
				usage(stderr, 2);
			}
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout, 0);
		} else if (a[0] == '-') {
			fprintf(stderr, "pmp-seccomp: unknown option '%s'\n", a);
			usage(stderr, 2);
		} else {
			break;
		}
	}
	if (ndeny == 0 || i >= argc) {
		fprintf(stderr, "pmp-seccomp: need --deny and a command\n");
		usage(stderr, 2);
	}

	/* arch check (2 insns + kill) + nr load + 2 per denied call + allow */
	struct sock_filter prog[8 + 2 * MAX_DENY];
	unsigned n = 0;
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	/* x32 syscalls have bit 30 set: refuse them outright. */
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	for (int k = 0; k < ndeny; k++) {
		prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)deny[k], 0, 1);
		prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
	}
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog fprog = {.len = (unsigned short)n, .filter = prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		fprintf(stderr, "pmp-seccomp: PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
		return 126;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) {
		fprintf(stderr, "pmp-seccomp: seccomp(SECCOMP_SET_MODE_FILTER): %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[i], argv + i);
	int e = errno;
	fprintf(stderr, "pmp-seccomp: cannot execute %s: %s\n", argv[i], strerror(e));
	return e == ENOENT ? 127 : 126;
}
