#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The command-line contract: every malformed invocation is refused with one
# clear message, the documented exit status, and no pidfd ever opened (the
# tool runs under a seccomp filter that would kill it on pidfd_open).

load helpers

@test "the seccomp guard really kills on pidfd_open (positive control)" {
	run "$PMP_SECCOMP" --deny=434 -- python3 -c 'import os; os.pidfd_open(os.getpid())'
	[ "$status" -eq 159 ]
}

@test "usage: no arguments at all" {
	bad_usage "no policy given (one of --interleave, --weighted-interleave, --membind, --preferred, --preferred-many, --localalloc, --default; or --show)"
}
@test "usage: a PID but no policy" {
	bad_usage "no policy given (one of --interleave, --weighted-interleave, --membind, --preferred, --preferred-many, --localalloc, --default; or --show)" -p $$
}
@test "usage: a policy but no PID" { bad_usage "no target given (-p PID, --cgroup=PATH or --unit=NAME)" --interleave=0; }
@test "usage: -a without PID" { bad_usage "no target given (-p PID, --cgroup=PATH or --unit=NAME)" -a -m 0; }
@test "usage: two policies" { bad_usage "only one policy may be given (--interleave and --membind)" -i 0 -m 0 -p $$; }
@test "usage: local and default" { bad_usage "only one policy may be given (--localalloc and --default)" -l --default -p $$; }
@test "usage: the same policy twice" { bad_usage "only one policy may be given (--interleave and --interleave)" -i 0 -i 0 -p $$; }
@test "usage: PID 0" { bad_usage "invalid PID '0': expected a number from 1 to 4194304" -l -p 0; }
@test "usage: negative PID" { bad_usage "invalid PID '-5': expected a number from 1 to 4194304" -l -p -5; }
@test "usage: non-numeric PID" { bad_usage "invalid PID 'abc': expected a number from 1 to 4194304" -l -p abc; }
@test "usage: fractional PID" { bad_usage "invalid PID '1.5': expected a number from 1 to 4194304" -l -p 1.5; }
@test "usage: PID overflowing 64 bits" { bad_usage "invalid PID '99999999999999999999999': expected a number from 1 to 4194304" -l -p 99999999999999999999999; }
@test "usage: PID past PID_MAX_LIMIT" { bad_usage "invalid PID '4194305': expected a number from 1 to 4194304" -l -p 4194305; }
@test "usage: PID 2^31" { bad_usage "invalid PID '2147483648': expected a number from 1 to 4194304" -l -p 2147483648; }
@test "usage: empty PID" { bad_usage "empty PID in list ''" -l -p ''; }
@test "usage: empty item in a PID list" { bad_usage "empty PID in list '1,,2'" -l -p 1,,2; }
@test "usage: trailing comma in a PID list" { bad_usage "empty PID in list '1,'" -l -p 1,; }
@test "usage: blank before a PID" { bad_usage "invalid PID ' 1': expected a number from 1 to 4194304" -l -p ' 1'; }
@test "usage: PID:INODE without inode" { bad_usage "invalid PID:INODE '12:': the inode must be a positive number" -l -p 12:; }
@test "usage: PID:INODE with inode 0" { bad_usage "invalid PID:INODE '12:0': the inode must be a positive number" -l -p 12:0; }
@test "usage: PID:INODE with a word" { bad_usage "invalid PID:INODE '12:abc': the inode must be a positive number" -l -p 12:abc; }
@test "usage: PID:INODE:INODE" { bad_usage "invalid PID:INODE '12:3:4': the inode must be a positive number" -l -p 12:3:4; }
@test "usage: a good PID then a bad one changes nothing" { bad_usage "invalid PID 'x': expected a number from 1 to 4194304" -l -p $$ -p x; }
@test "usage: 4 KiB PID argument is cut in the message" {
	big=$(printf '9%.0s' $(seq 4096))
	bad_usage "invalid PID '$(printf '9%.0s' $(seq 64))...': expected a number from 1 to 4194304" -l -p "$big"
}
@test "usage: control characters in a PID are not echoed" { bad_usage "invalid PID '1?2': expected a number from 1 to 4194304" -l -p $'1\n2'; }
@test "usage: unknown option" {
	run --separate-stderr "$PMP" --frobnicate
	[ "$status" -eq 1 ]
	[ "${stderr_lines[0]}" = "pidmempolicy: unrecognized option '--frobnicate'" ]
	[ "${stderr_lines[1]}" = "$TRY_LINE" ]
}
@test "usage: a node option without its node list" {
	run --separate-stderr "$PMP" -p $$ --interleave
	[ "$status" -eq 1 ]
	[ "${stderr_lines[0]}" = "pidmempolicy: option '--interleave' requires an argument" ]
}
@test "usage: --preferred without its node" {
	run --separate-stderr "$PMP" -p $$ --preferred
	[ "$status" -eq 1 ]
	[ "${stderr_lines[0]}" = "pidmempolicy: option '--preferred' requires an argument" ]
}
@test "usage: a stray argument" { bad_usage "unexpected argument 'extra'" -l -p $$ extra; }
@test "usage: a bare PID gets a hint" { bad_usage "unexpected argument '1234' (did you mean -p 1234?)" --interleave=0 1234; }
@test "usage: a bare PID list gets a hint" { bad_usage "unexpected argument '12,34:5' (did you mean -p 12,34:5?)" -l 12,34:5; }
@test "usage: one PID pinned to two inodes" { bad_usage "pid $$ is pinned to two processes (inodes 5 and 6)" -l -p $$:5 -p $$:6; }
@test "usage: --al is ambiguous (--all-threads, --allow-seccomp)" {
	run --separate-stderr "$PMP_SECCOMP" --deny="$NO_CHANGE_SYSCALLS" -- "$PMP" --al -l -p $$
	[ "$status" -eq 1 ]
	[ "${stderr_lines[0]}" = "pidmempolicy: option '--al' is ambiguous; possibilities: '--all-threads' '--allow-seccomp'" ]
	[ "${stderr_lines[1]}" = "$TRY_LINE" ]
}
@test "usage: '+' relative node list" {
	bad_usage "'+NODES' (relative to the caller's cpuset) does not apply to another process; use --relative" -i +0 -p $$
}

