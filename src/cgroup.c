/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.c - the processes of a cgroup v2 subtree (the cgroup.procs of the
 * cgroup and of every cgroup below it, as systemd slices and Kubernetes
 * pods keep theirs in leaves), each walked as if named with -p, each once
 * however often the lists are re-read; and whether a process is frozen.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "interrupt.h"
#include "procfs.h"
#include "tidset.h"

#define MAX_RESCANS 64
#define MAX_DEPTH 64	/* deeper than any layout systemd or Kubernetes makes */

int cgroup_check(const char *dir, char *why, size_t len)
{
	char path[4096];
	struct statfs fs;
	int n = snprintf(path, sizeof(path), "%s/cgroup.procs", dir);

	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(why, len, "path too long");
		return -1;
	}
	if (statfs(dir, &fs) < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	/* a cgroup v1 controller's root would take every process */
	if (fs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, len, "not on a cgroup2 file system");
		return -1;
	}
	if (access(path, R_OK) < 0) {
		snprintf(why, len, "no readable cgroup.procs");
		return -1;
	}
	return 0;
}

/* One pass over a cgroup.procs: walk every process not seen before.
 * Returns the number of new processes, or -1 (errno set).  The file is
 * opened without blocking and must be a regular file, as cgroupfs makes
 * it. */
static long scan_procs(const char *path, struct tidset *seen, bool all_threads,
		       const struct task_visitor *v)
{
	char line[32];
	long fresh = 0;
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;	/* removed meanwhile */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct pid_spec spec = { 0 };
		int added;

		spec.pid = (pid_t)atoi(line);
		if (spec.pid <= 0)
			continue;
		added = tidset_add(seen, spec.pid);
		if (added < 0 || (added && targets_walk(&spec, all_threads, v) < 0)) {
			fclose(f);
			errno = ENOMEM;
			return -1;
		}
		fresh += added;
	}
	if (ferror(f)) {
		fclose(f);
		errno = EIO;
		return -1;
	}
	fclose(f);
	return fresh;
}

/* One pass over the cgroup at path (its length len) and every cgroup
 * below it, parents first. */
static long scan_tree(char *path, size_t len, size_t cap, int depth, struct tidset *seen,
		      bool all_threads, const struct task_visitor *v)
{
	long fresh, sub;
	struct dirent *de;
	DIR *d;

	if (len + sizeof("/cgroup.procs") > cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(path + len, "/cgroup.procs");
	fresh = scan_procs(path, seen, all_threads, v);
	path[len] = '\0';
	if (fresh < 0 || depth >= MAX_DEPTH || interrupt_signal())
		return fresh;
	d = opendir(path);
	if (!d)		/* removed meanwhile */
		return fresh;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (len + 1 + n >= cap) {
			closedir(d);
			errno = ENAMETOOLONG;
			return -1;
		}
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		sub = scan_tree(path, len + 1 + n, cap, depth + 1, seen, all_threads, v);
		path[len] = '\0';
		if (sub < 0) {
			closedir(d);
			return -1;
		}
		fresh += sub;
	}
	closedir(d);
	return fresh;
}

long cgroup_walk(const char *dir, bool all_threads, const struct task_visitor *v)
{
	struct tidset seen = { 0 };
	char path[4096];
	size_t len = strlen(dir);
	long found = 0;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, len);
	path[len] = '\0';
	for (int pass = 0; pass < MAX_RESCANS; pass++) {
		long fresh = scan_tree(path, len, sizeof(path), 0, &seen, all_threads, v);

		if (fresh < 0) {
			found = -1;
			break;
		}
		found += fresh;
		/* interrupted, one pass has counted what was not reached */
		if (fresh == 0 || interrupt_signal())
			break;
	}
	tidset_release(&seen);
	return found;
}

/* ---- frozen cgroups ------------------------------------------------------ */

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP2_HYBRID "/sys/fs/cgroup/unified"	/* cgroup v2 beside v1 controllers */
#define FREEZER_ROOT "/sys/fs/cgroup/freezer"

/* The cgroup paths of a process, from /proc/PID/cgroup. */
struct memberships {
	char v2[4096];		/* "0::/path" */
	char freezer[4096];	/* "N:...freezer...:/path" */
};

static int membership_line(const char *line, size_t len, void *arg)
{
	struct memberships *m = arg;
	const char *c1 = memchr(line, ':', len), *c2;
	char *to = NULL;
	size_t n;

	if (!c1 || !(c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line))))
		return 0;
	if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1)
		to = m->v2;
	else if (memmem(c1 + 1, (size_t)(c2 - c1 - 1), "freezer", 7))
		to = m->freezer;
	n = len - (size_t)(c2 + 1 - line);
	if (to && n < sizeof(m->v2)) {
		memcpy(to, c2 + 1, n);
		to[n] = '\0';
	}
	return 0;
}

/* Whether the first line of file path starts with word. */
static bool file_says(const char *path, const char *word)
{
	char buf[256];

	return procfs_read_file(path, buf, sizeof(buf)) > 0 && strncmp(buf, word, strlen(word)) == 0;
}

static bool events_frozen(const char *dir)
{
	char path[4200], buf[1024];

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	if (procfs_read_file(path, buf, sizeof(buf)) < 0)
		return false;
	return strncmp(buf, "frozen 1", 8) == 0 || strstr(buf, "\nfrozen 1") != NULL;
}

static bool freeze_asked(const char *dir)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/cgroup.freeze", dir);
	return file_says(path, "1");
}

int cgroup_frozen(pid_t pid, char *dir, size_t len, bool *v1)
{
	struct memberships m = { "", "" };
	char path[4200];
	int n;

	*v1 = false;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (procfs_each_line(path, membership_line, &m) < 0)
		return 0;
	if (m.v2[0] == '/' && m.v2[1]) {
		const char *root = access(CGROUP_ROOT "/cgroup.controllers", F_OK) == 0 ?
				   CGROUP_ROOT : CGROUP2_HYBRID;
		size_t rootlen = strlen(root);

		n = snprintf(dir, len, "%s%s", root, m.v2);
		if (n < 0 || (size_t)n >= len || !(events_frozen(dir) || freeze_asked(dir)))
			goto v1;
		/* name the cgroup whose cgroup.freeze holds it: thawing that
		 * one thaws this one */
		for (char *end = dir + n; end > dir + rootlen; ) {
			if (freeze_asked(dir))
				return 1;
			end = strrchr(dir, '/');
			*end = '\0';
		}
		/* frozen, and no ancestor asked for it?  Name its own cgroup */
		snprintf(dir, len, "%s%s", root, m.v2);
		return 1;
	}
v1:
	if (m.freezer[0] == '/') {
		n = snprintf(dir, len, "%s%s", FREEZER_ROOT, strcmp(m.freezer, "/") ? m.freezer : "");
		if (n > 0 && (size_t)n < len) {
			snprintf(path, sizeof(path), "%s/freezer.state", dir);
			if (file_says(path, "FROZEN") || file_says(path, "FREEZING")) {
				*v1 = true;
				return 1;
			}
		}
	}
	return 0;
}
