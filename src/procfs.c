/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs.c - /proc text: pure parsers, which take a buffer or a descriptor
 * they are handed and tolerate any byte sequence (they are fuzzed), and
 * the readers that open one file each and hand it to them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "procfs.h"

/* An unsigned decimal field of a stat line. */
static int stat_ulong(const char *tok, size_t len, unsigned long *v)
{
	char num[32], *numend;

	if (len >= sizeof(num) || tok[0] == '-')
		return -1;
	memcpy(num, tok, len);
	num[len] = '\0';
	errno = 0;
	*v = strtoul(num, &numend, 10);
	return errno || *numend != '\0' ? -1 : 0;
}

int procfs_parse_stat(const char *buf, size_t len, struct proc_stat *out)
{
	const char *open, *close = NULL, *p, *end = buf + len;
	size_t namelen;
	int field;

	memset(out, 0, sizeof(*out));
	open = memchr(buf, '(', len);
	if (!open)
		return -1;
	for (p = open; p < end; p++)
		if (*p == ')')
			close = p;
	if (!close)
		return -1;
	namelen = (size_t)(close - open - 1);
	if (namelen >= sizeof(out->comm))
		namelen = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, namelen);
	out->comm[namelen] = '\0';

	/* after ") ": field 3 is the state, field 9 the flags, field 32 the
	 * blocked signals (1 to 31 only), which a short line may lack */
	out->blocked = ~0UL;
	p = close + 1;
	for (field = 3; field <= 32; field++) {
		const char *tok;
		size_t toklen;

		while (p < end && *p == ' ')
			p++;
		tok = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		toklen = (size_t)(p - tok);
		if (toklen == 0)
			return field > 9 ? 0 : -1;
		if (field == 3) {
			if (toklen != 1)
				return -1;
			out->state = tok[0];
		} else if (field == 9 && stat_ulong(tok, toklen, &out->flags) < 0) {
			return -1;
		} else if (field == 32 && stat_ulong(tok, toklen, &out->blocked) < 0) {
			out->blocked = ~0UL;
		}
	}
	return 0;
}

int procfs_status_value(const char *buf, size_t len, const char *key, char *val, size_t vallen)
{
	size_t keylen = strlen(key);
	const char *line = buf, *end = buf + len;

	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));

		if (!eol)
			eol = end;
		if ((size_t)(eol - line) > keylen && memcmp(line, key, keylen) == 0 &&
		    line[keylen] == ':') {
			const char *v = line + keylen + 1;
			const char *vend = eol;
			size_t n;

			while (v < vend && (*v == ' ' || *v == '\t'))
				v++;
			while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
				vend--;
			n = (size_t)(vend - v);
			if (n >= vallen)
				return -1;
			memcpy(val, v, n);
			val[n] = '\0';
			return 0;
		}
		line = eol + 1;
	}
	return -1;
}

/* Does this kallsyms line ("ADDR TYPE NAME[\t[MODULE]]") name the symbol? */
static int kallsyms_line_matches(const char *line, size_t len, const char *name, size_t namelen)
{
	const char *sym, *symend, *end = line + len;

	sym = memchr(line, ' ', len);		/* after the address */
	if (!sym)
		return 0;
	sym = memchr(sym + 1, ' ', (size_t)(end - sym - 1));	/* after the type */
	if (!sym)
		return 0;
	sym++;
	for (symend = sym; symend < end && *symend != '\t' && *symend != ' '; symend++)
		;
	if ((size_t)(symend - sym) < namelen)
		return 0;
	if (memcmp(symend - namelen, name, namelen) != 0)
		return 0;
	return (size_t)(symend - sym) == namelen || symend[-(long)namelen - 1] == '_';
}

/* Does any whole line of text[0, len) name the symbol?  Only lines that
 * contain the name can: memmem finds them without splitting the others. */
