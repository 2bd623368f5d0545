/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests: /proc/PID/stat, /proc/PID/status and /proc/kallsyms parsing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "tap.h"

static int kallsyms_text_has(const char *text, const char *name)
{
	char path[] = "/tmp/pmp-kallsyms-XXXXXX";
	int fd = mkstemp(path), found;
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("temp file");
		exit(99);
	}
	unlink(path);
	lseek(fd, 0, SEEK_SET);
	found = procfs_kallsyms_has(fd, name);
	close(fd);
	return found;
}

/* The lines procfs_each_line passes, joined with '|' (a long one as
 * "<its length>"). */
static int collect_line(const char *line, size_t len, void *arg)
{
	char *seen = arg;
	size_t have = strlen(seen);

	if (len > 32)
		return snprintf(seen + have, 256 - have, "<%zu>|", len) >= (int)(256 - have) ? -1 : 0;
	if (have + len + 2 > 256)
		return -1;
	memcpy(seen + have, line, len);
	memcpy(seen + have + len, "|", 2);
	return 0;
}

static void each_line_of(const char *text, char *seen)
{
	char path[] = "/tmp/pmp-lines-XXXXXX";
	int fd = mkstemp(path);
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("temp file");
		exit(99);
	}
	close(fd);
	seen[0] = '\0';
	if (procfs_each_line(path, collect_line, seen) != 0)
		strcpy(seen, "(failed)");
	unlink(path);
}

