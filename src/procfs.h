/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs.h - the one accessor for the kernel's text files the tool reads:
 * /proc/PID/stat, /proc/PID/status, numa_maps, /proc/kallsyms.  The
 * parsers work on buffers or descriptors they are handed (and are fuzzed);
 * the readers below them open one file each and hand it to a parser.
 * Every read of a task's stat or status goes through here.
 */
#ifndef PMP_PROCFS_H
#define PMP_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct proc_stat {
	char comm[64];		/* task name, the bytes in the parentheses: the task
				 * chose them; text_escape() them for a terminal */
	char state;		/* R, S, D, Z, X, ... */
	unsigned long flags;	/* task->flags (PF_*) */
	unsigned long blocked;	/* signals 1 to 31 it blocks (bit n-1 for n); ~0
				 * where the line did not have them */
};

/* Parse the one line of /proc/PID/stat (or task/TID/stat).  The name may
 * contain spaces and parentheses: it runs to the LAST ')'.  Returns 0 or -1. */
int procfs_parse_stat(const char *buf, size_t len, struct proc_stat *out);

/* Find "Key:" at the start of a line of a /proc/PID/status buffer and copy
 * its value, blanks trimmed, into val.  Returns 0, or -1 if absent or if
 * val is too small. */
int procfs_status_value(const char *buf, size_t len, const char *key, char *val, size_t vallen);

/* Read /proc/kallsyms-format text from fd to its end and tell whether a
 * symbol named exactly `name`, or ending in "_" + name (e.g.
 * "__x64_sys_pidfd_set_mempolicy" for "sys_pidfd_set_mempolicy"), is listed.
 * Reading stops at the first match.  An empty name matches nothing.
 * Returns 1 if found, 0 if not, -1 on a read error (errno set). */
int procfs_kallsyms_has(int fd, const char *name);

/* One line of /proc/PID/numa_maps: "ADDR POLICY [key=value|word]...".
 * The policy may hold a space ("prefer (many)", "weighted interleave"),
 * so it is read as a known mode name, then any "=flags" and ":nodes". */
struct numa_maps_line {
	unsigned long long start;	/* the mapping's address */
	char policy[128];
	unsigned long long pages[64];	/* N<n>= counts, in 4 KiB pages */
	unsigned int max_node;		/* highest n seen in N<n>=, +1 (0: none) */
	bool huge;			/* a hugetlbfs mapping (the word "huge") */
};

/* Parse one line (without or with its newline).  Returns 0 or -1. */
int procfs_parse_numa_maps_line(const char *line, size_t len, struct numa_maps_line *out);

/* One line of /proc/self/mountinfo: 1 if it mounts /proc with hidepid
 * (other than 0/off), 0 if it mounts /proc without, -1 if it mounts
 * something else or does not parse. */
int procfs_parse_mountinfo_line(const char *line, size_t len);

/* ---- readers ---------------------------------------------------------- */

/* Read a small file (under /proc or /sys) into buf, NUL-terminated; a
 * read that returns less than asked ends it, as it does a pseudo-file of
 * the kernel.  Returns the length, or -1 with errno. */
ssize_t procfs_read_file(const char *path, char *buf, size_t len);

/* Call fn with each line of the file at path (without its newline), read
 * in 8 KiB pieces, until fn returns nonzero; a line longer than that is
 * passed over.  Returns fn's nonzero value, 0 at the end, or -1 with
 * errno. */
int procfs_each_line(const char *path, int (*fn)(const char *line, size_t len, void *arg), void *arg);

/* The stat of task tid of process pid: /proc/PID/stat for the leader
 * (tid == pid), else /proc/PID/task/TID/stat.  0, or -1 with errno
 * (EPROTO: unparsable). */
int procfs_task_stat(pid_t pid, pid_t tid, struct proc_stat *st);

/* Whether the /proc the tool reads hides other users' processes
 * (hidepid), from the last mount of /proc in /proc/self/mountinfo; read
 * once.  false where it cannot tell. */
bool procfs_hides_pids(void);

/* The fields of /proc/.../status the tool uses.  A field /proc did not
 * print keeps the value given here (0, -1 for seccomp and the ids, "" for
 * text). */
struct proc_status {
	pid_t tgid;		/* Tgid: the process the task belongs to */
	pid_t tracer;		/* TracerPid */
	int seccomp;		/* Seccomp: 0 none, 1 strict, 2 filter; -1 unknown */
	char mems_allowed[128];	/* Mems_allowed_list */
	pid_t ppid;		/* PPid */
	long uid[3], gid[3];	/* Uid:, Gid: real, effective, saved; -1 unknown */
	char state;		/* State: R, S, D, T, t, Z, ...; 0 unknown */
	long threads;		/* Threads: of its process; 0 unknown */
	/* signal sets, bit n-1 for signal n: the task's own pending and
	 * blocked signals, the process's shared pending, ignored and caught
	 * ones; all set (~0) where /proc did not print them, so that a
	 * missing field never reads as "free" */
	unsigned long long sig_pnd, sig_blk, shd_pnd, sig_ign, sig_cgt;
};

/* Parse a /proc/.../status buffer, every field in one pass.  Returns 0
 * (any byte sequence parses: fields it does not find keep their
 * defaults). */
int procfs_parse_status(const char *buf, size_t len, struct proc_status *st);

/* The status of task tid of process pid (/proc/PID/task/TID/status), or
 * with pid 0 of the task tid whatever its process (/proc/TID/status).
 * 0, or -1 with errno. */
int procfs_task_status(pid_t pid, pid_t tid, struct proc_status *st);

/* What /proc/PID/task/TID/syscall says a task is doing. */
enum proc_syscall_kind {
	SYSCALL_RUNNING,	/* "running": on a CPU or runnable, no call known */
	SYSCALL_NONE,		/* "-1 SP PC": blocked, not inside a system call */
	SYSCALL_IN,		/* "NR ARG1..ARG6 SP PC": blocked inside call NR */
};

struct proc_syscall {
	enum proc_syscall_kind kind;
	long nr;			/* SYSCALL_IN: the call's number */
	unsigned long long args[6];	/* SYSCALL_IN: its arguments */
	unsigned long long sp, pc;	/* SYSCALL_NONE, SYSCALL_IN */
};

/* Parse the one line of a task's syscall file.  0, or -1 if it is none
 * of the three forms. */
int procfs_parse_syscall(const char *buf, size_t len, struct proc_syscall *out);

/* The syscall file of task tid of process pid.  0, or -1 with errno
 * (EPROTO: unparsable). */
int procfs_task_syscall(pid_t pid, pid_t tid, struct proc_syscall *out);

/* Yama's /proc/sys/kernel/yama/ptrace_scope (0-3), or -1 without Yama. */
int procfs_yama_scope(void);

#endif
