/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * show.c - the --show table through libsmartcols: the column list (one
 * entry per column, as prlimit has one per resource), -o parsing, the rows.
 */
#include "config.h"

#include <errno.h>
#include <libsmartcols/libsmartcols.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "show.h"
#include "text.h"

enum col_id { COL_PID, COL_TID, COL_COMMAND, COL_POLICY, COL_MEMS, COL_PATH, COL_THREADS, COL_SAME,
	      COL_DIFFER, COL_NODE };

#define IN_THREADS (1u << SHOW_THREADS)
#define IN_PROCESSES (1u << SHOW_PROCESSES)

/* The columns; their --help text is SHOW_COLUMNS_HELP, in show.h. */
static const struct colinfo {
	const char *name;	/* COL_NODE: "N", followed by the node's number */
	double whint;
	int flags;
	unsigned int views;	/* where it may be asked for */
	unsigned int defaults;	/* where it is shown without -o */
} columns[] = {
	[COL_PID] = { "PID", 5, SCOLS_FL_RIGHT, IN_THREADS | IN_PROCESSES, IN_THREADS | IN_PROCESSES },
	[COL_TID] = { "TID", 5, SCOLS_FL_RIGHT, IN_THREADS, IN_THREADS },
	[COL_COMMAND] = { "COMMAND", 15, 0, IN_THREADS | IN_PROCESSES, IN_THREADS | IN_PROCESSES },
	[COL_POLICY] = { "POLICY", 12, 0, IN_THREADS | IN_PROCESSES, IN_THREADS | IN_PROCESSES },
	[COL_MEMS] = { "MEMS", 5, 0, IN_THREADS | IN_PROCESSES, IN_THREADS | IN_PROCESSES },
	[COL_PATH] = { "PATH", 7, 0, IN_THREADS, 0 },
	[COL_THREADS] = { "THREADS", 7, SCOLS_FL_RIGHT, IN_PROCESSES, IN_PROCESSES },
	[COL_SAME] = { "SAME", 4, SCOLS_FL_RIGHT, IN_PROCESSES, IN_PROCESSES },
	[COL_DIFFER] = { "DIFFER", 6, SCOLS_FL_RIGHT, IN_PROCESSES, IN_PROCESSES },
	[COL_NODE] = { "N", 6, SCOLS_FL_RIGHT, IN_PROCESSES, IN_PROCESSES },
};

#define MAX_COLUMNS 96

struct show_table {
	enum show_view view;
	bool utf8;		/* the C library decodes UTF-8 (LC_CTYPE C.UTF-8) */
	struct libscols_table *tb;
	size_t ncols;
	enum col_id id[MAX_COLUMNS];
	unsigned int node[MAX_COLUMNS];	/* COL_NODE: which */
};

static int add_column(struct show_table *t, enum col_id id, unsigned int node, char *why, size_t len)
{
	const struct colinfo *ci = &columns[id];
	struct libscols_column *cl;
	char name[16];

	if (t->ncols == MAX_COLUMNS) {
		snprintf(why, len, "too many columns (at most %d)", MAX_COLUMNS);
		return -1;
	}
	if (id == COL_NODE)
		snprintf(name, sizeof(name), "N%u", node);
	else
		snprintf(name, sizeof(name), "%s", ci->name);
	cl = scols_table_new_column(t->tb, name, ci->whint, ci->flags);
	if (!cl) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	t->id[t->ncols] = id;
	t->node[t->ncols] = node;
	t->ncols++;
	return 0;
}

/* One name of -o: 0, or -1 with why. */
static int parse_column(struct show_table *t, const char *name, size_t n, unsigned int max_node,
			char *why, size_t len)
{
	static const char *const view_names[] = { [SHOW_THREADS] = "the thread view",
						   [SHOW_PROCESSES] = "--show=processes" };
	char shown[32];

	snprintf(shown, sizeof(shown), "%.*s", (int)(n < 24 ? n : 24), name);
	for (size_t id = 0; id < sizeof(columns) / sizeof(columns[0]); id++) {
		const struct colinfo *ci = &columns[id];
		unsigned int node = 0;

		if (id == COL_NODE) {
			char *end;
			unsigned long v;

			if (n < 2 || (name[0] != 'N' && name[0] != 'n') || name[1] < '0' || name[1] > '9')
				continue;
			errno = 0;
			v = strtoul(name + 1, &end, 10);
			if (end != name + n || errno)
				continue;
			if (v > max_node) {
				snprintf(why, len, "no column %s: this machine's nodes are 0-%u", shown, max_node);
				return -1;
			}
			node = (unsigned int)v;
		} else if (strlen(ci->name) != n || strncasecmp(ci->name, name, n) != 0) {
			continue;
		}
		if (!(ci->views & (1u << t->view))) {
			snprintf(why, len, "column %s is not in %s", id == COL_NODE ? shown : ci->name,
				 view_names[t->view]);
			return -1;
		}
		return add_column(t, (enum col_id)id, node, why, len);
	}
	snprintf(why, len, "unknown column '%s' (see --help)", shown);
	return -1;
}

