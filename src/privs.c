/*
 * privs.c - the caller's capabilities, read with libcap.
 */
#include "config.h"

#include <sys/capability.h>

#include "privs.h"

int privs_have_sys_nice(void)
{
	cap_flag_value_t value = CAP_CLEAR;
	cap_t caps = cap_get_proc();
	int ret;

	if (!caps)
		return -1;
	ret = cap_get_flag(caps, CAP_SYS_NICE, CAP_EFFECTIVE, &value) == 0 ? (value == CAP_SET) : -1;
	cap_free(caps);
	return ret;
}
