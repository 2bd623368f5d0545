/*
 * cgroup.c - the processes listed in a cgroup's cgroup.procs, each walked
 * as if named with -p, each once however often the list is re-read.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgroup.h"
#include "interrupt.h"
#include "tidset.h"

#define MAX_RESCANS 64

bool cgroup_is_dir(const char *dir)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/cgroup.procs", dir);

	return n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0;
}

/* One pass over cgroup.procs: walk every process not seen before.
 * Returns the number of new processes, or -1 (errno set). */
static long scan_cgroup(const char *path, struct tidset *seen, bool all_threads,
			task_visit_fn visit, void *arg)
{
	char line[32];
	long fresh = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct pid_spec spec = { 0 };
		int added;

		spec.pid = (pid_t)atoi(line);
		if (spec.pid <= 0)
			continue;
		added = tidset_add(seen, spec.pid);
		if (added < 0 || (added && targets_walk(&spec, all_threads, visit, arg) < 0)) {
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

int cgroup_walk(const char *dir, bool all_threads, task_visit_fn visit, void *arg)
{
	struct tidset seen = { 0 };
	char path[4096];
	int ret = 0;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (int pass = 0; pass < MAX_RESCANS; pass++) {
		long fresh = scan_cgroup(path, &seen, all_threads, visit, arg);

		if (fresh < 0) {
			ret = -1;
			break;
		}
		/* interrupted, one pass has counted what was not reached */
		if (fresh == 0 || interrupt_signal())
			break;
	}
	tidset_release(&seen);
	return ret;
}
