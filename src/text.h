/*
 * text.h - user input made safe to echo in a one-line message.
 */
#ifndef PMP_TEXT_H
#define PMP_TEXT_H

#include <stddef.h>

/* Copy at most 64 bytes of in into buf, each control or non-ASCII byte
 * replaced by '?', and "..." appended when cut.  Returns buf. */
const char *text_printable(const char *in, size_t inlen, char *buf, size_t len);

#endif
