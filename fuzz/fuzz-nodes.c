/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-nodes.c - libFuzzer target for node lists: nodes_parse (libnuma's
 * numa_parse_nodestring_all behind the tool's own checks), then
 * policy_check and policy_format for every mode and every combination of
 * mode flags, and nodes_format into buffers of several sizes.  The input is
 * NUL-terminated and capped at 4 KiB, as a command-line argument would be.
 *
 * A second mask is built straight from the input's bits (up to 4096 nodes)
 * so that nodes_format and policy_format also see masks that this machine's
 * node count would never let the parser produce.
 *
 * libnuma resolves "ip:HOST" with getaddrinfo(); so that the fuzzer never
 * sends a DNS query, getaddrinfo is replaced here by one that only accepts
 * numeric addresses (AI_NUMERICHOST) and then calls glibc's.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <netdb.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "compat.h"
#include "nodes.h"
#include "policy.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		struct addrinfo **res)
{
	static int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
	struct addrinfo h;

	if (!real) {
		real = (int (*)(const char *, const char *, const struct addrinfo *,
				struct addrinfo **))dlsym(RTLD_NEXT, "getaddrinfo");
		if (!real)
			abort();
	}
	if (hints)
		h = *hints;
	else
		memset(&h, 0, sizeof(h));
	h.ai_flags |= AI_NUMERICHOST | AI_NUMERICSERV;
	return real(node, service, &h, res);
}

static struct guarded arg_buf;

static const int modes[] = {
	MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_INTERLEAVE, MPOL_LOCAL,
	MPOL_PREFERRED_MANY, MPOL_WEIGHTED_INTERLEAVE, 7, -1,
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))
/* the three mode flags in all 8 combinations, then one unknown bit */
static const unsigned int flag_bits[] = {
	MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES, MPOL_F_NUMA_BALANCING, 1u,
};
#define NCOMBOS 9
static const size_t out_sizes[] = { 1, 2, 4, 16, 64, 4096 };
#define NSIZES (sizeof(out_sizes) / sizeof(out_sizes[0]))

static unsigned int combo_flags(unsigned int combo)
{
	unsigned int flags = 0;

	if (combo == 8)
		return flag_bits[3];
	for (size_t b = 0; b < 3; b++)
		if (combo & (1u << b))
			flags |= flag_bits[b];
	return flags;
}

static void format_into(const struct policy *p, size_t size)
{
	char *out = malloc(size);

	if (!out)
		abort();
	if (policy_format(p, out, size) == 0)
		FUZZ_ASSERT(strnlen(out, size) < size);
	free(out);
}

static void check_one(const struct policy *p)
{
	char why[256];

	why[0] = '\0';
	if (policy_check(p, why, sizeof(why)) < 0)
		FUZZ_ASSERT(why[0] != '\0');
	(void)policy_mask_words(p);
	(void)policy_maxnode(p);
}

/* nodes_format into buffers of every size; then, if sweep, policy_check
 * and policy_format for every mode and flag combination, with and without
 * the mask; the output-size sweep for the combination picked by pick. */
static void exercise(struct bitmask *mask, int sweep, unsigned int pick)
{
	struct policy p;

	for (size_t s = 0; s < NSIZES; s++) {
		char *out = malloc(out_sizes[s]);

		if (!out)
			abort();
		if (nodes_format(mask, out, out_sizes[s]) == 0)
			FUZZ_ASSERT(strnlen(out, out_sizes[s]) < out_sizes[s]);
		free(out);
	}
	if (sweep)
		for (size_t m = 0; m < NMODES; m++) {
			for (unsigned int combo = 0; combo < NCOMBOS; combo++)
				for (int with = 0; with < 2; with++) {
					p.mode = modes[m];
					p.flags = combo_flags(combo);
					p.nodes = with ? mask : NULL;
					check_one(&p);
					format_into(&p, 4096);
				}
			(void)policy_mode_name(modes[m]);
			(void)policy_mode_option(modes[m]);
		}
	p.mode = modes[pick % NMODES];
	p.flags = combo_flags((pick / NMODES) % NCOMBOS);
	p.nodes = (pick / NMODES / NCOMBOS) % 2 ? NULL : mask;
	check_one(&p);
	for (size_t s = 0; s < NSIZES; s++)
		format_into(&p, out_sizes[s]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bitmask *mask = NULL, *raw;
	char why[256];
	char *arg;

	if (size > 4096)
		return 0;
	arg = guarded_copy(&arg_buf, data, size, '\0');
	why[0] = '\0';
	if (nodes_parse(arg, &mask, why, sizeof(why)) == 0) {
		FUZZ_ASSERT(mask != NULL && nodes_count(mask) > 0);
		exercise(mask, 1, (unsigned int)size * 7u + (unsigned char)arg[0]);
		{
			struct policy p = { .mode = MPOL_BIND, .nodes = mask };

			policy_release(&p);	/* frees mask */
			FUZZ_ASSERT(p.nodes == NULL);
		}
	} else {
		FUZZ_ASSERT(mask == NULL);
		FUZZ_ASSERT(why[0] != '\0' && memchr(why, '\0', sizeof(why)) != NULL);
	}

	/* a mask from the input's bits (the first byte picks mode and flags) */
	if (size > 1) {
		unsigned int bits = (unsigned int)(size - 1 > 256 ? 256 : size - 1) * 8;

		raw = numa_bitmask_alloc(bits);
		if (!raw)
			abort();
		for (unsigned int i = 0; i < bits; i++)
			if (data[1 + i / 8] & (1u << (i % 8)))
				numa_bitmask_setbit(raw, i);
		exercise(raw, 0, data[0]);
		numa_bitmask_free(raw);
	}
	return 0;
}
