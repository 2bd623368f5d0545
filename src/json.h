/*
 * json.h - just enough JSON output for --json: strings escaped so that any
 * byte sequence (a thread name, an error message) yields valid JSON.
 */
#ifndef PMP_JSON_H
#define PMP_JSON_H

#include <stdio.h>

/* Print s as a JSON string literal, quotes included.  Bytes that are not
 * printable ASCII are written as \u00XX. */
void json_string(FILE *f, const char *s);

#endif