@test "input: empty node list" { bad_input "empty node list" --interleave= -p $$; }
@test "input: blank node list" { bad_input "empty node list" -m ' ' -p $$; }
@test "input: word as node list" { bad_input "invalid node list 'x': unparseable node description \`x'" -i x -p $$; }
@test "input: node past every possible node" { bad_input "invalid node list '99999': node argument 99999 is out of range" -i 99999 -p $$; }
@test "input: negative node" { bad_input "invalid node list '-1': node argument -1 is out of range" -m -1 -p $$; }
@test "input: open range" { bad_input "invalid node list '0-': missing node argument" -i 0- -p $$; }
@test "input: 10000-node range" { bad_input "invalid node list '0-9999': node argument 9999 out of range" -i 0-9999 -p $$; }
@test "input: inverted everything" { bad_input "node list '!all' selects no node" -i '!all' -p $$; }
@test "input: non-UTF-8 node list is not echoed raw" { bad_input "invalid node list '??': unparseable node description \`??'" -i $'\xff\xfe' -p $$; }
@test "input: static and relative together" { bad_input "--static and --relative exclude each other" -i 0 --static --relative -p $$; }
@test "input: static with --localalloc" { bad_input "--static and --relative need a node list; --localalloc has none" -l --static -p $$; }
@test "input: relative with --default" { bad_input "--static and --relative need a node list; --default has none" --default --relative -p $$; }
@test "input: balancing with interleave" { bad_input "--balancing works only with --membind" -b -i 0 -p $$; }
@test "input: balancing with preferred" { bad_input "--balancing works only with --membind" -b --preferred=0 -p $$; }
@test "input: --migrate-shared without a move" { bad_usage "--migrate-shared goes with --migrate or --migrate-only" -i 0 --migrate-shared -p $$; }
@test "input: --rate without a move" { bad_usage "--rate paces --migrate or --migrate-only" -i 0 --rate=16M/s -p $$; }
