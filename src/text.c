/*
 * text.c - echoing user input in messages: never more than one line, never
 * a terminal control sequence, never kilobytes.
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
