/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: a target's names escaped for a terminal (text_escape) and
 * carried into JSON (json_string). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"
#include "text.h"

static const char *escaped(const char *in)
{
	static char buf[256];

	return text_escape(in, (size_t)-1, buf, sizeof(buf));
}

/* What a json.c writer makes of in. */
static const char *written(void (*write)(FILE *, const char *), const char *in)
{
	static char out[512];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		exit(99);
	write(f, in);
	fclose(f);
	snprintf(out, sizeof(out), "%s", text);
	free(text);
	return out;
}

static const char *jsoned(const char *in)
{
	return written(json_string, in);
}

static const char *listed(const char *in)
{
	return written(json_number_list, in);
}

int main(void)
{
	char small[8];
	uint32_t cp;

	is_str(escaped("java"), "java", "ASCII kept");
	is_str(escaped("caf\xc3\xa9 \xe4\xb8\xad"), "caf\xc3\xa9 \xe4\xb8\xad", "UTF-8 kept");
	is_str(escaped("a\x9b" "b"), "a\\x9bb", "raw C1 byte (CSI)");
	is_str(escaped("a\xc2\x9b" "b"), "a\\xc2\\x9bb", "U+009B in UTF-8, each byte");
	is_str(escaped("\xe2\x80\xae"), "\\xe2\\x80\\xae", "U+202E");
	is_str(escaped("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c\xe2\x81\xa9\xe2\x80\xaa"),
	       "\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xd8\\x9c\\xe2\\x81\\xa9\\xe2\\x80\\xaa", "the other bidi controls");
	is_str(escaped("\x1b[2J\x7f\n"), "\\x1b[2J\\x7f\\x0a", "C0 and DEL");
	is_str(escaped("a\\b"), "a\\x5cb", "a backslash, so that \\x always escapes");
	is_str(escaped("\xff\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"),
	       "\\xff\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80", "invalid, overlong, surrogate, past U+10FFFF");
	is_str(escaped("\xe2\x80"), "\\xe2\\x80", "a sequence cut short");
	is_str(text_escape("ab\x9b" "cdef", (size_t)-1, small, 5), "ab", "cut before an escape that does not fit");
	is_str(text_escape("abc", 2, small, sizeof(small)), "ab", "length-bounded");
	ok(text_utf8_decode("\xf0\x9f\x90\xa7", 4, &cp) == 4 && cp == 0x1f427, "four-byte sequence");
	ok(text_utf8_decode("\xf0\x9f\x90\xa7", 3, &cp) == 0, "not read past len");

	is_str(jsoned("caf\xc3\xa9"), "\"caf\xc3\xa9\"", "json: UTF-8 through");
	is_str(jsoned("a\"b\\c\n\x01"), "\"a\\\"b\\\\x5cc\\n\\u0001\"", "json: quote, backslash, controls");
	is_str(jsoned("a\x9b" "b"), "\"a\\\\x9bb\"", "json: a byte not UTF-8 as the text \\x9b");
	is_str(jsoned("\xc2\x9b\xe2\x80\xae\xe2\x80\xa8\x7f"), "\"\\u009b\\u202e\\u2028\\u007f\"",
	       "json: C1, bidi, line separator, DEL as \\u");
	is_str(listed("0-3,8"), "[0,1,2,3,8]", "json: a node list as numbers");
	is_str(listed("0"), "[0]", "json: one node");
	is_str(listed(""), "null", "json: an empty list is null");
	is_str(listed(NULL), "null", "json: no list is null");
	is_str(listed("3-1"), "null", "json: a range backwards is null");
	is_str(listed("0,,1"), "null", "json: an empty item: null, nothing half-written");
	is_str(listed("0-"), "null", "json: a range cut short");
	is_str(listed("0-99999999"), "null", "json: no node numbers near a million");
	return tap_done();
}
