/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: how many pages --migrate of an interleave moves off each
 * node and onto each (spread_plan): each node of the set ends with its
 * share (equal, or by the weighted interleave's weights), and no page
 * moves that need not; spread_assign: a huge page goes whole to one
 * node, small pages fill the shares.  options_parse_rate: --rate's sizes. */
#include <numa.h>
#include <stdio.h>
#include <string.h>

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

/* spread_process's rounds over `huge' huge pages and `small' small pages
 * on node 0 (count[0] holds both), over nodes 0-3: count[] becomes each
 * node's pages after; returns how many huge pages were split. */
static int three_rounds(long *count, int huge, long small)
{
	static const enum spread_unit round[3] = { SPREAD_HUGE_FIT, SPREAD_PAGES, SPREAD_HUGE_NEAR };
	long e[4], d[4];
	struct spread_piece pc[4];
	int split = 0, left = huge;

	plan(count, 0xf, e, d);
	for (int r = 0; r < 3; r++) {
		int groups = round[r] == SPREAD_PAGES ? 1 : left;

		for (int b = 0; b < groups; b++) {
			long g = round[r] == SPREAD_PAGES ? small : 512;
			int np = spread_assign(0, g, round[r], 4, e, d, pc);

			if (round[r] != SPREAD_PAGES) {
				split += np > 1 || (np == 1 && pc[0].pages != 512);
				left -= np;
			}
			for (int k = 0; k < np; k++) {
				count[0] -= pc[k].pages;
				count[pc[k].to] += pc[k].pages;
			}
		}
	}
	return split;
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
		/* 64 MiB in 32 huge pages on node 0, 600 small pages there
		 * too, 3 on node 1, over nodes 0-3: the rounds of
		 * spread_process (huge pages that fit, small pages, huge pages
		 * that fit by half) meet each share exactly */
		long fin[4] = { 16384 + 600, 3, 0, 0 };
		int split = three_rounds(fin, 32, 600);

		ok(split == 0, "a huge page goes whole to one node");
		ok(fin[0] == 4247 && fin[1] == 4247 && fin[2] == 4247 && fin[3] == 4246,
		   "with small pages enough, each share is met exactly: %ld %ld %ld %ld", fin[0], fin[1], fin[2], fin[3]);
	}
	{
		/* only huge pages (an aligned 64 MiB and 5 small pages): each
		 * node within half a huge page of its share */
		long fin[4] = { 16384 + 5, 0, 0, 0 };
		int near = three_rounds(fin, 32, 5) == 0;

		for (int n = 0; n < 4; n++)
			near &= fin[n] >= 4097 - 256 && fin[n] <= 4098 + 256;
		ok(near, "each node within half a huge page of its share: %ld %ld %ld %ld", fin[0], fin[1], fin[2], fin[3]);
	}
	{
		long e[4] = { 100, 0, 0, 0 }, d[4] = { 0, 400, 0, 0 };
		struct spread_piece pc[4];

		ok(spread_assign(0, 512, SPREAD_HUGE_NEAR, 4, e, d, pc) == 0 && e[0] == 100 && d[1] == 400,
		   "a huge page mostly not excess stays");
		e[0] = 600;
		d[1] = 200;
		ok(spread_assign(0, 512, SPREAD_HUGE_NEAR, 4, e, d, pc) == 0,
		   "a huge page that would overfill a node by more than half stays");
		d[1] = 300;
		ok(spread_assign(0, 512, SPREAD_HUGE_FIT, 4, e, d, pc) == 0, "one that does not fit waits for the last round");
		ok(spread_assign(0, 512, SPREAD_HUGE_NEAR, 4, e, d, pc) == 1 && pc[0].to == 1 && pc[0].pages == 512 &&
		   d[1] == 0 && e[0] == 88, "then goes, if it fits by half");
		e[0] = 10;
		d[1] = 4;
		d[2] = 3;
		ok(spread_assign(0, 512, SPREAD_PAGES, 4, e, d, pc) == 2 && pc[0].to == 1 && pc[0].pages == 4 &&
		   pc[1].to == 2 && pc[1].pages == 3 && e[0] == 3,
		   "small pages split over the nodes with room, no more than the excess");
	}
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
