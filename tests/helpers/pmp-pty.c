/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmp-pty - run a command with its standard error on a pseudo-terminal,
 * so that a test can see what the tool draws for a person at a terminal
 * (the --migrate progress line), byte for byte.
 *
 * Usage: pmp-pty COMMAND [ARG]...
 *
 * The command's stdin and stdout are pmp-pty's own; its stderr is the
 * slave side of a new pty (raw, so that no byte is translated), and
 * everything written there is copied to pmp-pty's stdout.  Exits with the
 * command's status (128 + N for a signal N), or 127 if it could not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct termios raw;
	int master, slave, status;
	char buf[4096];
	pid_t child;
	ssize_t n;

	if (argc < 2) {
		fprintf(stderr, "usage: pmp-pty COMMAND [ARG]...\n");
		return 127;
	}
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) {
		perror("pmp-pty: pty");
		return 127;
	}
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	if (slave < 0 || tcgetattr(slave, &raw) < 0) {
		perror("pmp-pty: pty slave");
		return 127;
	}
	cfmakeraw(&raw);
	if (tcsetattr(slave, TCSANOW, &raw) < 0) {
		perror("pmp-pty: raw");
		return 127;
	}
	child = fork();
	if (child < 0) {
		perror("pmp-pty: fork");
		return 127;
	}
	if (child == 0) {
		if (dup2(slave, 2) < 0)
			_exit(127);
		close(master);
		close(slave);
		execvp(argv[1], argv + 1);
		perror("pmp-pty: exec");
		_exit(127);
	}
	close(slave);
	/* EIO once the last holder of the slave side has closed it */
	while ((n = read(master, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return 127;
	if (waitpid(child, &status, 0) < 0)
		return 127;
	if (fflush(stdout) != 0)
		return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
