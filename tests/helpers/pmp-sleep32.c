/*
 * pmp-sleep32 - a 32-bit (i386, compat) process for the ptrace backend's
 * refusal test: built with -m32 -static, it prints "ready PID" and then
 * sleeps in pause(2) until killed.  Its policy can be read from
 * /proc/PID/numa_maps; nothing in it sets one.
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
