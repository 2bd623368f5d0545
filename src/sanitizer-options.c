/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sanitizer-options.c - built into the tool only; empty unless the build
 * uses AddressSanitizer (./configure --enable-sanitizers).  Then it sets the
 * sanitizers' defaults: a memory error, undefined behaviour or a leak ends
 * the tool with status 99, which no documented exit status shares, so a
 * test that expects 1 or 64 cannot pass on a sanitizer report.  Defaults,
 * not the environment, because the QEMU guest suites start the tool from
 * bats inside the guest, where no ASAN_OPTIONS reaches.
 */
#include "config.h"

#if defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define PMP_ASAN 1
# endif
#endif
#if defined(__SANITIZE_ADDRESS__)
# define PMP_ASAN 1
#endif

#ifdef PMP_ASAN
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void)
{
	return "exitcode=99:detect_leaks=1:abort_on_error=0";
}

const char *__ubsan_default_options(void)
{
	return "exitcode=99:print_stacktrace=1";
}
#else
/* ISO C wants something in a translation unit. */
typedef int pmp_no_sanitizer_options;
#endif
