/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: node lists through libnuma into kernel masks, policy rules,
 * the kernel's text form of a policy. */
#include <numa.h>
#include <stdlib.h>

#include "compat.h"
#include "nodes.h"
#include "policy.h"
#include "tap.h"

static int parse_ok(const char *arg, struct policy *p)
{
	char why[256];

	p->nodes = NULL;
	return nodes_parse(arg, &p->nodes, why, sizeof(why));
}

static const char *parse_error(const char *arg)
{
	static char why[256];
	struct bitmask *m = NULL;

	why[0] = '\0';
	if (nodes_parse(arg, &m, why, sizeof(why)) == 0) {
		numa_bitmask_free(m);
		return "";
	}
	return why;
}

static const char *check(int mode, unsigned int flags, const char *nodes)
{
	static char why[256];
	struct policy p = { .mode = mode, .flags = flags };

	why[0] = '\0';
	if (nodes && parse_ok(nodes, &p) < 0)
		return "parse failed";
	if (policy_check(&p, why, sizeof(why)) == 0)
		strcpy(why, "");
	policy_release(&p);
	return why;
}

static const char *format(int mode, unsigned int flags, const char *nodes)
{
	static char buf[256];
	struct policy p = { .mode = mode, .flags = flags };

	if (nodes && parse_ok(nodes, &p) < 0)
		return "parse failed";
	if (policy_format(&p, buf, sizeof(buf)) < 0)
		strcpy(buf, "format failed");
	policy_release(&p);
	return buf;
}

int main(void)
{
	struct policy p = { .mode = MPOL_INTERLEAVE };
	char why[256], list[64];
	struct bitmask *m;

	/* node 0 exists on every machine, NUMA or not */
	ok(parse_ok("0", &p) == 0, "'0' parses");
	ok(p.nodes && numa_bitmask_isbitset(p.nodes, 0) && nodes_count(p.nodes) == 1, "'0' is node 0 alone");
	ok(policy_maxnode(&p) == p.nodes->size + 1, "maxnode is mask bits + 1, as libnuma passes it");
	ok(policy_mask_words(&p) == p.nodes->maskp, "mask words are libnuma's");
	ok(p.nodes->size == (unsigned long)numa_num_possible_nodes(), "mask spans the possible nodes");
	policy_release(&p);
	ok(p.nodes == NULL, "release clears the mask");

	ok(parse_ok("all", &p) == 0 && nodes_count(p.nodes) == (unsigned)numa_num_configured_nodes(),
	   "'all' is every configured node");
	policy_release(&p);

	is_str(parse_error(""), "empty node list", "empty list refused");
	is_str(parse_error("   "), "empty node list", "blank list refused");
	ok(strstr(parse_error("x"), "invalid node list 'x'") != NULL, "garbage refused: %s", parse_error("x"));
	ok(strstr(parse_error("99999"), "out of range") != NULL, "node past the possible ones refused with libnuma's reason");
	ok(strstr(parse_error("-1"), "invalid node list") != NULL, "negative node refused");
	is_str(parse_error("!all"), "node list '!all' selects no node", "inverted all is empty");
	ok(strstr(parse_error("0-"), "invalid node list") != NULL, "open range refused");

	m = numa_allocate_nodemask();
	numa_bitmask_setbit(m, 0);
	numa_bitmask_setbit(m, 1);
	numa_bitmask_setbit(m, 2);
	numa_bitmask_setbit(m, 5);
	numa_bitmask_setbit(m, 7);
	numa_bitmask_setbit(m, 8);
	ok(nodes_format(m, list, sizeof(list)) == 0, "format fits");
	is_str(list, "0-2,5,7-8", "ranges formatted as the kernel does");
	ok(nodes_format(m, list, 4) < 0, "a too small buffer is reported");
	numa_bitmask_clearall(m);
	ok(nodes_format(m, list, sizeof(list)) == 0 && list[0] == '\0', "empty mask formats to nothing");
	numa_bitmask_free(m);

	/* rules */
	is_str(check(MPOL_INTERLEAVE, 0, "0"), "", "interleave with a node is fine");
	is_str(check(MPOL_INTERLEAVE, 0, NULL), "--interleave needs a node list", "interleave without nodes");
	is_str(check(MPOL_LOCAL, 0, "0"), "--localalloc takes no node list", "local with nodes");
	is_str(check(MPOL_DEFAULT, 0, "0"), "--default takes no node list", "default with nodes");
	is_str(check(MPOL_INTERLEAVE, MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES, "0"),
	       "--static and --relative exclude each other", "static and relative");
	is_str(check(MPOL_LOCAL, MPOL_F_STATIC_NODES, NULL),
	       "--static and --relative need a node list; --localalloc has none", "static with local");
	is_str(check(MPOL_BIND, MPOL_F_NUMA_BALANCING, "0"), "", "balancing with bind");
	is_str(check(MPOL_INTERLEAVE, MPOL_F_NUMA_BALANCING, "0"), "--balancing works only with --membind",
	       "balancing with interleave");
	is_str(check(MPOL_PREFERRED, 0, "0"), "", "preferred with one node");
	is_str(check(42, 0, NULL), "unknown policy mode 42", "unknown mode");
	strcpy(why, "");
	{
		struct policy two = { .mode = MPOL_PREFERRED };

		two.nodes = numa_allocate_nodemask();
		numa_bitmask_setbit(two.nodes, 0);
		numa_bitmask_setbit(two.nodes, 1);
		ok(policy_check(&two, why, sizeof(why)) < 0 && strstr(why, "exactly one node, got 2"),
		   "preferred with two nodes: %s", why);
		policy_release(&two);
	}

	/* text form, as mpol_to_str() */
	is_str(format(MPOL_INTERLEAVE, 0, "0"), "interleave:0", "interleave text");
	is_str(format(MPOL_BIND, MPOL_F_STATIC_NODES, "0"), "bind=static:0", "static flag text");
	is_str(format(MPOL_PREFERRED_MANY, MPOL_F_RELATIVE_NODES, "0"), "prefer (many)=relative:0", "relative flag text");
	is_str(format(MPOL_BIND, MPOL_F_NUMA_BALANCING, "0"), "bind=balancing:0", "balancing flag text");
	is_str(format(MPOL_BIND, MPOL_F_NUMA_BALANCING | MPOL_F_STATIC_NODES, "0"), "bind=static|balancing:0",
	       "static and balancing text");
	is_str(format(MPOL_LOCAL, 0, NULL), "local", "local text");
	is_str(format(MPOL_DEFAULT, 0, NULL), "default", "default text");
	is_str(format(MPOL_WEIGHTED_INTERLEAVE, 0, "0"), "weighted interleave:0", "weighted interleave text");
	is_str(policy_mode_option(MPOL_PREFERRED_MANY), "--preferred-many", "option name of a mode");
	ok(policy_mode_name(99) == NULL, "no name for an unknown mode");
	return tap_done();
}
