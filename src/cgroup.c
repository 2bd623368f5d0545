/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.c - the processes of a cgroup v2 subtree (the cgroup.procs of the
 * cgroup and of every cgroup below it, as systemd slices and Kubernetes
 * pods keep theirs in leaves), each walked as if named with -p, each once
 * however often the lists are re-read; the cgroup systemd gave a unit
 * (--unit); and whether a process is frozen.
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

static bool on_cgroup2(const char *dir)
{
	struct statfs fs;

	return statfs(dir, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* systemd's units: the kinds that have a cgroup of their own */
static const char *const unit_kinds[] = { ".service", ".scope", ".slice", ".socket", ".mount", ".swap" };

#define MAX_SLICES 10000	/* slice directories searched for a unit */

/* Look for the unit's directory `name` in dir and, depth first, in the
 * slices below it (systemd puts each unit in its slice's directory and
 * slices only in slices).  1 found (the path in out), 0 not, -1 too many
 * slices. */
static int find_unit(const char *dir, const char *name, int depth, long *budget, char *out, size_t len)
{
	char path[4096];
	struct dirent *e;
	DIR *d;
	int found = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path) && is_dir(path)) {
		snprintf(out, len, "%s", path);
		return 1;
	}
	if (depth >= MAX_DEPTH || !(d = opendir(dir)))
		return 0;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n <= 6 || strcmp(e->d_name + n - 6, ".slice") != 0)
			continue;
		if (--*budget < 0) {
			found = -1;
			break;
		}
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) || !is_dir(path))
			continue;
		found = find_unit(path, name, depth + 1, budget, out, len);
	}
	closedir(d);
	return found;
}

int cgroup_of_unit(const char *unit, char *dir, size_t len, char *why, size_t whylen)
{
	static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	char name[300];
	const char *root = NULL, *dot;
	long budget = MAX_SLICES;
	bool kind_known = false;
	size_t n = strlen(unit);
	int found;

	/* systemd's unit name characters; a bare name is a service, as
	 * systemctl takes it */
	if (n == 0 || n > 255 || strspn(unit, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789:_.\\@-") != n) {
		snprintf(why, whylen, "not a systemd unit name");
		return -1;
	}
	dot = strrchr(unit, '.');
	for (size_t i = 0; dot && i < sizeof(unit_kinds) / sizeof(unit_kinds[0]); i++)
		kind_known |= strcmp(dot, unit_kinds[i]) == 0;
	if (dot && !kind_known) {
		snprintf(why, whylen, "a %s unit has no processes of its own (a service, scope, slice, socket, "
			 "mount or swap has)", dot + 1);
		return -1;
	}
	/* systemd escapes a cgroup name that starts with '_' or '.' */
	snprintf(name, sizeof(name), "%s%s%s", unit[0] == '_' || unit[0] == '.' ? "_" : "", unit,
		 dot ? "" : ".service");
	/* what sd_booted(3) checks */
	if (access("/run/systemd/system", F_OK) < 0) {
		snprintf(why, whylen, "systemd is not running here (no /run/systemd/system); name the cgroup "
			 "with --cgroup=PATH");
		return -1;
	}
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !root; i++)
		if (on_cgroup2(roots[i]))
			root = roots[i];
	if (!root) {
		snprintf(why, whylen, "no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified");
		return -1;
	}
	if (strcmp(name, "-.slice") == 0) {	/* the root slice */
		snprintf(dir, len, "%s", root);
		return 0;
	}
	found = find_unit(root, name, 0, &budget, dir, len);
	if (found < 0)
		snprintf(why, whylen, "more than %d slices under %s: not searched through", MAX_SLICES, root);
	else if (found == 0)
		snprintf(why, whylen, "systemd has no cgroup for %s under %s (not loaded, or not running)",
			 name, root);
	return found == 1 ? 0 : -1;
}

/* One pass over a cgroup.procs: walk every process not seen before.
 * Returns the number of new processes, or -1 (errno set).  The file is
 * opened without blocking and must be a regular file, as cgroupfs makes
 * it. */
struct walk {
	struct tidset seen;		/* every process listed so far */
	struct tidset named;		/* processes the caller walks itself (-p) */
	bool all_threads;
	const struct task_visitor *v;
};

static long scan_procs(const char *path, struct walk *w)
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
		added = tidset_add(&w->seen, spec.pid);
		/* a process also named with -p is counted, not walked twice */
		if (added > 0 && tidset_has(&w->named, spec.pid)) {
			fresh++;
			continue;
		}
		if (added < 0 || (added && targets_walk(&spec, w->all_threads, w->v) < 0)) {
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
static long scan_tree(char *path, size_t len, size_t cap, int depth, struct walk *w)
{
	long fresh, sub;
	struct dirent *de;
	DIR *d;

	if (len + sizeof("/cgroup.procs") > cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(path + len, "/cgroup.procs");
	fresh = scan_procs(path, w);
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
		sub = scan_tree(path, len + 1 + n, cap, depth + 1, w);
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

long cgroup_walk(const char *dir, const struct pid_spec *named, size_t nnamed, bool all_threads,
		 const struct task_visitor *v)
{
	struct walk w = { .all_threads = all_threads, .v = v };
	char path[4096];
	size_t len = strlen(dir);
	long found = 0;

	for (size_t i = 0; i < nnamed; i++)
		if (tidset_add(&w.named, named[i].pid) < 0) {
			tidset_release(&w.named);
			errno = ENOMEM;
			return -1;
		}

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, len);
	path[len] = '\0';
	for (int pass = 0; pass < MAX_RESCANS; pass++) {
		long fresh = scan_tree(path, len, sizeof(path), 0, &w);

		if (fresh < 0) {
			found = -1;
			break;
		}
		found += fresh;
		/* interrupted, one pass has counted what was not reached */
		if (fresh == 0 || interrupt_signal())
			break;
	}
	tidset_release(&w.seen);
	tidset_release(&w.named);
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
