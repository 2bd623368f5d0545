/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h - just enough JSON output for --json: strings escaped so that any
 * byte sequence (a thread name, an error message) yields valid JSON, and
 * the kernel's number lists as numbers.
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

/* s as a JSON string, or null for NULL. */
void json_string_or_null(FILE *f, const char *s);

/* A kernel list of numbers ("0-3,8", as Mems_allowed_list) as a JSON array
 * of numbers; null for NULL, "" or anything that is not such a list. */
void json_number_list(FILE *f, const char *list);

#endif
