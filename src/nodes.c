/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nodes.c - NUMA node lists.
 *
 * Owns the conversation with libnuma's node-list parser.  libnuma reports
 * parse problems by calling numa_warn()/numa_error(), which it declares weak
 * so that programs can replace them; we do, and keep the last message so
 * that the caller can put it into one line of its own.  That captured
 * message is the only file-scope state in the tool, imposed by libnuma's
 * interface, and it lives here.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nodes.h"
#include "text.h"

static char libnuma_message[256];

/* Replaces libnuma's weak numa_warn: keep the message, print nothing. */
void numa_warn(int num, char *fmt, ...)
{
	va_list ap;
	size_t n;

	(void)num;
	va_start(ap, fmt);
	/* fmt is libnuma's own format string */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(libnuma_message, sizeof(libnuma_message), fmt, ap);
#pragma GCC diagnostic pop
	va_end(ap);
	n = strlen(libnuma_message);
	while (n > 0 && isspace((unsigned char)libnuma_message[n - 1]))
		libnuma_message[--n] = '\0';
}

/* Replaces libnuma's weak numa_error: keep the message, print nothing. */
void numa_error(char *where)
{
	snprintf(libnuma_message, sizeof(libnuma_message), "%s failed", where);
}

static int only_blanks(const char *s)
{
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			return 0;
	return 1;
}

unsigned int nodes_count(const struct bitmask *mask)
{
	unsigned int n = 0;

	for (unsigned long i = 0; i < mask->size; i++)
		if (numa_bitmask_isbitset(mask, (unsigned int)i))
			n++;
	return n;
}

int nodes_parse(const char *arg, struct bitmask **out, char *why, size_t whylen)
{
	struct bitmask *mask;
	char shown[80];

	*out = NULL;
	text_printable(arg, (size_t)-1, shown, sizeof(shown));
	if (only_blanks(arg)) {
		snprintf(why, whylen, "empty node list");
		return -1;
	}
	libnuma_message[0] = '\0';
	mask = numa_parse_nodestring_all(arg);
	if (!mask) {
		char said[80];

		if (libnuma_message[0])
			snprintf(why, whylen, "invalid node list '%s': %s", shown,
				 text_printable(libnuma_message, sizeof(libnuma_message), said, sizeof(said)));
		else
			snprintf(why, whylen, "invalid node list '%s'", shown);
		return -1;
	}
	if (nodes_count(mask) == 0) {
		snprintf(why, whylen, "node list '%s' selects no node", shown);
		numa_bitmask_free(mask);
		return -1;
	}
	*out = mask;
	return 0;
}

int nodes_format(const struct bitmask *mask, char *buf, size_t len)
{
	size_t used = 0;
	unsigned long i = 0;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	while (i < mask->size) {
		unsigned long first, last;
		int n;

		if (!numa_bitmask_isbitset(mask, (unsigned int)i)) {
			i++;
			continue;
		}
		first = i;
		while (i + 1 < mask->size && numa_bitmask_isbitset(mask, (unsigned int)(i + 1)))
			i++;
		last = i++;
		if (first == last)
			n = snprintf(buf + used, len - used, "%s%lu", used ? "," : "", first);
		else
			n = snprintf(buf + used, len - used, "%s%lu-%lu", used ? "," : "", first, last);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	return 0;
}