int main(void)
{
	struct proc_stat st;
	char val[64], *big;
	const char *stat1 = "1234 (java) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 12 0\n";
	const char *stat2 = "77 (a) b) (c) R 1 77 77 0 -1 2097216 0 0\n";
	const char *status = "Name:\tbash\nTgid:\t1200\nPid:\t1201\nMems_allowed_list:\t0-1\nCpus_allowed_list:   0-3  \n";

	ok(procfs_parse_stat(stat1, strlen(stat1), &st) == 0, "plain stat parses");
	is_str(st.comm, "java", "comm");
	ok(st.state == 'S', "state S");
	ok(st.flags == 4194560UL, "flags field 9");
	ok(procfs_parse_stat(stat2, strlen(stat2), &st) == 0, "comm with ') (' parses");
	is_str(st.comm, "a) b) (c", "comm runs to the last ')'");
	ok(st.state == 'R' && st.flags == 2097216UL, "fields after a tricky comm; kthread bit set");
	ok(procfs_parse_stat("12 (x", 5, &st) < 0, "no closing parenthesis");
	ok(procfs_parse_stat("12 (x) S 1 2", 12, &st) < 0, "truncated line");
	ok(procfs_parse_stat("12 (x) SS 1 2 3 4 5 6", 22, &st) < 0, "state of two letters");
	ok(procfs_parse_stat("12 (x) S 1 2 3 4 5 -6", 21, &st) < 0, "negative flags");
	ok(st.blocked == ~0UL, "a line without field 32: blocked unknown, all set");
	{
		const char *full = "9 (w) S 1 9 9 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 2 0 5 0 0 0 0 0 0 0 0 0 "
				   "2147221247 0 0 0 0 0 -1 0\n";
		const char *bad = "9 (w) S 1 9 9 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 2 0 5 0 0 0 0 0 0 0 0 0 "
				  "-5 0\n";

		ok(procfs_parse_stat(full, strlen(full), &st) == 0 && st.blocked == 0x7ffbfeffUL,
		   "field 32: the blocked signals 1 to 31");
		ok(procfs_parse_stat(bad, strlen(bad), &st) == 0 && st.blocked == ~0UL,
		   "field 32 not a number: unknown, all set");
	}
	ok(procfs_parse_stat("12 (\x01y\x9b) S 1 2 3 4 5 6", 22, &st) == 0 && strcmp(st.comm, "\x01y\x9b") == 0,
	   "comm is kept as the task set it, control bytes included (escaped at output)");

#define MI(s) procfs_parse_mountinfo_line(s, strlen(s))
	ok(MI("22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw") == 0, "mountinfo: /proc without hidepid");
	ok(MI("22 1 0:21 / /proc rw - proc proc rw,hidepid=invisible") == 1, "mountinfo: hidepid=invisible");
	ok(MI("22 1 0:21 / /proc rw - proc proc rw,hidepid=2,gid=4") == 1, "mountinfo: hidepid=2");
	ok(MI("22 1 0:21 / /proc rw - proc proc rw,hidepid=off") == 0, "mountinfo: hidepid=off");
	ok(MI("22 1 0:21 / /proc rw - proc proc rw,hidepid=0") == 0, "mountinfo: hidepid=0");
	ok(MI("23 1 0:22 / /sys rw - sysfs sysfs rw,hidepid=2") < 0, "mountinfo: another mount");
	ok(MI("23 1 0:22 / /proc rw") < 0, "mountinfo: no separator");
#undef MI

	ok(procfs_status_value(status, strlen(status), "Tgid", val, sizeof(val)) == 0 && strcmp(val, "1200") == 0,
	   "Tgid value");
	ok(procfs_status_value(status, strlen(status), "Mems_allowed_list", val, sizeof(val)) == 0 &&
	   strcmp(val, "0-1") == 0, "Mems_allowed_list value");
	ok(procfs_status_value(status, strlen(status), "Cpus_allowed_list", val, sizeof(val)) == 0 &&
	   strcmp(val, "0-3") == 0, "blanks trimmed");
	ok(procfs_status_value(status, strlen(status), "Pid", val, sizeof(val)) == 0 && strcmp(val, "1201") == 0,
	   "a key that prefixes another is matched whole");
	ok(procfs_status_value(status, strlen(status), "Mems", val, sizeof(val)) < 0, "absent key");
	ok(procfs_status_value(status, strlen(status), "Name", val, 3) < 0, "value too long for the buffer");

	{
		struct proc_status ps;
		const char *full = "Name:\tw\nState:\tS (sleeping)\nTgid:\t1200\nPPid:\t1\nTracerPid:\t0\n"
				   "Uid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\nThreads:\t42\n"
				   "SigQ:\t0/1\nSigPnd:\t0000000000000000\nShdPnd:\t8000000000000000\n"
				   "SigBlk:\t0000000000010000\nSigIgn:\t0000000000001000\nSigCgt:\t00000001800004ec\n"
				   "Seccomp:\t2\nMems_allowed_list:\t0-3\n";

		ok(procfs_parse_status(full, strlen(full), &ps) == 0, "status parses in one pass");
		ok(ps.tgid == 1200 && ps.ppid == 1 && ps.tracer == 0 && ps.seccomp == 2 && ps.threads == 42,
		   "status numbers");
		ok(ps.state == 'S', "status State letter");
		ok(ps.uid[0] == 1000 && ps.uid[2] == 1000 && ps.gid[1] == 100, "status ids");
		ok(ps.sig_pnd == 0 && ps.shd_pnd == 0x8000000000000000ULL && ps.sig_blk == 0x10000 &&
		   ps.sig_ign == 0x1000 && ps.sig_cgt == 0x1800004ecULL, "status signal sets");
		is_str(ps.mems_allowed, "0-3", "status Mems_allowed_list");
		ok(procfs_parse_status("Name:\tx\n", 8, &ps) == 0 && ps.sig_blk == ~0ULL && ps.sig_cgt == ~0ULL &&
		   ps.seccomp == -1 && ps.uid[0] == -1 && ps.state == 0,
		   "missing signal sets read as all set, never as free");
		ok(procfs_parse_status("SigBlk:\t00000000000000001\nSigCgt:\t00x0\nUid:\t1 2\n", 46, &ps) == 0 &&
		   ps.sig_blk == ~0ULL && ps.sig_cgt == ~0ULL && ps.uid[0] == -1, "malformed sets and ids are not read");
	}
	{
		struct proc_syscall sc;
		const char *in = "202 0x7f00 0x80 0x0 0x0 0x7f10 0xffffffff 0x7ffe00 0x7f0c4a3232ad\n";

#define SC(s) procfs_parse_syscall(s, strlen(s), &sc)
		ok(SC("running\n") == 0 && sc.kind == SYSCALL_RUNNING, "syscall: running");
		ok(SC("-1 0x7ffe465319e8 0x7f0c4a3232ad\n") == 0 && sc.kind == SYSCALL_NONE &&
		   sc.sp == 0x7ffe465319e8ULL && sc.pc == 0x7f0c4a3232adULL, "syscall: blocked outside a call");
		ok(SC(in) == 0 && sc.kind == SYSCALL_IN && sc.nr == 202 && sc.args[0] == 0x7f00 && sc.args[1] == 0x80 &&
		   sc.args[3] == 0 && sc.args[5] == 0xffffffff && sc.sp == 0x7ffe00 && sc.pc == 0x7f0c4a3232adULL,
		   "syscall: number, six arguments, sp, pc");
		ok(SC("202 0x1 0x2 0x3 0x4 0x5 0x6 0x7") < 0, "syscall: one word short");
		ok(SC("202 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9") < 0, "syscall: one word too many");
		ok(SC("-1 0x1") < 0 && SC("-2 0x1 0x2") < 0 && SC("running now") < 0 && SC("") < 0,
		   "syscall: malformed lines");
		ok(SC("7 1 2 3 4 5 6 7 8") < 0 && SC("7 0x 0x1 0x2 0x3 0x4 0x5 0x6 0x7") < 0 &&
		   SC("7 0x10000000000000000 0x1 0x2 0x3 0x4 0x5 0x6 0x7") < 0, "syscall: words must be 0x and 64-bit");
#undef SC
	}

	ok(kallsyms_text_has("0000000000000000 T __x64_sys_pidfd_set_mempolicy\n", "sys_pidfd_set_mempolicy") == 1,
	   "x86_64 wrapper name found");
	ok(kallsyms_text_has("ffffffff81000000 T sys_pidfd_set_mempolicy", "sys_pidfd_set_mempolicy") == 1,
	   "bare name without final newline found");
	ok(kallsyms_text_has("0 T __x64_sys_set_mempolicy\n0 T sys_pidfd_set_mempolicy_x\n0 t xsys_pidfd_set_mempolicy\n",
			     "sys_pidfd_set_mempolicy") == 0, "near names are not it");
	ok(kallsyms_text_has("0 T foo\t[mod]\n0 T __ia32_sys_pidfd_set_mempolicy\t[x]\n", "sys_pidfd_set_mempolicy") == 1,
	   "module column ignored");
	ok(kallsyms_text_has("", "sys_pidfd_set_mempolicy") == 0, "empty file");
	ok(kallsyms_text_has("0 T \n0 T x_\n0 T y\n", "") == 0, "an empty name matches nothing");
	ok(kallsyms_text_has("0 T sys_pidfd_set_mempolicy_x sys_pidfd_set_mempolicy\n0 T __x64_sys_pidfd_set_mempolicy\n",
			     "sys_pidfd_set_mempolicy") == 1, "a line with two near names, then the name");
	ok(kallsyms_text_has("0 T x\nsys_pidfd_set_mempolicy\n", "sys_pidfd_set_mempolicy") == 0,
	   "the name alone on a line is no symbol line");

	{
		struct numa_maps_line l;
		const char *a = "7f0000000000 interleave:0-3 anon=16384 dirty=16384 N0=4096 N1=4096 N2=4096 N3=4096 kernelpagesize_kB=4\n";
		const char *b = "7f0000000000 prefer (many)=static:1-2 anon=2 N1=1 N2=1 kernelpagesize_kB=2048";
		const char *c = "55d0 weighted interleave:0-3 file=/bin/x mapped=3 N3=3 kernelpagesize_kB=4";
		static const char nl[] = "0 local x\n1 bind:1 N1=5";
		static const char over[] = { '0', ' ', 'l', 'o', 'c', 'a', 'l', ' ', 'k', 'e', 'r', 'n', 'e', 'l',
					     'p', 'a', 'g', 'e', 's', 'i', 'z', 'e', '_', 'k', 'B', '=', '4' };

		ok(procfs_parse_numa_maps_line(a, strlen(a), &l) == 0, "numa_maps line with its newline");
		is_str(l.policy, "interleave:0-3", "policy field");
		ok(l.start == 0x7f0000000000ULL, "the mapping's address");
		ok(l.max_node == 4 && l.pages[0] == 4096 && l.pages[3] == 4096, "pages per node");
		ok(procfs_parse_numa_maps_line(b, strlen(b), &l) == 0, "a policy with a space in its name");
		is_str(l.policy, "prefer (many)=static:1-2", "prefer (many) with a flag");
		ok(l.pages[1] == 512 && l.pages[2] == 512, "huge pages counted in 4 KiB pages");
		ok(procfs_parse_numa_maps_line(c, strlen(c), &l) == 0 && strcmp(l.policy, "weighted interleave:0-3") == 0,
		   "weighted interleave");
		ok(!l.huge, "a file mapping is not hugetlbfs");
		{
			const char *h = "7f4000000000 default file=/anon_hugepage\\040(deleted) huge dirty=2 N0=2 kernelpagesize_kB=2048";

			ok(procfs_parse_numa_maps_line(h, strlen(h), &l) == 0 && l.huge && l.pages[0] == 1024,
			   "a hugetlbfs mapping: the word huge, pages in 4 KiB pages");
			ok(procfs_parse_numa_maps_line("0 default file=/hugepages N0=1", 30, &l) == 0 && !l.huge,
			   "huge inside a word is not the word");
		}
		ok(procfs_parse_numa_maps_line("garbage", 7, &l) < 0, "no policy field");
		ok(procfs_parse_numa_maps_line("7G00 default N0=1", 17, &l) < 0, "an address that is not hex");
		ok(procfs_parse_numa_maps_line("10000000000000000 default", 25, &l) < 0,
		   "an address of more than 64 bits");
		ok(procfs_parse_numa_maps_line("0 unknown:1 N0=1", 16, &l) < 0, "unknown mode");
		/* fuzz/regressions/procfs: a newline inside the length used to
		 * loop forever; a value at the very end used to be read past */
		ok(procfs_parse_numa_maps_line(nl, sizeof(nl) - 1, &l) == 0 && strcmp(l.policy, "local") == 0 &&
		   l.max_node == 0, "the line ends at its newline (regression: endless loop)");
		ok(procfs_parse_numa_maps_line(over, sizeof(over), &l) == 0,
		   "a value at the end of the buffer (regression: over-read)");
		ok(procfs_parse_numa_maps_line("0 local kernelpagesize_kB=\t7 N0=x", 34, &l) == 0 && l.max_node == 0,
		   "a blank after the page size key ends the token (regression: over-read)");
	}

	/* a large file: the symbol far past the read buffer */
	big = malloc(400000);
	if (!big)
		return 99;
	{
		static const char line[] = "0000000000000000 T some_symbol_name\n";
		char *end = big;

		for (int i = 0; i < 10000; i++) {
			memcpy(end, line, sizeof(line) - 1);
			end += sizeof(line) - 1;
		}
		*end = '\0';
	}
	strcat(big, "0000000000000000 T __x64_sys_pidfd_set_mempolicy\n");
	ok(kallsyms_text_has(big, "sys_pidfd_set_mempolicy") == 1, "found after %zu bytes", strlen(big));

	/* the line split by the 64 KiB read buffer, at each offset of its name */
	{
		static const char target[] = "0000000000000000 T __x64_sys_pidfd_set_mempolicy\n";
		int split_ok = 1;

		for (size_t cut = 1; cut < sizeof(target) - 1; cut++) {
			size_t pad = 65536 - cut;	/* bytes before the target line */

			memset(big, 'a', pad - 1);
			big[pad - 1] = '\n';
			strcpy(big + pad, target);
			if (kallsyms_text_has(big, "sys_pidfd_set_mempolicy") != 1)
				split_ok = 0;
		}
		ok(split_ok, "found wherever the buffer's end cuts its line");
	}
	/* a line longer than the buffer is skipped, not misread */
	memset(big, 'b', 70000);
	strcpy(big + 70000, "sys_pidfd_set_mempolicy\n0 T y\n");
	ok(kallsyms_text_has(big, "sys_pidfd_set_mempolicy") == 0, "an over-long line is skipped");
	strcpy(big + 70000, "\n0 T __x64_sys_pidfd_set_mempolicy\n");
	ok(kallsyms_text_has(big, "sys_pidfd_set_mempolicy") == 1, "found after an over-long line");
	/* procfs_each_line: a line longer than its 8 KiB is passed over
	 * whole; its rest (which a target can make read like a line of
	 * numa_maps) is not a line */
	{
		char seen[256];

		memset(big, 'x', 10000);
		strcpy(big + 10000, "7f00 default N0=1\nb\n");
		memcpy(big, "a\n", 2);
		each_line_of(big, seen);
		is_str(seen, "a|b|", "an over-long line's rest is not read as a line");
		strcpy(big + 10000, "7f00 default N0=1");
		each_line_of(big, seen);
		is_str(seen, "a|", "nor at the end of the file");
		memset(big + 2, 'x', 8192);
		strcpy(big + 2 + 8192, "\nb\nc");
		each_line_of(big, seen);
		is_str(seen, "a|b|c|", "a line that fills the buffer to the byte is passed over, not the next");
		memset(big + 2, 'x', 8191);
		strcpy(big + 2 + 8191, "\nb");
		each_line_of(big, seen);
		is_str(seen, "a|<8191>|b|", "a line one byte short of the buffer is read");
	}
	free(big);
	return tap_done();
}
