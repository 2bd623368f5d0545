/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-procfs.c - libFuzzer target for the /proc text parsers in
 * src/procfs.c: procfs_parse_stat, procfs_status_value,
 * procfs_parse_status, procfs_parse_syscall, procfs_parse_numa_maps_line
 * and procfs_kallsyms_has.
 *
 * Every input goes through every parser.  procfs_kallsyms_has reads an fd:
 * it gets the input once from a memfd (real kernel reads, whole buffer per
 * read) and once from a "virtual" fd whose reads this file serves from
 * memory in small chunks (the link wraps read(2) with -Wl,--wrap=read), so
 * lines straddle read boundaries and the carry-over logic is exercised.  An
 * input starting with "LONG:" is served repeated to more than twice the
 * parser's 64 KiB buffer, which reaches the skip-a-too-long-line path.
 *
 * The numa_maps lines are given with and without their newline and with
 * no terminating byte after them: the parser must hold to its header's
 * contract (any bytes, nothing read past len).  Two defects it found that
 * way (a loop on '\n', strtoull() reading past the value) are fixed in
 * src/procfs.c and kept as regressions/procfs/.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procfs.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
ssize_t __real_read(int fd, void *buf, size_t count);
ssize_t __wrap_read(int fd, void *buf, size_t count);

static struct guarded whole, line_buf;
static int memfd = -1, virtfd = -1;

/* the virtual fd's stream: body repeated until total bytes are served */
static struct {
	const uint8_t *body;
	size_t bodylen, total, pos, chunk;
	int eintr;		/* fail the next read with EINTR once */
} virt;

ssize_t __wrap_read(int fd, void *buf, size_t count)
{
	size_t n, off;

	if (fd != virtfd || virtfd < 0)
		return __real_read(fd, buf, count);
	if (virt.eintr) {
		virt.eintr = 0;
		errno = EINTR;
		return -1;
	}
	n = virt.total - virt.pos;
	if (n > count)
		n = count;
	if (n > virt.chunk)
		n = virt.chunk;
	for (size_t i = 0; i < n; i += off) {	/* copy, wrapping around the body */
		size_t at = (virt.pos + i) % virt.bodylen;

		off = virt.bodylen - at;
		if (off > n - i)
			off = n - i;
		memcpy((char *)buf + i, virt.body + at, off);
	}
	virt.pos += n;
	return (ssize_t)n;
}

static const char *const status_keys[] = {
	"Name", "State", "Tgid", "Pid", "PPid", "TracerPid", "Seccomp",
	"Threads", "Mems_allowed_list", "Cpus_allowed_list", "",
};
static const size_t val_sizes[] = { 1, 2, 16, 64, 256 };

static const char *const kallsyms_names[] = {
	"sys_pidfd_set_mempolicy", "pidfd_open", "a", "",
};

static void check_numa_maps(const char *line, size_t len)
{
	struct numa_maps_line nm;

	if (procfs_parse_numa_maps_line(line, len, &nm) == 0) {
		FUZZ_ASSERT(memchr(nm.policy, '\0', sizeof(nm.policy)) != NULL);
		FUZZ_ASSERT(nm.policy[0] != '\0');
		FUZZ_ASSERT(nm.max_node <= sizeof(nm.pages) / sizeof(nm.pages[0]));
	}
}

static void fuzz_kallsyms(const uint8_t *data, size_t size)
{
	const uint8_t *body = data;
	size_t bodylen = size;
	int repeat = 0;

	/* 1: a real memfd, read in whole, for the name the tool looks up */
	if (ftruncate(memfd, 0) == 0 && (size == 0 || pwrite(memfd, data, size, 0) == (ssize_t)size)) {
		int r;

		if (lseek(memfd, 0, SEEK_SET) != 0)
			abort();
		r = procfs_kallsyms_has(memfd, kallsyms_names[0]);
		FUZZ_ASSERT(r == 0 || r == 1);
	}

	/* 2: the virtual fd, in chunks */
	if (size >= 5 && memcmp(data, "LONG:", 5) == 0) {
		body = data + 5;
		bodylen = size - 5;
		repeat = 1;
	}
	virt.body = body;
	virt.bodylen = bodylen;
	virt.total = bodylen == 0 ? 0 : repeat ? (140000 / bodylen + 1) * bodylen : bodylen;
	virt.pos = 0;
	virt.chunk = 1 + (size * 131 + (size ? data[size - 1] : 0)) % 700;
	if (repeat)
		virt.chunk = 4096 + virt.chunk * 97;
	virt.eintr = size % 5 == 0;
	{
		int r = procfs_kallsyms_has(virtfd, kallsyms_names[size % 4]);	/* each name in turn */

		FUZZ_ASSERT(r == 0 || r == 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_stat st;
	char *buf;

	if (memfd < 0) {
		memfd = memfd_create("fuzz-kallsyms", MFD_CLOEXEC);
		virtfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (memfd < 0 || virtfd < 0)
			abort();
	}
	if (size > 1 << 20)
		return 0;
	buf = guarded_copy(&whole, data, size, -1);

	/* /proc/PID/stat */
	if (procfs_parse_stat(buf, size, &st) == 0) {
		size_t n = strnlen(st.comm, sizeof(st.comm));

		/* any bytes the task chose: fuzz-pids proves their escape */
		FUZZ_ASSERT(n < sizeof(st.comm));
	}

	/* /proc/PID/status, with values just too small and large enough */
	for (size_t k = 0; k < sizeof(status_keys) / sizeof(status_keys[0]); k++)
		for (size_t v = 0; v < sizeof(val_sizes) / sizeof(val_sizes[0]); v++) {
			char *val = malloc(val_sizes[v]);

			if (!val)
				abort();
			if (procfs_status_value(buf, size, status_keys[k], val, val_sizes[v]) == 0)
				FUZZ_ASSERT(strnlen(val, val_sizes[v]) < val_sizes[v]);
			free(val);
		}

	/* the whole status in one pass: any bytes parse, text stays bounded */
	{
		struct proc_status ps;

		FUZZ_ASSERT(procfs_parse_status(buf, size, &ps) == 0);
		FUZZ_ASSERT(memchr(ps.mems_allowed, '\0', sizeof(ps.mems_allowed)) != NULL);
	}

	/* /proc/PID/task/TID/syscall */
	{
		struct proc_syscall sc;

		if (procfs_parse_syscall(buf, size, &sc) == 0)
			FUZZ_ASSERT(sc.kind == SYSCALL_IN ? sc.nr >= 0 : sc.nr == -1);
	}

	/* /proc/PID/numa_maps: (strict) the whole input as one line, then
	 * each line alone, without its newline, ending at the guard page */
	check_numa_maps(buf, size);
#define LINE_AFTER (-1)
	for (size_t at = 0; at < size;) {
		const uint8_t *eol = memchr(data + at, '\n', size - at);
		size_t len = eol ? (size_t)(eol - (data + at)) : size - at;

		check_numa_maps(guarded_copy(&line_buf, data + at, len, LINE_AFTER), len);
		at += len + 1;
	}

	fuzz_kallsyms(data, size);
	return 0;
}