struct show_table *show_new(enum show_view view, const char *list, bool noheadings, bool raw,
			    unsigned int max_node, char *why, size_t whylen)
{
	struct show_table *t = calloc(1, sizeof(*t));

	if (!t || !(t->tb = scols_new_table())) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	t->view = view;
	/* libsmartcols measures each cell with mbrtowc(3), and a byte that
	 * fails to decode makes it loop for ever (util-linux 2.38): the
	 * cells are valid UTF-8 (text_escape), so decode UTF-8; where that
	 * locale is missing, the cells are made ASCII (set_cell) */
	t->utf8 = setlocale(LC_CTYPE, "C.UTF-8") != NULL;
	/* the cells come escaped by text_escape, which also escapes what
	 * libsmartcols would let through (bidi controls): escaping them again
	 * would turn each \xNN into \x5cxNN */
	if (scols_table_enable_noheadings(t->tb, noheadings) < 0 || scols_table_enable_raw(t->tb, raw) < 0 ||
	    scols_table_enable_noencoding(t->tb, 1) < 0) {
		snprintf(why, whylen, "cannot set up the table");
		goto fail;
	}
	if (list) {
		const char *p = list;

		if (!*p) {
			snprintf(why, whylen, "no columns given to --output");
			goto fail;
		}
		for (;;) {
			size_t n = strcspn(p, ",");

			if (n == 0) {
				snprintf(why, whylen, "empty column name in --output");
				goto fail;
			}
			if (parse_column(t, p, n, max_node, why, whylen) < 0)
				goto fail;
			if (!p[n])
				break;
			p += n + 1;
		}
		return t;
	}
	for (size_t id = 0; id < sizeof(columns) / sizeof(columns[0]); id++) {
		if (!(columns[id].defaults & (1u << view)))
			continue;
		for (unsigned int node = 0; node <= (id == COL_NODE ? max_node : 0); node++)
			if (add_column(t, (enum col_id)id, node, why, whylen) < 0)
				goto fail;
	}
	return t;
fail:
	show_free(t);
	return NULL;
}

/* A cell, only if every byte decodes as the table will decode it (see
 * show_new); else with each such byte as '?'. */
static int set_cell(const struct show_table *t, struct libscols_line *ln, size_t i, const char *text)
{
	size_t len;
	char *copy;
	int rc;

	if (!text)
		return scols_line_set_data(ln, i, "unknown");
	len = strlen(text);
	copy = strdup(text);
	if (!copy)
		return -1;
	for (size_t at = 0; at < len;) {
		uint32_t cp;
		size_t n = t->utf8 ? text_utf8_decode(text + at, len - at, &cp) : 0;

		if (n == 0) {
			if ((unsigned char)text[at] >= 0x80)
				copy[at] = '?';
			n = 1;
		}
		at += n;
	}
	rc = scols_line_refer_data(ln, i, copy);
	if (rc < 0)
		free(copy);
	return rc;
}

static int set_number(struct libscols_line *ln, size_t i, unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", v);
	return scols_line_set_data(ln, i, buf);
}

bool show_has_path(const struct show_table *t)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (t->id[i] == COL_PATH)
			return true;
	return false;
}

int show_add_thread(struct show_table *t, const struct show_thread *th)
{
	struct libscols_line *ln = scols_table_new_line(t->tb, NULL);

	if (!ln)
		return -1;
	for (size_t i = 0; i < t->ncols; i++) {
		int rc = 0;

		switch (t->id[i]) {
		case COL_PID:     rc = set_number(ln, i, (unsigned long long)th->pid); break;
		case COL_TID:     rc = set_number(ln, i, (unsigned long long)th->tid); break;
		case COL_COMMAND: rc = set_cell(t, ln, i, th->comm); break;
		case COL_POLICY:  rc = set_cell(t, ln, i, th->policy); break;
		case COL_MEMS:    rc = set_cell(t, ln, i, th->mems_allowed); break;
		case COL_PATH:    rc = scols_line_set_data(ln, i, th->path ? th->path : "-"); break;
		default:          break;	/* parse_column keeps the others out */
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

int show_add_process(struct show_table *t, const struct show_process *p)
{
	struct libscols_line *ln = scols_table_new_line(t->tb, NULL);

	if (!ln)
		return -1;
	for (size_t i = 0; i < t->ncols; i++) {
		int rc = 0;

		switch (t->id[i]) {
		case COL_PID:     rc = set_number(ln, i, (unsigned long long)p->pid); break;
		case COL_COMMAND: rc = set_cell(t, ln, i, p->comm); break;
		case COL_POLICY:  rc = set_cell(t, ln, i, p->policy); break;
		case COL_MEMS:    rc = set_cell(t, ln, i, p->mems_allowed); break;
		case COL_THREADS: rc = set_number(ln, i, p->threads); break;
		case COL_SAME:    rc = set_number(ln, i, p->same); break;
		case COL_DIFFER:  rc = set_number(ln, i, p->threads - p->same); break;
		case COL_NODE:
			rc = set_number(ln, i, t->node[i] < p->nnodes ? p->pages[t->node[i]] : 0);
			break;
		case COL_TID:
		case COL_PATH:    break;
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

int show_print(struct show_table *t, FILE *out)
{
	if (scols_table_is_empty(t->tb))
		return 0;
	if (scols_table_set_stream(t->tb, out) < 0)
		return -1;
	return scols_print_table(t->tb) < 0 ? -1 : 0;
}

void show_free(struct show_table *t)
{
	if (!t)
		return;
	scols_unref_table(t->tb);
	free(t);
}
