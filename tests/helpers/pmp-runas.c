/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-runas - run a command with reduced credentials / capabilities.
 *
 * Usage: pmp-runas [--uid=N] [--gid=N] [--drop=CAPS] [--keep=CAPS] [--] CMD [ARGS...]
 *
 * CAPS is a comma separated list of capability names as libcap spells them
 * (cap_sys_nice, cap_sys_ptrace, ...; the "cap_" prefix is optional), or
 * "all".
 *
 * The command gets the capability set T, where
 *     T = (--keep list, or the current permitted set if --keep is absent)
 *         minus the --drop list.
 * Every capability outside T is removed from the bounding, permitted,
 * effective, inheritable and ambient sets before CMD is executed.
 *
 * --gid=N   setresgid(N) and clear the supplementary groups
 *           (default with --uid: the same number as --uid).
 * --uid=N   setresuid(N). Capabilities in T are kept across the uid change
 *           with PR_SET_KEEPCAPS and raised in the ambient set, so that CMD,
 *           running as a non-root user, really has T in its effective set.
 *           Without --keep, a process switched to a non-root uid ends up with
 *           no capabilities at all (the normal unprivileged case).
 *
 * Without --uid the command runs as root: after execve(2) root's permitted
 * set is the bounding set, i.e. T.
 *
 * Examples:
 *   pmp-runas --drop=cap_sys_nice -- pidmempolicy ...   root without CAP_SYS_NICE
 *   pmp-runas --uid=1000 -- pidmempolicy ...            plain unprivileged user
 *   pmp-runas --uid=1000 --keep=cap_sys_nice -- ...     user with CAP_SYS_NICE only
 *
 * Every failure is reported as "pmp-runas: ..." on stderr, exit status 126
 * (127 if CMD cannot be found).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_RAISE 2
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#define NCAPS 64

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "pmp-runas: ");
	fprintf(stderr, fmt, arg);
	if (errno)
		fprintf(stderr, ": %s", strerror(errno));
	fputc('\n', stderr);
	exit(126);
}

static void usage(FILE *f, int status)
{
	fprintf(f, "Usage: pmp-runas [--uid=N] [--gid=N] [--drop=CAPS] [--keep=CAPS] [--] CMD [ARGS...]\n"
		   "CAPS: comma separated capability names (cap_sys_nice,...) or 'all'.\n");
	exit(status);
}

static int last_cap(void)
{
	int last = CAP_LAST_CAP;
	/* The running kernel may know more or fewer capabilities than libcap. */
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	if (f) {
		int v;
		if (fscanf(f, "%d", &v) == 1 && v > 0 && v < NCAPS)
			last = v;
		fclose(f);
	}
	return last;
}

static void parse_caps(const char *list, int *set, int last)
{
	char *copy = strdup(list);
	if (!copy)
		die("out of memory%s", "");
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "all") == 0) {
			for (int c = 0; c <= last; c++)
				set[c] = 1;
			continue;
		}
		char name[64];
		cap_value_t v;
		snprintf(name, sizeof(name), "%s%s", strncmp(tok, "cap_", 4) == 0 ? "" : "cap_", tok);
		if (cap_from_name(name, &v) != 0 || v < 0 || v >= NCAPS) {
			errno = 0;
			die("unknown capability '%s'", tok);
		}
		set[v] = 1;
	}
	free(copy);
}

static unsigned long parse_id(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v >= (unsigned long)UINT_MAX) {
		errno = 0;
		die(what, s);
	}
	return v;
}

