/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * privs.c - the caller's capabilities, read with libcap.
 */
#include "config.h"

#include <sys/capability.h>

#include "privs.h"

static int have(cap_value_t cap)
{
	cap_flag_value_t value = CAP_CLEAR;
	cap_t caps = cap_get_proc();
	int ret;

	if (!caps)
		return -1;
	ret = cap_get_flag(caps, cap, CAP_EFFECTIVE, &value) == 0 ? (value == CAP_SET) : -1;
	cap_free(caps);
	return ret;
}

int privs_have_sys_nice(void)
{
	return have(CAP_SYS_NICE);
}

int privs_have_sys_ptrace(void)
{
	return have(CAP_SYS_PTRACE);
}
