/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * text.h - text from outside the tool made safe for a terminal: user input
 * echoed in a one-line message, and what a target controls (its thread
 * names, its /proc text) escaped as util-linux escapes untrusted names.
 */
#ifndef PMP_TEXT_H
#define PMP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copy at most 64 bytes of in into buf, each control or non-ASCII byte
 * replaced by '?', and "..." appended when cut.  Returns buf. */
const char *text_printable(const char *in, size_t inlen, char *buf, size_t len);

/* The length (1 to 4) of the well-formed UTF-8 sequence that starts at s,
 * within len bytes, with its code point in *cp; 0 if s starts none (a
 * stray continuation byte, an overlong form, a surrogate, a code point
 * past U+10FFFF, a sequence cut short or len 0). */
size_t text_utf8_decode(const char *s, size_t len, uint32_t *cp);

/* Whether the character cp must not reach a terminal as it is: C0
 * controls, DEL, C1 controls (U+0080-U+009F; U+009B is CSI), the bidi
 * controls U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, and the
 * line and paragraph separators U+2028, U+2029. */
bool text_char_unsafe(uint32_t cp);

/* The buffer text_escape needs for n bytes of input. */
#define TEXT_ESCAPED_SIZE(n) (4 * (n) + 1)

/* Copy in[0, inlen), up to a NUL, into buf: well-formed UTF-8 kept, and
 * each byte of an unsafe character (above), each byte that is not
 * well-formed UTF-8, and each backslash written as \xNN (lower-case hex),
 * so that \x always starts an escape.  A character that does not fit is
 * left out with all after it.  Returns buf. */
const char *text_escape(const char *in, size_t inlen, char *buf, size_t len);

#endif
