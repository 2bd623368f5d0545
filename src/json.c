/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.c - JSON string literals: UTF-8 through, everything else escaped
 * (json.h says how).
 */
#include "config.h"

#include <stdint.h>
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
