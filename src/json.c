/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.c - JSON string literals: UTF-8 through, everything else escaped
 * (json.h says how).
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "text.h"

void json_string(FILE *f, const char *s)
{
	size_t len = strlen(s);

	fputc('"', f);
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = text_utf8_decode(s + i, len - i, &cp);

		if (n == 0 || cp == '\\') {
			fprintf(f, "\\\\x%02x", (unsigned char)s[i]);
			i++;
			continue;
		}
		if (cp == '"')
			fputs("\\\"", f);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (text_char_unsafe(cp))
			fprintf(f, "\\u%04x", (unsigned int)cp);
		else
			fwrite(s + i, 1, n, f);
		i += n;
	}
	fputc('"', f);
}

void json_string_or_null(FILE *f, const char *s)
{
	if (s)
		json_string(f, s);
	else
		fputs("null", f);
}

/* "a" or "a-b" at *p, with b >= a; advances *p.  0, or -1. */
static int parse_range(const char **p, unsigned long *a, unsigned long *b)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -1;
	*a = *b = strtoul(*p, &end, 10);
	if (*end == '-') {
		if (end[1] < '0' || end[1] > '9')
			return -1;
		*b = strtoul(end + 1, &end, 10);
	}
	*p = end;
	/* a node or CPU number, never near a million */
	return *b < *a || *b >= 1000000 ? -1 : 0;
}

void json_number_list(FILE *f, const char *list)
{
	const char *p = list;
	unsigned long a, b;
	bool first = true;

	/* check the whole list first: nothing half-written */
	if (!list || !*list)
		goto null;
	for (;;) {
		if (parse_range(&p, &a, &b) < 0)
			goto null;
		if (!*p)
			break;
		if (*p++ != ',')
			goto null;
	}
	fputc('[', f);
	for (p = list; *p; p += *p == ',') {
		(void)parse_range(&p, &a, &b);
		for (unsigned long n = a; n <= b; n++, first = false)
			fprintf(f, "%s%lu", first ? "" : ",", n);
	}
	fputc(']', f);
	return;
null:
	fputs("null", f);
}
