/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: how many pages --migrate of an interleave moves off each
 * node and onto each (spread_plan): each node of the set ends with its
 * share (equal, or by the weighted interleave's weights), and no page
 * moves that need not.  options_parse_rate: --rate's sizes. */
#include <numa.h>
#include <stdio.h>

#include "options.h"
#include "spread.h"
#include "tap.h"

static void plan_weighted(const long *count, unsigned int setbits, const unsigned int *weights, long *excess,
			  long *deficit)
{
	struct bitmask *set = numa_bitmask_alloc(64);

	if (!set)
		exit(99);
	for (unsigned int n = 0; n < 4; n++)
		if (setbits & (1u << n))
			numa_bitmask_setbit(set, n);
	spread_plan(count, 4, set, weights, excess, deficit);
	numa_bitmask_free(set);
}

static void plan(const long *count, unsigned int setbits, long *excess, long *deficit)
{
	plan_weighted(count, setbits, NULL, excess, deficit);
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
	plan_weighted((long[]){ 16384, 0, 0, 0 }, 0xf, (const unsigned int[]){ 3, 1, 1, 1 }, ex, de);
	ok(same(ex, 8191, 0, 0, 0) && same(de, 0, 2731, 2730, 2730),
	   "weights 3:1:1:1: node 0 keeps half: ex %ld, de %ld %ld %ld", ex[0], de[1], de[2], de[3]);
	plan_weighted((long[]){ 0, 600, 0, 0 }, 0x5, (const unsigned int[]){ 1, 9, 2, 9 }, ex, de);
	ok(same(ex, 0, 600, 0, 0) && same(de, 200, 0, 400, 0),
	   "weights of nodes outside the set do not count: de %ld %ld", de[0], de[2]);
	plan_weighted((long[]){ 500, 500, 0, 0 }, 0x3, (const unsigned int[]){ 1, 1, 1, 1 }, ex, de);
	ok(same(ex, 0, 0, 0, 0) && same(de, 0, 0, 0, 0), "equal weights: as an interleave");

	{
		unsigned long long r = 0;

		ok(options_parse_rate("200M/s", &r) == 0 && r == 200ULL << 20, "rate 200M/s");
		ok(options_parse_rate("1GiB/s", &r) == 0 && r == 1ULL << 30, "rate 1GiB/s");
		ok(options_parse_rate("512K", &r) == 0 && r == 512ULL << 10, "rate 512K, no /s");
		ok(options_parse_rate("4096", &r) == 0 && r == 4096, "rate in bytes");
		ok(options_parse_rate("4096B/s", &r) == 0 && r == 4096, "rate in B/s");
		ok(options_parse_rate("0M/s", &r) < 0, "rate 0 refused");
		ok(options_parse_rate("-1M", &r) < 0, "negative refused");
		ok(options_parse_rate("10X/s", &r) < 0, "unknown unit refused");
		ok(options_parse_rate("10M/h", &r) < 0, "per hour refused");
		ok(options_parse_rate("99999999999999999999", &r) < 0, "overflow refused");
		ok(options_parse_rate("20000000T", &r) < 0, "overflow by the unit refused");
	}
	return tap_done();
}
