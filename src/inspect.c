/*
 * inspect.c - a task's current policy, allowed nodes and page placement,
 * from /proc/PID/task/TID/numa_maps and status.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inspect.h"
#include "procfs.h"

int inspect_thread(pid_t pid, pid_t tid, struct task_state *st)
{
	char path[96], buf[4096];
	struct numa_maps_line line;
	struct proc_status status;
	const char *eol;
	ssize_t len;

	if (procfs_task_status(pid, tid, &status) < 0)
		return -1;
	snprintf(st->mems_allowed, sizeof(st->mems_allowed), "%s",
		 status.mems_allowed[0] ? status.mems_allowed : "?");

	/* numa_maps is generated as it is read: one small read walks only the
	 * first mappings. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/numa_maps", (int)pid, (int)tid);
	len = procfs_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return -1;
	eol = memchr(buf, '\n', (size_t)len);
	if (len == 0 || procfs_parse_numa_maps_line(buf, eol ? (size_t)(eol - buf) : (size_t)len, &line) < 0) {
		strcpy(st->policy, "-");	/* no mapping: a zombie or a kernel thread */
		return 0;
	}
	snprintf(st->policy, sizeof(st->policy), "%s", line.policy);
	return 0;
}

int inspect_process_pages(pid_t pid, struct task_state *st)
{
	char path[64], buf[16384];
	size_t have = 0;
	int fd;

	memset(st->pages, 0, sizeof(st->pages));
	st->nnodes = 0;
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof(buf) - have);
		char *line = buf, *eol;

		if (got < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			close(fd);
			errno = err;
			return -1;
		}
		have += (size_t)got;
		while ((eol = memchr(line, '\n', (size_t)(buf + have - line)))) {
			struct numa_maps_line l;

			if (procfs_parse_numa_maps_line(line, (size_t)(eol - line), &l) == 0) {
				for (unsigned int n = 0; n < l.max_node && n < INSPECT_MAX_NODES; n++)
					st->pages[n] += l.pages[n];
				if (l.max_node > st->nnodes)
					st->nnodes = l.max_node;
			}
			line = eol + 1;
		}
		have = (size_t)(buf + have - line);
		if (have == sizeof(buf))	/* an absurdly long line: drop it */
			have = 0;
		memmove(buf, line, have);
		if (got == 0)
			break;
	}
	close(fd);
	return 0;
}
