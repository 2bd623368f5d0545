/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigcalls.c - the table of blocking system calls and what a signal
 * handler (SA_RESTART) does to each, beside a ptrace stop (sigcalls.h).
 * A call not in the table ends: the signal engine leaves its thread to
 * the ptrace path.  Numbers are the architecture's own (<sys/syscall.h>);
 * a call the architecture lacks (aarch64 has no poll, select, pause,
 * epoll_wait, open) has no row there.
 */
#include "config.h"

#include <stdio.h>
#include <sys/syscall.h>

#include "sigcalls.h"

/* futex(2) operations, by the command in the low bits of op. */
#define FUTEX_CMD_MASK_		0x7f
#define FUTEX_WAIT_		0
#define FUTEX_LOCK_PI_		6
#define FUTEX_WAIT_BITSET_	9
#define FUTEX_LOCK_PI2_		13

struct sigcall_row {
	long nr;
	const char *name;
	enum sigcall_verdict verdict;
};

#define ROW(call, verdict) { SYS_##call, #call, verdict }

static const struct sigcall_row rows[] = {
	/* -ERESTARTSYS: restarted after a handler with SA_RESTART; a socket
	 * with SO_RCVTIMEO/SO_SNDTIMEO answers -EINTR to a ptrace stop too */
	ROW(read, SIGCALL_RESTARTS),
	ROW(readv, SIGCALL_RESTARTS),
	ROW(pread64, SIGCALL_RESTARTS),
	ROW(preadv, SIGCALL_RESTARTS),
	ROW(preadv2, SIGCALL_RESTARTS),
	ROW(write, SIGCALL_RESTARTS),
	ROW(writev, SIGCALL_RESTARTS),
	ROW(pwrite64, SIGCALL_RESTARTS),
	ROW(pwritev, SIGCALL_RESTARTS),
	ROW(pwritev2, SIGCALL_RESTARTS),
	ROW(recvfrom, SIGCALL_RESTARTS),
	ROW(recvmsg, SIGCALL_RESTARTS),
	ROW(sendto, SIGCALL_RESTARTS),
	ROW(sendmsg, SIGCALL_RESTARTS),
	ROW(accept, SIGCALL_RESTARTS),
	ROW(accept4, SIGCALL_RESTARTS),
	ROW(connect, SIGCALL_RESTARTS),
	ROW(wait4, SIGCALL_RESTARTS),
	ROW(waitid, SIGCALL_RESTARTS),
	ROW(flock, SIGCALL_RESTARTS),
	ROW(fcntl, SIGCALL_RESTARTS),		/* F_SETLKW, F_OFD_SETLKW */
	ROW(openat, SIGCALL_RESTARTS),		/* a FIFO waiting for its other end */
#ifdef SYS_open
	ROW(open, SIGCALL_RESTARTS),
#endif
	/* futex: decided by its operation (futex_verdict) */
	ROW(futex, SIGCALL_ENDS),
	/* -EINTR to a ptrace stop as to a handler */
#ifdef SYS_epoll_wait
	ROW(epoll_wait, SIGCALL_EINTR_ANYWAY),
#endif
	ROW(epoll_pwait, SIGCALL_EINTR_ANYWAY),
#ifdef SYS_epoll_pwait2
	ROW(epoll_pwait2, SIGCALL_EINTR_ANYWAY),
#endif
	/* never wait: seen inside them only when preempted there */
	ROW(sched_yield, SIGCALL_NO_WAIT),
	ROW(getpid, SIGCALL_NO_WAIT),
	ROW(getppid, SIGCALL_NO_WAIT),
	ROW(gettid, SIGCALL_NO_WAIT),
	ROW(clock_gettime, SIGCALL_NO_WAIT),
	/* -ERESTARTNOHAND or -ERESTART_RESTARTBLOCK: a handler ends them
	 * with EINTR, a ptrace stop restarts them; named for the report */
	ROW(nanosleep, SIGCALL_ENDS),
	ROW(clock_nanosleep, SIGCALL_ENDS),
#ifdef SYS_poll
	ROW(poll, SIGCALL_ENDS),
#endif
	ROW(ppoll, SIGCALL_ENDS),
#ifdef SYS_select
	ROW(select, SIGCALL_ENDS),
#endif
	ROW(pselect6, SIGCALL_ENDS),
#ifdef SYS_pause
	ROW(pause, SIGCALL_ENDS),
#endif
	ROW(rt_sigsuspend, SIGCALL_ENDS),
	ROW(rt_sigtimedwait, SIGCALL_ENDS),
	ROW(restart_syscall, SIGCALL_ENDS),
	ROW(msgrcv, SIGCALL_ENDS),
	ROW(msgsnd, SIGCALL_ENDS),
	ROW(semop, SIGCALL_ENDS),
	ROW(semtimedop, SIGCALL_ENDS),
	ROW(mq_timedreceive, SIGCALL_ENDS),
	ROW(mq_timedsend, SIGCALL_ENDS),
	ROW(io_getevents, SIGCALL_ENDS),
	ROW(io_pgetevents, SIGCALL_ENDS),
	ROW(io_uring_enter, SIGCALL_ENDS),
	ROW(recvmmsg, SIGCALL_ENDS),
	ROW(ioctl, SIGCALL_ENDS),
#ifdef SYS_futex_waitv
	ROW(futex_waitv, SIGCALL_ENDS),
#endif
};

/* A futex wait without a timeout returns -ERESTARTSYS, and PI locking
 * -ERESTARTNOINTR: both restart.  With a timeout it returns
 * -ERESTART_RESTARTBLOCK, which a handler turns into EINTR. */
static enum sigcall_verdict futex_verdict(const unsigned long long args[6])
{
	switch (args[1] & FUTEX_CMD_MASK_) {
	case FUTEX_WAIT_:
	case FUTEX_WAIT_BITSET_:
		return args[3] == 0 ? SIGCALL_RESTARTS : SIGCALL_ENDS;
	case FUTEX_LOCK_PI_:
	case FUTEX_LOCK_PI2_:
		return SIGCALL_RESTARTS;
	default:
		return SIGCALL_ENDS;
	}
}

enum sigcall_verdict sigcalls_verdict(long nr, const unsigned long long args[6], const char **name,
				      char *buf, unsigned long len)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].nr != nr)
			continue;
		*name = rows[i].name;
		return nr == SYS_futex ? futex_verdict(args) : rows[i].verdict;
	}
	snprintf(buf, len, "syscall %ld", nr);
	*name = buf;
	return SIGCALL_ENDS;
}
