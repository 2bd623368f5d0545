#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Linux 6.12 WITHOUT the port: THE TRAP. Syscall 451, the number the tool is
# built for by default (pidfd_set_mempolicy in the v2 patch for 6.1), is
# cachestat(2) here. The tool must refuse (exit 2, one message) because
# /proc/kallsyms names no sys_pidfd_set_mempolicy, and must never issue 451
# (a seccomp filter kills it with SIGSYS, status 159, if it does).

load lib
bats_require_minimum_version 1.5.0

setup() {
	only_on stock 6.12
}

teardown() {
	tracefs_restore
	pmp_teardown
}

@test "stock 6.12: syscall 451 really is cachestat (kallsyms, and it answers like cachestat)" {
	# (x86_64 names syscalls __x64_sys_NAME in kallsyms)
	grep -Eq ' (__x64_)?sys_cachestat$' /proc/kallsyms
	run grep -c 'sys_pidfd_set_mempolicy' /proc/kallsyms
	[ "$output" = 0 ]
	# cachestat(fd, range, cstat, flags) checks the fd first: EBADF even
	# with flags 1, where pidfd_set_mempolicy answers EINVAL
	run pmp-rawcall --nr=451 --fd=-1 --mode=0 --flags=1
	[ "$output" = EBADF ]
	run pmp-rawcall --nr=451 --fd=-1 --mode=0
	[ "$output" = EBADF ]
	# on a real file with a NULL range pointer: EFAULT (copy_from_user)
	exec {fd}</init
	run pmp-rawcall --nr=451 --fd="$fd" --mode=0
	exec {fd}<&-
	[ "$output" = EFAULT ]
	# and the port's number is not there
	run pmp-rawcall --nr="$PMP_NR_612" --fd=-1 --mode=0
	[ "$output" = ENOSYS ]
}

@test "stock 6.12: the seccomp guard kills a raw call of 451 (positive control)" {
	guard_kills_raw_call 451
}

@test "stock 6.12: default build (451), --backend=syscall: exit 2, the message, 451 never called, target unchanged" {
	target_start
	not_provided pmp-seccomp --deny=451 -- "$PMP" --backend=syscall --interleave=0-3 -p "$TARGET_PID"
	[ -z "$output" ]
}

@test "stock 6.12: PIDMEMPOLICY_SYSCALL_NR=451 with -a, --backend=syscall: exit 2, the message, 451 never called" {
	target_start --threads=2
	PIDMEMPOLICY_SYSCALL_NR=451 run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --backend=syscall -a --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "$NOT_PROVIDED" ]
	for t in $(ls "/proc/$TARGET_PID/task"); do
		[ "$(task_policy "$TARGET_PID" "$t")" = default ]
	done
}

@test "stock 6.12: tracefs is mounted and has syscall events, none for pidfd_set_mempolicy" {
	grep -q " $TRACEFS tracefs " /proc/mounts
	[ -d "$TRACEFS/events/syscalls/sys_enter_cachestat" ]
	[ ! -e "$TRACEFS/events/syscalls/sys_enter_pidfd_set_mempolicy" ]
}

@test "stock 6.12: a tmpfs at /sys/kernel/tracing with the event's directory: still exit 2, 451 never called" {
	umount "$TRACEFS"
	mount -t tmpfs tmpfs "$TRACEFS"
	mkdir -p "$TRACEFS/events/syscalls/sys_enter_pidfd_set_mempolicy"
	target_start
	PIDMEMPOLICY_SYSCALL_NR=451 not_provided pmp-seccomp --deny=451 -- "$PMP" --backend=syscall --interleave=0-3 -p "$TARGET_PID"
}

@test "stock 6.12: PIDMEMPOLICY_SYSCALL_NR=463 (the port's number): exit 2, 463 never called" {
	target_start
	PIDMEMPOLICY_SYSCALL_NR=$PMP_NR_612 not_provided pmp-seccomp --deny="$PMP_NR_612" -- "$PMP" --backend=syscall --interleave=0-3 -p "$TARGET_PID"
}

@test "stock 6.12: --weighted-interleave is refused the same way (the mode exists, the syscall does not)" {
	[ -d /sys/kernel/mm/mempolicy/weighted_interleave ]
	target_start
	not_provided pmp-seccomp --deny=451 -- "$PMP" --backend=syscall --weighted-interleave=0-3 -p "$TARGET_PID"
}

@test "stock 6.12, --backend=ptrace -a: every thread set and its new memory interleaved, 451 never called" {
	target_start --threads=2
	run --separate-stderr pmp-seccomp --deny=451,463 -- "$PMP" --backend=ptrace -a --interleave=0-3 -p "$TARGET_PID"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	target_threads_have interleave:0-3
	addr=$(target_cmd alloc-thread 2 64)
	evenly_on_4_nodes "$addr"
}

@test "stock 6.12, --backend=auto picks ptrace: bind confines new memory" {
	target_start --threads=1
	run --separate-stderr pmp-seccomp --deny=451,463 -- "$PMP" --backend=auto -a --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd alloc-thread 1 16)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 4096 0 0" ]
}

@test "stock 6.12: the default sets every thread through ptrace, says so, never calls 451 or 463" {
	target_start --threads=2
	PIDMEMPOLICY_SYSCALL_NR=451 run --separate-stderr pmp-seccomp --deny=451,463 -- "$PMP" --json -a --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(jq -r .backend <<<"$output")" = ptrace ]
	[ "$(jq -r .totals.done <<<"$output")" = 3 ]
	target_threads_have interleave:0-3
}

@test "stock 6.12: --migrate-only --interleave=all re-spreads huge pages whole, no policy set, no ptrace, 451 never called" {
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd "alloc-huge 64")
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "16384 0 0 0" ]
	[ "$(anon_huge_kb "$TARGET_PID" "$addr")" -eq 65536 ]
	# ptrace(2) is 101 on x86_64: the filter would kill the tool
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr pmp-seccomp --deny=451,101 -- "$PMP" --json --migrate-only --interleave=all -p "$TARGET_PID"
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.threads[0].migration.not_moved' <<<"$output")" -eq 0 ]
	spread_in_huge_pages "$TARGET_PID" "$addr"
	[ "$(task_policy "$TARGET_PID")" = bind:0 ]
}

@test "stock 6.12: --migrate --interleave=0-3 sets the policy through ptrace and re-spreads the pages, 451 never called" {
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd alloc 64)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "16384 0 0 0" ]
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" -v --migrate --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ $output == *"(0 not moved)"* ]]
	[[ $output == *"backend: ptrace"* ]]
	within_share $(numa_nodes_of "$TARGET_PID" "$addr")
	[ "$(task_policy "$TARGET_PID")" = interleave:0-3 ]
	addr=$(target_cmd alloc 16)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "1024 1024 1024 1024" ]
}
