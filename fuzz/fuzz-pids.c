/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-pids.c - libFuzzer target for options_parse_pids ("PID",
 * "PID:INODE", comma lists; NUL-terminated like a command-line argument),
 * text_printable (the echo of user input in messages) and text_escape (a
 * target's names on their way to a terminal) with output buffers of
 * several sizes.
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "text.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct guarded arg_buf, raw_buf;
static const size_t out_sizes[] = { 1, 2, 4, 5, 8, 65, 68, 69, 80, 200 };

static void check_printable(const char *in, size_t inlen)
{
	for (size_t s = 0; s < sizeof(out_sizes) / sizeof(out_sizes[0]); s++) {
		char *out = malloc(out_sizes[s]);
		size_t n;

		if (!out)
			abort();
		FUZZ_ASSERT(text_printable(in, inlen, out, out_sizes[s]) == out);
		n = strnlen(out, out_sizes[s]);
		FUZZ_ASSERT(n < out_sizes[s]);
		FUZZ_ASSERT(n <= 64 + 3);
		for (size_t i = 0; i < n; i++)
			FUZZ_ASSERT(out[i] >= 0x20 && out[i] < 0x7f);
		free(out);
	}
	(void)text_printable(in, inlen, NULL, 0);	/* len 0: touches nothing */
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* text_escape: its output is well-formed UTF-8 without one unsafe
 * character, a backslash only as the start of \xNN, and undone it gives
 * back the input (or, cut for a small buffer, a prefix of it). */
static void check_escape(const char *in, size_t inlen)
{
	size_t want = 0;

	while (want < inlen && in[want])
		want++;
	for (size_t s = 0; s <= sizeof(out_sizes) / sizeof(out_sizes[0]); s++) {
		size_t len = s < sizeof(out_sizes) / sizeof(out_sizes[0]) ? out_sizes[s] :
			     TEXT_ESCAPED_SIZE(want);
		char *out = malloc(len);
		size_t n, back = 0;

		if (!out)
			abort();
		FUZZ_ASSERT(text_escape(in, inlen, out, len) == out);
		n = strnlen(out, len);
		FUZZ_ASSERT(n < len);
		for (size_t i = 0; i < n;) {
			uint32_t cp;
			size_t k = text_utf8_decode(out + i, n - i, &cp);

			FUZZ_ASSERT(k > 0 && !text_char_unsafe(cp));
			if (cp == '\\') {
				int hi, lo;

				FUZZ_ASSERT(i + 3 < n && out[i + 1] == 'x');
				hi = hexval(out[i + 2]);
				lo = hexval(out[i + 3]);
				FUZZ_ASSERT(hi >= 0 && lo >= 0);
				FUZZ_ASSERT(back < want && (unsigned char)in[back] == (unsigned)(hi << 4 | lo));
				back++;
				i += 4;
				continue;
			}
			FUZZ_ASSERT(back + k <= want && memcmp(in + back, out + i, k) == 0);
			back += k;
			i += k;
		}
		if (len == TEXT_ESCAPED_SIZE(want))
			FUZZ_ASSERT(back == want);	/* room enough: nothing cut */
		free(out);
	}
	(void)text_escape(in, inlen, NULL, 0);	/* len 0: touches nothing */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pid_spec *specs = NULL;
	size_t n = 0, commas = 0;
	char why[256];
	char *arg;

	if (size > 1 << 16)
		return 0;
	arg = guarded_copy(&arg_buf, data, size, '\0');
	for (const char *c = arg; *c; c++)
		if (*c == ',')
			commas++;

	/* twice: the second call appends to what the first one gave */
	for (int round = 0; round < 2; round++) {
		size_t before = n;

		why[0] = '\0';
		if (options_parse_pids(arg, &specs, &n, why, sizeof(why)) == 0) {
			FUZZ_ASSERT(n == before + commas + 1);
			for (size_t i = before; i < n; i++) {
				FUZZ_ASSERT(specs[i].pid >= 1 && specs[i].pid <= 4194304);
				FUZZ_ASSERT(!specs[i].pinned || specs[i].inode > 0);
				FUZZ_ASSERT(specs[i].pinned || specs[i].inode == 0);
			}
		} else {
			FUZZ_ASSERT(n == before);
			FUZZ_ASSERT(why[0] != '\0');
		}
	}
	free(specs);

	/* text_printable: length-bounded over raw bytes (NULs included, ending
	 * at the guard page), and NUL-bounded as for an argument */
	check_printable(guarded_copy(&raw_buf, data, size, -1), size);
	check_printable(arg, (size_t)-1);
	check_escape(guarded_copy(&raw_buf, data, size, -1), size);
	check_escape(arg, (size_t)-1);
	return 0;
}