static int kallsyms_lines_have(const char *text, size_t len, const char *name, size_t namelen)
{
	const char *end = text + len;

	for (const char *at = text; at < end && (at = memmem(at, (size_t)(end - at), name, namelen)); at++) {
		const char *line = at, *eol = memchr(at, '\n', (size_t)(end - at));

		while (line > text && line[-1] != '\n')
			line--;
		if (kallsyms_line_matches(line, (size_t)((eol ? eol : end) - line), name, namelen))
			return 1;
	}
	return 0;
}

int procfs_kallsyms_has(int fd, const char *name)
{
	char buf[65536];
	size_t have = 0, namelen = strlen(name);

	if (namelen == 0)	/* no symbol is named "" */
		return 0;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof(buf) - have);
		const char *end, *last_eol;
		size_t whole;

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		end = buf + have + (size_t)got;
		if (got == 0)	/* the end: the last line may lack its newline */
			return kallsyms_lines_have(buf, have, name, namelen);
		last_eol = memrchr(buf, '\n', (size_t)(end - buf));
		whole = last_eol ? (size_t)(last_eol - buf) + 1 : 0;
		if (kallsyms_lines_have(buf, whole, name, namelen))
			return 1;
		have = (size_t)(end - buf) - whole;
		if (have == sizeof(buf))	/* a line longer than the buffer: skip it */
			have = 0;
		memmove(buf, buf + whole, have);
	}
}

/* The kernel's mode names as numa_maps prints them, longest first where
 * one is a prefix of another ("prefer (many)" before "prefer"). */
static const char *const numa_maps_modes[] = {
	"weighted interleave", "prefer (many)", "interleave", "default",
	"prefer", "bind", "local",
};

static size_t policy_length(const char *p, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(numa_maps_modes) / sizeof(numa_maps_modes[0]); i++) {
		size_t m = strlen(numa_maps_modes[i]);

		if (len >= m && memcmp(p, numa_maps_modes[i], m) == 0 && (len == m || p[m] == ' ' ||
									 p[m] == '=' || p[m] == ':')) {
			n = m;
			break;
		}
	}
	if (n == 0)
		return 0;
	while (n < len && p[n] != ' ' && p[n] != '\n')	/* "=static", ":0-3" */
		n++;
	return n;
}

/* A decimal number of at most 19 digits from [p, p+len), nothing else. */
static int parse_count(const char *p, size_t len, unsigned long long *out)
{
	unsigned long long v = 0;

	if (len == 0 || len > 19)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (unsigned long long)(p[i] - '0');
	}
	*out = v;
	return 0;
}

/* The next blank-separated token of [*p, end), or NULL at the end. */
static const char *next_token(const char **p, const char *end, size_t *len)
{
	const char *tok;

	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	if (*p >= end)
		return NULL;
	tok = *p;
	while (*p < end && **p != ' ' && **p != '\t')
		(*p)++;
	*len = (size_t)(*p - tok);
	return tok;
}

int procfs_parse_numa_maps_line(const char *line, size_t len, struct numa_maps_line *out)
{
	static const char page_key[] = "kernelpagesize_kB=";
	const char *p = line, *end, *nl, *tok, *q;
	unsigned long long page_kb = 4;
	size_t plen, toklen;

	memset(out, 0, sizeof(*out));
	nl = memchr(line, '\n', len);	/* the line ends at its newline */
	end = nl ? nl : line + len;
	while (p < end && *p != ' ') {			/* the address, in hex */
		int digit = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

		if (digit < 0 || p - line >= 16)
			return -1;
		out->start = out->start << 4 | (unsigned int)digit;
		p++;
	}
	if (p == line || p >= end)
		return -1;
	p++;
	plen = policy_length(p, (size_t)(end - p));
	if (plen == 0 || plen >= sizeof(out->policy))
		return -1;
	memcpy(out->policy, p, plen);
	out->policy[plen] = '\0';
	p += plen;

	/* first pass for kernelpagesize_kB, which comes last */
	for (q = p; (tok = next_token(&q, end, &toklen));) {
		if (toklen == 4 && memcmp(tok, "huge", 4) == 0)
			out->huge = true;
		if (toklen > sizeof(page_key) - 1 && memcmp(tok, page_key, sizeof(page_key) - 1) == 0) {
			if (parse_count(tok + sizeof(page_key) - 1, toklen - (sizeof(page_key) - 1), &page_kb) < 0 ||
			    page_kb < 4 || page_kb > (1ULL << 30))
				return -1;
		}
	}
	for (q = p; (tok = next_token(&q, end, &toklen));) {
		const char *eq;
		unsigned long long node, count;

		if (toklen < 4 || tok[0] != 'N' || tok[1] < '0' || tok[1] > '9')
			continue;
		eq = memchr(tok, '=', toklen);
		if (!eq || parse_count(tok + 1, (size_t)(eq - tok - 1), &node) < 0 ||
		    parse_count(eq + 1, (size_t)(tok + toklen - eq - 1), &count) < 0)
			continue;
		if (node >= sizeof(out->pages) / sizeof(out->pages[0]))
			continue;
		out->pages[node] += count * (page_kb / 4);
		if (node + 1 > out->max_node)
			out->max_node = (unsigned int)node + 1;
	}
	return 0;
}

