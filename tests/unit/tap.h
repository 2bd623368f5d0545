/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap.h - a minimal TAP producer for the unit tests (automake's
 * tap-driver.sh reads it).
 */
#ifndef PMP_TAP_H
#define PMP_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

#define ok(cond, ...) do {						\
		int ok_c = (cond) ? 1 : 0;				\
		tap_count++;						\
		if (!ok_c)						\
			tap_failed++;					\
		printf("%sok %d - ", ok_c ? "" : "not ", tap_count);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		if (!ok_c)						\
			printf("#   at %s:%d\n", __FILE__, __LINE__);	\
	} while (0)

#define is_str(got, want, ...) do {					\
		const char *is_g = (got), *is_w = (want);		\
		ok(strcmp(is_g, is_w) == 0, __VA_ARGS__);		\
		if (strcmp(is_g, is_w) != 0)				\
			printf("#   got '%s', want '%s'\n", is_g, is_w);	\
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
