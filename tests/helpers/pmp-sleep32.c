/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-sleep32 - a 32-bit (i386, compat) process for the ptrace backend's
 * refusal test: built with -m32 -static, it prints "ready PID" and then
 * sleeps in pause(2) until killed.  Its policy can be read from
 * /proc/PID/numa_maps; nothing in it sets one.
 *
 * pmp-sleep32 --probe exits 0 at once: whether the kernel runs 32-bit
 * programs at all (tests/lib/common.bash, execs_32bit).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--probe") == 0)
		return 0;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