int main(int argc, char **argv)
{
	int keep[NCAPS] = {0}, drop[NCAPS] = {0}, target[NCAPS] = {0};
	int have_keep = 0, have_uid = 0, have_gid = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	int i;
	int last = last_cap();

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strncmp(a, "--uid=", 6) == 0) {
			uid = (uid_t)parse_id(a + 6, "bad --uid value '%s'");
			have_uid = 1;
		} else if (strncmp(a, "--gid=", 6) == 0) {
			gid = (gid_t)parse_id(a + 6, "bad --gid value '%s'");
			have_gid = 1;
		} else if (strncmp(a, "--drop=", 7) == 0) {
			parse_caps(a + 7, drop, last);
		} else if (strncmp(a, "--keep=", 7) == 0) {
			parse_caps(a + 7, keep, last);
			have_keep = 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout, 0);
		} else if (a[0] == '-') {
			fprintf(stderr, "pmp-runas: unknown option '%s'\n", a);
			usage(stderr, 2);
		} else {
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "pmp-runas: no command given\n");
		usage(stderr, 2);
	}
	if (have_uid && !have_gid)
		gid = (gid_t)uid;

	/* Target set T. */
	cap_t cur = cap_get_proc();
	if (!cur)
		die("cap_get_proc failed%s", "");
	for (int c = 0; c <= last; c++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (have_keep) {
			target[c] = keep[c];
		} else {
			if (cap_get_flag(cur, (cap_value_t)c, CAP_PERMITTED, &v) != 0)
				die("cap_get_flag failed%s", "");
			target[c] = v == CAP_SET;
		}
		if (drop[c])
			target[c] = 0;
		/* Switching to a non-root uid without --keep: no capabilities. */
		if (have_uid && uid != 0 && !have_keep)
			target[c] = 0;
	}
	cap_free(cur);

	/* Ambient first (harmless if nothing is raised), then bounding set: the
	 * latter needs CAP_SETPCAP, which we may be about to lose. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		die("clearing the ambient set failed%s", "");
	for (int c = 0; c <= last; c++) {
		if (target[c])
			continue;
		int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (r < 0) {
			if (errno == EINVAL)
				continue; /* unknown to this kernel */
			die("PR_CAPBSET_READ failed%s", "");
		}
		if (r == 1 && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
			char *name = cap_to_name((cap_value_t)c);
			die("cannot drop %s from the bounding set", name ? name : "?");
		}
	}

	if (have_uid || have_gid) {
		if (have_uid && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0)
			die("PR_SET_KEEPCAPS failed%s", "");
		if (setgroups(0, NULL) != 0)
			die("setgroups failed%s", "");
		if (setresgid(gid, gid, gid) != 0) {
			char buf[32];
			snprintf(buf, sizeof(buf), "%u", (unsigned)gid);
			die("setresgid(%s) failed", buf);
		}
		if (have_uid && setresuid(uid, uid, uid) != 0) {
			char buf[32];
			snprintf(buf, sizeof(buf), "%u", (unsigned)uid);
			die("setresuid(%s) failed", buf);
		}
	}

	/* Permitted, effective, inheritable = T (within what we still hold). */
	cur = cap_get_proc();
	if (!cur)
		die("cap_get_proc failed%s", "");
	cap_t want = cap_init();
	if (!want)
		die("cap_init failed%s", "");
	for (int c = 0; c <= last; c++) {
		cap_flag_value_t perm = CAP_CLEAR;
		cap_value_t cv = (cap_value_t)c;
		if (cap_get_flag(cur, cv, CAP_PERMITTED, &perm) != 0)
			die("cap_get_flag failed%s", "");
		if (!target[c])
			continue;
		if (perm != CAP_SET) {
			char *name = cap_to_name(cv);
			errno = 0;
			die("cannot keep %s: not in the permitted set", name ? name : "?");
		}
		if (cap_set_flag(want, CAP_PERMITTED, 1, &cv, CAP_SET) != 0 ||
		    cap_set_flag(want, CAP_EFFECTIVE, 1, &cv, CAP_SET) != 0 ||
		    cap_set_flag(want, CAP_INHERITABLE, 1, &cv, CAP_SET) != 0)
			die("cap_set_flag failed%s", "");
	}
	if (cap_set_proc(want) != 0)
		die("cap_set_proc failed%s", "");
	cap_free(want);
	cap_free(cur);

	/* A non-root CMD only keeps capabilities through the ambient set. */
	if (have_uid && uid != 0) {
		for (int c = 0; c <= last; c++) {
			if (!target[c])
				continue;
			if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) != 0) {
				char *name = cap_to_name((cap_value_t)c);
				die("cannot raise %s in the ambient set", name ? name : "?");
			}
		}
	}
	if (have_uid && prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0)
		die("clearing PR_SET_KEEPCAPS failed%s", "");

	execvp(argv[i], argv + i);
	int e = errno;
	fprintf(stderr, "pmp-runas: cannot execute %s: %s\n", argv[i], strerror(e));
	return e == ENOENT ? 127 : 126;
}
