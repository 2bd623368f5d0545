/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-common.h - helpers shared by the libFuzzer targets.
 *
 * guarded_copy() places a copy of the input so that it ends exactly at a
 * PROT_NONE page.  AddressSanitizer sees overreads in instrumented code
 * anyway, but not in uninstrumented code (glibc's strtoul/strtoull, which
 * ASan does not intercept, or libnuma): with the guard page, reading one
 * byte past the buffer is a SEGV that libFuzzer reports as a crash.
 */
#ifndef PMP_FUZZ_COMMON_H
#define PMP_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct guarded {
	char *base;		/* mapping: usable pages, then one guard page */
	size_t usable;		/* bytes before the guard page */
};

/* Copy len bytes of data, followed by the byte `after` unless it is -1
 * (e.g. '\0' for a C string), so that the copy's last byte is the last byte
 * before the guard page.  Returns the copy. */
static inline char *guarded_copy(struct guarded *g, const uint8_t *data, size_t len, int after)
{
	size_t need = len + (after >= 0 ? 1 : 0);
	char *p;

	if (!g->base || need > g->usable) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		size_t usable = (need + page - 1) / page * page;

		if (usable == 0)
			usable = page;
		if (g->base)
			munmap(g->base, g->usable + page);
		g->base = mmap(NULL, usable + page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (g->base == MAP_FAILED)
			abort();
		if (mprotect(g->base + usable, page, PROT_NONE) < 0)
			abort();
		g->usable = usable;
	}
	p = g->base + g->usable - need;
	if (len)
		memcpy(p, data, len);
	if (after >= 0)
		p[len] = (char)after;
	return p;
}

/* An invariant the headers promise did not hold: a crash for libFuzzer. */
#define FUZZ_ASSERT(cond) do { if (!(cond)) __builtin_trap(); } while (0)

#endif