/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE
 * SUPEROPTIONS": hidepid is a super option of proc. */
int procfs_parse_mountinfo_line(const char *line, size_t len)
{
	const char *p = line, *end = line + len, *tok = NULL, *dash;
	size_t toklen = 0;

	for (int field = 0; field < 5; field++)
		if (!(tok = next_token(&p, end, &toklen)))
			return -1;
	if (toklen != 5 || memcmp(tok, "/proc", 5) != 0)
		return -1;
	dash = memmem(p, (size_t)(end - p), " - ", 3);
	if (!dash)
		return -1;
	p = dash + 3;
	if (!(tok = next_token(&p, end, &toklen)) || toklen != 4 || memcmp(tok, "proc", 4) != 0)
		return -1;
	if (!next_token(&p, end, &toklen) || !(tok = next_token(&p, end, &toklen)))
		return -1;
	for (const char *opt = tok, *optend = tok + toklen; opt < optend;) {
		const char *comma = memchr(opt, ',', (size_t)(optend - opt));
		size_t n = (size_t)((comma ? comma : optend) - opt);

		if (n > 8 && memcmp(opt, "hidepid=", 8) == 0)
			return !((n == 9 && opt[8] == '0') || (n == 11 && memcmp(opt + 8, "off", 3) == 0));
		opt += n + 1;
	}
	return 0;
}

/* ---- readers ---------------------------------------------------------- */

