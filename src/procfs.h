/*
 * procfs.h - pure parsers for the kernel's text files the tool reads:
 * /proc/PID/stat, /proc/PID/status, /proc/kallsyms.  They work on buffers
 * or on descriptors they are handed; they open nothing themselves.
 */
#ifndef PMP_PROCFS_H
#define PMP_PROCFS_H

#include <stdbool.h>
#include <stddef.h>

struct proc_stat {
	char comm[64];		/* task name, as in the parentheses */
	char state;		/* R, S, D, Z, X, ... */
	unsigned long flags;	/* task->flags (PF_*) */
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
	char policy[128];
	unsigned long long pages[64];	/* N<n>= counts, in 4 KiB pages */
	unsigned int max_node;		/* highest n seen in N<n>=, +1 (0: none) */
};

/* Parse one line (without or with its newline).  Returns 0 or -1. */
int procfs_parse_numa_maps_line(const char *line, size_t len, struct numa_maps_line *out);

#endif
