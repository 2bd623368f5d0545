/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h - just enough JSON output for --json: strings escaped so that any
 * byte sequence (a thread name, an error message) yields valid JSON.
 */
#ifndef PMP_JSON_H
#define PMP_JSON_H

#include <stdio.h>

/* Print s as a JSON string literal, quotes included.  Well-formed UTF-8
 * is written as it is, so that a name reads back as the task set it, but
 * for what JSON requires ('"', '\\' and controls below U+0020 escaped) and
 * what a terminal must not meet raw (DEL, C1 and bidi controls, U+2028,
 * U+2029), written as \uXXXX.  A byte that is not well-formed UTF-8 cannot
 * be a JSON character: it is written as the text \xNN (JSON "\\xNN"), and
 * so is a backslash (\x5c), so that in the decoded string \x always starts
 * such an escape. */
void json_string(FILE *f, const char *s);

#endif