/* read(2) past EINTR; on an error fd is closed and errno kept. */
static ssize_t read_some(int fd, char *buf, size_t len)
{
	ssize_t got;
	int err;

	do
		got = read(fd, buf, len);
	while (got < 0 && errno == EINTR);
	if (got >= 0)
		return got;
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

ssize_t procfs_read_file(const char *path, char *buf, size_t len)
{
	size_t have = 0;
	int fd;

	if (len == 0) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* a pseudo-file of the kernel (seq_file, sysfs) fills a read as far
	 * as it can, so a short read is its end: no second read to find it
	 * (one system call per file matters, read for each of 10,000
	 * threads) */
	while (have < len - 1) {
		ssize_t got = read_some(fd, buf + have, len - 1 - have);

		if (got < 0)
			return -1;
		have += (size_t)got;
		if (got == 0 || have < len - 1)
			break;
	}
	buf[have] = '\0';
	close(fd);
	return (ssize_t)have;
}

int procfs_each_line(const char *path, int (*fn)(const char *line, size_t len, void *arg), void *arg)
{
	char buf[8192];
	size_t have = 0;
	bool passing = false;	/* over a line longer than buf, to its newline */
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (r == 0) {
		ssize_t got = read_some(fd, buf + have, sizeof(buf) - have);
		char *line = buf, *eol;

		if (got < 0)
			return -1;	/* read_some closed fd */
		have += (size_t)got;
		while (r == 0 && (eol = memchr(line, '\n', (size_t)(buf + have - line)))) {
			/* the rest of a line passed over is not a line: a
			 * target names its files so as to end one with what
			 * reads like a line of its choosing */
			if (!passing)
				r = fn(line, (size_t)(eol - line), arg);
			passing = false;
			line = eol + 1;
		}
		if (got == 0 && r == 0 && line < buf + have && !passing)	/* a last line without newline */
			r = fn(line, (size_t)(buf + have - line), arg);
		have = (size_t)(buf + have - line);
		if (have == sizeof(buf)) {	/* a line longer than the buffer: pass it over */
			have = 0;
			passing = true;
		}
		memmove(buf, line, have);
		if (got == 0)
			break;
	}
	close(fd);
	return r;
}

static int note_proc_mount(const char *line, size_t len, void *arg)
{
	int r = procfs_parse_mountinfo_line(line, len);

	if (r >= 0)	/* the last mount of /proc is the one seen */
		*(int *)arg = r;
	return 0;
}

bool procfs_hides_pids(void)
{
	static int hides = -1;

	if (hides < 0) {
		int found = 0;

		procfs_each_line("/proc/self/mountinfo", note_proc_mount, &found);
		hides = found;
	}
	return hides == 1;
}

int procfs_task_stat(pid_t pid, pid_t tid, struct proc_stat *st)
{
	char path[64], buf[1024];
	ssize_t len;

	if (tid == pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	len = procfs_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return -1;
	if (procfs_parse_stat(buf, (size_t)len, st) < 0) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* A decimal number (optionally negative) from [p, end), or absent. */
static long status_long(const char *p, const char *end, long absent)
{
	char num[24];
	size_t n = (size_t)(end - p);
	char *numend;
	long v;

	if (n == 0 || n >= sizeof(num))
		return absent;
	memcpy(num, p, n);
	num[n] = '\0';
	errno = 0;
	v = strtol(num, &numend, 10);
	return errno || numend == num ? absent : v;
}

/* Sixteen hex digits at most, nothing else: a signal set. */
static unsigned long long status_sigset(const char *p, const char *end)
{
	unsigned long long v = 0;

	if (p == end || end - p > 16)
		return ~0ULL;
	for (; p < end; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

		if (d < 0)
			return ~0ULL;
		v = v << 4 | (unsigned int)d;
	}
	return v;
}

/* The first three numbers of "Uid:" or "Gid:" (real, effective, saved);
 * -1 each unless all three are there. */
static void status_ids(const char *p, const char *end, long ids[3])
{
	for (int i = 0; i < 3; i++) {
		const char *tok;
		size_t toklen;

		if (!(tok = next_token(&p, end, &toklen))) {
			ids[0] = ids[1] = ids[2] = -1;
			return;
		}
		ids[i] = status_long(tok, tok + toklen, -1);
	}
}

/* One "Key:\tvalue" line of status, value blanks trimmed, into st. */
static void status_field(const char *key, size_t keylen, const char *v, const char *vend,
			 struct proc_status *st)
{
#define IS(k) (keylen == sizeof(k) - 1 && memcmp(key, k, keylen) == 0)
	if (IS("Tgid"))
		st->tgid = (pid_t)status_long(v, vend, 0);
	else if (IS("TracerPid"))
		st->tracer = (pid_t)status_long(v, vend, 0);
	else if (IS("Seccomp"))
		st->seccomp = (int)status_long(v, vend, -1);
	else if (IS("PPid"))
		st->ppid = (pid_t)status_long(v, vend, 0);
	else if (IS("Threads"))
		st->threads = status_long(v, vend, 0);
	else if (IS("State"))
		st->state = v < vend ? *v : 0;
	else if (IS("Uid"))
		status_ids(v, vend, st->uid);
	else if (IS("Gid"))
		status_ids(v, vend, st->gid);
	else if (IS("SigPnd"))
		st->sig_pnd = status_sigset(v, vend);
	else if (IS("ShdPnd"))
		st->shd_pnd = status_sigset(v, vend);
	else if (IS("SigBlk"))
		st->sig_blk = status_sigset(v, vend);
	else if (IS("SigIgn"))
		st->sig_ign = status_sigset(v, vend);
	else if (IS("SigCgt"))
		st->sig_cgt = status_sigset(v, vend);
	else if (IS("Mems_allowed_list") && (size_t)(vend - v) < sizeof(st->mems_allowed)) {
		memcpy(st->mems_allowed, v, (size_t)(vend - v));
		st->mems_allowed[vend - v] = '\0';
	}
#undef IS
}

int procfs_parse_status(const char *buf, size_t len, struct proc_status *st)
{
	const char *line = buf, *end = buf + len;

	memset(st, 0, sizeof(*st));
	st->seccomp = -1;
	for (int i = 0; i < 3; i++)
		st->uid[i] = st->gid[i] = -1;
	st->sig_pnd = st->sig_blk = st->shd_pnd = st->sig_ign = st->sig_cgt = ~0ULL;
	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *colon, *v, *vend;

		if (!eol)
			eol = end;
		colon = memchr(line, ':', (size_t)(eol - line));
		if (colon) {
			v = colon + 1;
			vend = eol;
			while (v < vend && (*v == ' ' || *v == '\t'))
				v++;
			while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
				vend--;
			status_field(line, (size_t)(colon - line), v, vend, st);
		}
		line = eol + 1;
	}
	return 0;
}

int procfs_task_status(pid_t pid, pid_t tid, struct proc_status *st)
{
	char path[64], buf[4096];
	ssize_t len;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	len = procfs_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return -1;
	return procfs_parse_status(buf, (size_t)len, st);
}

/* "0x" and at most sixteen hex digits, nothing else. */
static int parse_hex(const char *p, size_t len, unsigned long long *out)
{
	unsigned long long v = 0;

	if (len < 3 || len > 18 || p[0] != '0' || p[1] != 'x')
		return -1;
	for (size_t i = 2; i < len; i++) {
		int d = p[i] >= '0' && p[i] <= '9' ? p[i] - '0' : p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10 : -1;

		if (d < 0)
			return -1;
		v = v << 4 | (unsigned int)d;
	}
	*out = v;
	return 0;
}

int procfs_parse_syscall(const char *buf, size_t len, struct proc_syscall *out)
{
	const char *nl = memchr(buf, '\n', len), *p = buf, *end, *tok;
	unsigned long long words[8], nr;
	size_t toklen, n = 0;

	memset(out, 0, sizeof(*out));
	end = nl ? nl : buf + len;
	tok = next_token(&p, end, &toklen);
	if (!tok)
		return -1;
	if (toklen == 7 && memcmp(tok, "running", 7) == 0) {
		out->kind = SYSCALL_RUNNING;
		out->nr = -1;
		return next_token(&p, end, &toklen) ? -1 : 0;
	}
	if (toklen == 2 && memcmp(tok, "-1", 2) == 0) {
		out->kind = SYSCALL_NONE;
		out->nr = -1;
	} else if (parse_count(tok, toklen, &nr) == 0 && nr < 100000) {
		out->kind = SYSCALL_IN;
		out->nr = (long)nr;
	} else {
		return -1;
	}
	while ((tok = next_token(&p, end, &toklen))) {
		if (n == sizeof(words) / sizeof(words[0]) || parse_hex(tok, toklen, &words[n]) < 0)
			return -1;
		n++;
	}
	if (n != (out->kind == SYSCALL_IN ? 8u : 2u))
		return -1;
	for (size_t i = 0; out->kind == SYSCALL_IN && i < 6; i++)
		out->args[i] = words[i];
	out->sp = words[n - 2];
	out->pc = words[n - 1];
	return 0;
}

int procfs_task_syscall(pid_t pid, pid_t tid, struct proc_syscall *out)
{
	char path[64], buf[256];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	len = procfs_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return -1;
	if (procfs_parse_syscall(buf, (size_t)len, out) < 0) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

int procfs_yama_scope(void)
{
	char buf[32];
	char *end;
	long v;

	if (procfs_read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) < 0)
		return -1;
	v = strtol(buf, &end, 10);
	if (end == buf || v < 0 || v > 3)
		return -1;
	return (int)v;
}

