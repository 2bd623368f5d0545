/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.c - modes, mode flags and node masks in the kernel's ABI, the
 * combination rules of set_mempolicy(2) (mm/mempolicy.c: sanitize_mpol_flags
 * and mpol_new), and the kernel's text form of a policy (mpol_to_str).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "compat.h"
#include "nodes.h"
#include "policy.h"

struct mode_info {
	int mode;
	const char *kernel_name;
	const char *option;
	int nodes;		/* 0: none, 1: exactly one, 2: one or more */
};

static const struct mode_info modes[] = {
	{ MPOL_DEFAULT,             "default",             "--default",             0 },
	{ MPOL_PREFERRED,           "prefer",              "--preferred",           1 },
	{ MPOL_BIND,                "bind",                "--membind",             2 },
	{ MPOL_INTERLEAVE,          "interleave",          "--interleave",          2 },
	{ MPOL_LOCAL,               "local",               "--localalloc",          0 },
	{ MPOL_PREFERRED_MANY,      "prefer (many)",       "--preferred-many",      2 },
	{ MPOL_WEIGHTED_INTERLEAVE, "weighted interleave", "--weighted-interleave", 2 },
};

static const struct mode_info *mode_lookup(int mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].mode == mode)
			return &modes[i];
	return NULL;
}

const char *policy_mode_name(int mode)
{
	const struct mode_info *m = mode_lookup(mode);

	return m ? m->kernel_name : NULL;
}

const char *policy_mode_option(int mode)
{
	const struct mode_info *m = mode_lookup(mode);

	return m ? m->option : "?";
}

int policy_check(const struct policy *p, char *why, size_t whylen)
{
	const struct mode_info *m = mode_lookup(p->mode);
	unsigned int n = p->nodes ? nodes_count(p->nodes) : 0;

	if (!m) {
		snprintf(why, whylen, "unknown policy mode %d", p->mode);
		return -1;
	}
	if ((p->flags & MPOL_F_STATIC_NODES) && (p->flags & MPOL_F_RELATIVE_NODES)) {
		snprintf(why, whylen, "--static and --relative exclude each other");
		return -1;
	}
	if (m->nodes == 0 && p->nodes) {
		snprintf(why, whylen, "%s takes no node list", m->option);
		return -1;
	}
	if (m->nodes == 0 && (p->flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES))) {
		snprintf(why, whylen, "--static and --relative need a node list; %s has none", m->option);
		return -1;
	}
	if (m->nodes != 0 && n == 0) {
		snprintf(why, whylen, "%s needs a node list", m->option);
		return -1;
	}
	if (m->nodes == 1 && n != 1) {
		snprintf(why, whylen, "%s takes exactly one node, got %u (use --preferred-many for several)",
			 m->option, n);
		return -1;
	}
	/* Linux 6.1 accepts NUMA balancing only with MPOL_BIND. */
	if ((p->flags & MPOL_F_NUMA_BALANCING) && p->mode != MPOL_BIND) {
		snprintf(why, whylen, "--balancing works only with --membind");
		return -1;
	}
	return 0;
}

int policy_format(const struct policy *p, char *buf, size_t len)
{
	const char *name = policy_mode_name(p->mode);
	const char *node_flag = "", *bar = "", *balancing = "";
	char list[1024];
	int n;

	if (!name)
		return -1;
	/* as mpol_to_str(): "=static", "=relative", "=balancing",
	 * "=static|balancing" */
	if (p->flags & MPOL_F_STATIC_NODES)
		node_flag = "static";
	else if (p->flags & MPOL_F_RELATIVE_NODES)
		node_flag = "relative";
	if (p->flags & MPOL_F_NUMA_BALANCING) {
		balancing = "balancing";
		bar = node_flag[0] ? "|" : "";
	}
	list[0] = '\0';
	if (p->nodes && nodes_format(p->nodes, list, sizeof(list)) < 0)
		return -1;
	n = snprintf(buf, len, "%s%s%s%s%s%s%s", name,
		     (node_flag[0] || balancing[0]) ? "=" : "", node_flag, bar, balancing,
		     list[0] ? ":" : "", list);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

const unsigned long *policy_mask_words(const struct policy *p)
{
	return p->nodes ? p->nodes->maskp : NULL;
}

unsigned long policy_maxnode(const struct policy *p)
{
	return p->nodes ? p->nodes->size + 1 : 0;
}

void policy_release(struct policy *p)
{
	if (p->nodes)
		numa_bitmask_free(p->nodes);
	p->nodes = NULL;
}
