/*
 * pmp-forbid - run a command under a seccomp filter that kills it the moment
 * it makes one of the named system calls.
 *
 *   pmp-forbid NR[,NR...] -- COMMAND [ARG...]
 *
 * Tests use it to prove that pidmempolicy never issues an unverified syscall
 * number: under `pmp-forbid 451 -- pidmempolicy ...` a call of 451 ends the
 * tool with SIGSYS (exit status 159 from a shell) instead of its own answer.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_FORBIDDEN 16

int main(int argc, char **argv)
{
	struct sock_filter filter[4 + 2 * MAX_FORBIDDEN];
	struct sock_fprog prog;
	long nrs[MAX_FORBIDDEN];
	size_t n = 0, k = 0;
	char *list, *tok, *save = NULL;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: pmp-forbid NR[,NR...] -- COMMAND [ARG...]\n");
		return 2;
	}
	list = argv[1];
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;

		if (n == MAX_FORBIDDEN) {
			fprintf(stderr, "pmp-forbid: at most %d numbers\n", MAX_FORBIDDEN);
			return 2;
		}
		errno = 0;
		nrs[n] = strtol(tok, &end, 10);
		if (errno || *end || nrs[n] < 0) {
			fprintf(stderr, "pmp-forbid: bad syscall number '%s'\n", tok);
			return 2;
		}
		n++;
	}

	/* refuse foreign architectures outright, then match each number */
	filter[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	filter[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	filter[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	filter[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < n; i++) {
		filter[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nrs[i], 0, 1);
		filter[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	}
	filter[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)k;
	prog.filter = filter;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		perror("pmp-forbid: PR_SET_NO_NEW_PRIVS");
		return 2;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("pmp-forbid: PR_SET_SECCOMP");
		return 2;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "pmp-forbid: cannot run %s: %s\n", argv[3], strerror(errno));
	return 127;
}
