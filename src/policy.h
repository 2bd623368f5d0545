/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.h - a NUMA memory policy as the kernel takes it: mode, mode flags
 * and node mask, the rules the kernel enforces on their combination, and the
 * kernel's own text form of a policy (as /proc/PID/numa_maps prints it).
 * Pure: no I/O.
 */
#ifndef PMP_POLICY_H
#define PMP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <numa.h>

struct policy {
	int mode;		/* MPOL_* */
	unsigned int flags;	/* MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES | MPOL_F_NUMA_BALANCING */
	struct bitmask *nodes;	/* NULL for local and default */
};

/* The option that selects a mode, e.g. "--interleave", for messages. */
const char *policy_mode_option(int mode);

/* The kernel's name of a mode, as numa_maps prints it ("interleave",
 * "prefer (many)", ...); NULL for an unknown mode. */
const char *policy_mode_name(int mode);

/* Check mode, flags and node count against the rules of set_mempolicy(2).
 * Returns 0, or -1 with one sentence in why. */
int policy_check(const struct policy *p, char *why, size_t whylen);

/* The policy in the kernel's text form: "interleave:0-3",
 * "bind=static:1", "prefer (many):1-2", "local", "default".
 * Returns 0, or -1 if buf is too small. */
int policy_format(const struct policy *p, char *buf, size_t len);

/* The kernel ABI view: the mask words and the maxnode argument, sized the
 * way libnuma sizes them (mask bits + 1). For a policy without nodes,
 * returns NULL and 0. */
const unsigned long *policy_mask_words(const struct policy *p);
unsigned long policy_maxnode(const struct policy *p);

void policy_release(struct policy *p);

#endif
