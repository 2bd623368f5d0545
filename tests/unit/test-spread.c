/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: how many pages --migrate of an interleave moves off each
 * node and onto each (spread_plan): each node of the set ends with its
 * share, and no page moves that need not. */
#include <numa.h>
#include <stdio.h>

#include "spread.h"
#include "tap.h"

static void plan(const long *count, unsigned int setbits, long *excess, long *deficit)
{
	struct bitmask *set = numa_bitmask_alloc(64);

	if (!set)
		exit(99);
	for (unsigned int n = 0; n < 4; n++)
		if (setbits & (1u << n))
			numa_bitmask_setbit(set, n);
	spread_plan(count, 4, set, excess, deficit);
	numa_bitmask_free(set);
}

static int same(const long *a, long b0, long b1, long b2, long b3)
{
	return a[0] == b0 && a[1] == b1 && a[2] == b2 && a[3] == b3;
}

int main(void)
{
	long ex[4], de[4];

	plan((long[]){ 16384, 0, 0, 0 }, 0xf, ex, de);
	ok(same(ex, 12288, 0, 0, 0) && same(de, 0, 4096, 4096, 4096), "all on node 0, over 0-3: 3/4 move");
	plan((long[]){ 4096, 4096, 4096, 4096 }, 0xf, ex, de);
	ok(same(ex, 0, 0, 0, 0) && same(de, 0, 0, 0, 0), "already even: nothing moves");
	plan((long[]){ 100, 0, 0, 50 }, 0x3, ex, de);
	ok(same(ex, 25, 0, 0, 50) && same(de, 0, 75, 0, 0),
	   "over 0-1: node 3's pages all move, node 0 keeps its share: ex %ld %ld %ld %ld", ex[0], ex[1], ex[2], ex[3]);
	plan((long[]){ 7, 0, 0, 0 }, 0xf, ex, de);
	ok(same(ex, 5, 0, 0, 0) && same(de, 0, 2, 2, 1), "a remainder goes to the first nodes: de %ld %ld %ld %ld",
	   de[0], de[1], de[2], de[3]);
	plan((long[]){ 0, 0, 0, 0 }, 0xf, ex, de);
	ok(same(ex, 0, 0, 0, 0) && same(de, 0, 0, 0, 0), "no pages: nothing moves");
	return tap_done();
}
