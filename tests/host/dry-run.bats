#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# --dry-run resolves and checks every target on any kernel and prints what
# would be set, changing nothing.

load helpers

NOTE_RE='^pidmempolicy: note: this kernel does not provide pidfd_set_mempolicy\(2\) \(.*\); a real run would exit 2$'

teardown() { stop_threaded; }

@test "dry run (syscall backend) of the process: one line for its main thread, the note" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	require_fact "host kernel provides pidfd_set_mempolicy: this test needs a stock kernel" stock_kernel
	start_threaded 3
	run --separate-stderr "$PMP_SECCOMP" --deny=451 -- "$PMP" --backend=syscall --dry-run --interleave=0 -p "$THREADED_PID"
	[ "$status" -eq 0 ]
	[ "$output" = "would set pid $THREADED_PID (python3) to interleave:0" ]
	[[ "$stderr" =~ $NOTE_RE ]]
}

@test "dry run with -a: one line per thread, every thread of /proc/PID/task" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_threaded 3
	run --separate-stderr "$PMP_SECCOMP" --deny=451 -- "$PMP" -n -a --membind=all -p "$THREADED_PID"
	[ "$status" -eq 0 ]
	want=""
	for t in $(ls /proc/$THREADED_PID/task | sort -n); do
		want+="would set tid $t (python3) of pid $THREADED_PID to bind:0"$'\n'
	done
	[ "$output" = "${want%$'\n'}" ]
	[ "${#lines[@]}" -eq 4 ]
}

@test "dry run shows the mode flags as the kernel prints them" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_threaded 0
	run --separate-stderr "$PMP" -n --static --preferred-many=0 -p "$THREADED_PID"
	[ "$status" -eq 0 ]
	[ "$output" = "would set pid $THREADED_PID (python3) to prefer (many)=static:0" ]
	run --separate-stderr "$PMP" -n --relative --membind=0 -p "$THREADED_PID"
	[ "$output" = "would set pid $THREADED_PID (python3) to bind=relative:0" ]
}

@test "dry run of local and default: no node list" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_threaded 0
	run --separate-stderr "$PMP" -n --localalloc -p "$THREADED_PID"
	[ "$output" = "would set pid $THREADED_PID (python3) to local" ]
	run --separate-stderr "$PMP" -n --default -p "$THREADED_PID"
	[ "$output" = "would set pid $THREADED_PID (python3) to default" ]
}

@test "dry run of several PIDs, one of them gone: 64, the others listed" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_threaded 1
	sleep 0 & gone=$!; wait "$gone"
	run --separate-stderr "$PMP" -n -l -p "$THREADED_PID,$gone" -p $$
	[ "$status" -eq 64 ]
	[ "${lines[0]}" = "would set pid $THREADED_PID (python3) to local" ]
	[ "${lines[1]}" = "would set pid $$ (bash) to local" ]
	[[ "$stderr" == *"pidmempolicy: would fail to set pid $gone: no such process"* ]]
}

@test "dry run of a PID that is no process: 1" {
	run --separate-stderr "$PMP" -n -l -p 4194304
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == *"pidmempolicy: would fail to set pid 4194304: no such process" ]]
}

@test "a thread id given as PID is named as a thread of its process" {
	start_threaded 2
	tid=$(ls /proc/$THREADED_PID/task | sort -n | tail -1)
	[ "$tid" != "$THREADED_PID" ]
	run --separate-stderr "$PMP" -n -l -p "$tid"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"pidmempolicy: would fail to set pid $tid: $tid is a thread of pid $THREADED_PID, not a process (use -p $THREADED_PID -a for every thread)" ]]
}

@test "PID:INODE with the pidfd's own inode pins the process" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	ino=$(pidfd_inode $$)
	run --separate-stderr "$PMP" -n -l -p "$$:$ino"
	# pidfs (Linux 6.9) gives every process its own inode; older kernels cannot pin
	if [ "$(python3 -c 'import os,ctypes; fd=os.pidfd_open(os.getpid()); print(os.fstat(fd).st_ino != os.fstat(os.pidfd_open(1)).st_ino)')" = True ]; then
		[ "$status" -eq 0 ]
		[ "$output" = "would set pid $$ (bash) to local" ]
	else
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"this kernel cannot pin PID:INODE"* ]]
	fi
}

@test "PID:INODE with another inode is refused: the PID is another process now" {
	run --separate-stderr "$PMP" -n -l -p "$$:1"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"pidmempolicy: would fail to set pid $$: pid $$ is another process now (its pidfd inode is $(pidfd_inode $$))" || "$stderr" == *"this kernel cannot pin PID:INODE"* ]]
}

@test "dry run changes nothing: the target's policy is still default" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_threaded 2
	run --separate-stderr "$PMP" -n -a --interleave=0 -p "$THREADED_PID"
	[ "$status" -eq 0 ]
	for t in /proc/$THREADED_PID/task/*; do
		! grep -v '^[0-9a-f]* default' "$t/numa_maps" || false
	done
}

@test "--backend=syscall --verbose on a kernel without the syscall still exits 2 before any line" {
	require_fact "host kernel provides pidfd_set_mempolicy: this test needs a stock kernel" stock_kernel
	run --separate-stderr "$PMP" --backend=syscall -v -l -p $$
	[ "$status" -eq 2 ]
	[ -z "$output" ]
}

@test "dry run (syscall backend) foresees a kernel thread: would fail, exit 1" {
	require_fact "pid 2 is not kthreadd here (a PID namespace)" is_kthreadd 2
	run --separate-stderr "$PMP" --backend=syscall -n --interleave=0 -p 2
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == *$'\n'"pidmempolicy: would fail to set pid 2 (kthreadd): pid 2 is a kernel thread; its policy cannot be changed" ]]
}

@test "dry run (syscall backend) foresees a caller without CAP_SYS_NICE" {
	require_fact "cannot drop CAP_SYS_NICE from the bounding set (needs CAP_SETPCAP)" setpriv --bounding-set=-sys_nice -- true
	start_threaded 0
	run --separate-stderr setpriv --bounding-set=-sys_nice -- "$PMP" --backend=syscall -n -v --localalloc -p "$THREADED_PID"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *$'\n'"pidmempolicy: would fail to set pid $THREADED_PID (python3): needs CAP_SYS_NICE (try sudo)" ]]
	[[ ${lines[0]} == "backend: syscall (this kernel does not provide pidfd_set_mempolicy(2): "* ]]
	[ "${lines[1]}" = "0 would be set, 1 would fail, 0 exited" ]
	[ "${#lines[@]}" -eq 2 ]
}
