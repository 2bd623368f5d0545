/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nodes.h - NUMA node lists: parsing through libnuma's node-list parser
 * (numactl's syntax) and formatting back to the kernel's list form.
 */
#ifndef PMP_NODES_H
#define PMP_NODES_H

#include <stddef.h>
#include <numa.h>

/* Parse a node list such as "0-3", "all", "!1", "netdev:eth0" against the
 * system's configured nodes (not the caller's cpuset).  On success stores a
 * non-empty mask in *out (free with numa_bitmask_free) and returns 0.  On
 * failure returns -1 and writes one human sentence to why. */
int nodes_parse(const char *arg, struct bitmask **out, char *why, size_t whylen);

/* Write the set bits of mask as a kernel-style list ("0-2,5"); "" if empty.
 * Returns 0, or -1 if buf is too small (buf then holds a truncated list). */
int nodes_format(const struct bitmask *mask, char *buf, size_t len);

/* Number of set bits. */
unsigned int nodes_count(const struct bitmask *mask);

#endif
