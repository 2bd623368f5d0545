/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * text.c - text from outside the tool on its way to a terminal.
 *
 * User input echoed in a message: never more than one line, never a
 * terminal control sequence, never kilobytes.
 *
 * What a target controls (its thread names, its /proc text): escaped as
 * util-linux escapes untrusted names, printable UTF-8 kept, the rest as
 * \xNN.  The UTF-8 is decoded here rather than with mbrtowc(3) and
 * iswprint(3), whose answers follow the locale: the tool sets none (its
 * output must not change with LANG), and in the C locale every non-ASCII
 * byte would be unprintable, so a thread named "café" could not be read.
 * The rules here are few and fixed instead: well-formed UTF-8 is kept
 * unless it is a control or a bidi control (which reorders what a
 * terminal shows after it).
 */
#include "config.h"

#include "text.h"

#define ECHO_MAX 64

const char *text_printable(const char *in, size_t inlen, char *buf, size_t len)
{
	size_t i, n = 0;

	if (len == 0)
		return buf;
	for (i = 0; i < inlen && in[i] && i < ECHO_MAX && n + 1 < len; i++) {
		unsigned char c = (unsigned char)in[i];

		buf[n++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	if (i < inlen && in[i] && n + 4 < len) {
		buf[n++] = '.';
		buf[n++] = '.';
		buf[n++] = '.';
	}
	buf[n] = '\0';
	return buf;
}

size_t text_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c, min;
	size_t n;

	if (len == 0)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2, c = p[0] & 0x1fU, min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3, c = p[0] & 0x0fU, min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4, c = p[0] & 0x07U, min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	/* a NUL is no continuation byte: a C string is never read past */
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3fU);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

bool text_char_unsafe(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x2028 || cp == 0x2029;
}

const char *text_escape(const char *in, size_t inlen, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t at = 0, i = 0;

	if (len == 0)
		return buf;
	while (i < inlen && in[i]) {
		uint32_t cp = 0;
		size_t n = text_utf8_decode(in + i, inlen - i, &cp);
		bool escape = n == 0 || cp == '\\' || text_char_unsafe(cp);

		if (n == 0)
			n = 1;
		if (at + (escape ? 4 * n : n) >= len)
			break;
		for (size_t k = 0; k < n; k++, i++) {
			unsigned char c = (unsigned char)in[i];

			if (escape) {
				buf[at++] = '\\';
				buf[at++] = 'x';
				buf[at++] = hex[c >> 4];
				buf[at++] = hex[c & 0xf];
			} else {
				buf[at++] = (char)c;
			}
		}
	}
	buf[at] = '\0';
	return buf;
}
