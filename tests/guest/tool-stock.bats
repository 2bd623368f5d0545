#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Linux 6.1 WITHOUT the patch: by default the tool sets through ptrace;
# with --backend=syscall it must say the syscall is not provided, exit 2,
# change nothing.  Either way it never issues the number it was
# configured with (a seccomp filter would kill it with SIGSYS if it did).

load lib
bats_require_minimum_version 1.5.0

setup() {
	only_on stock
}

@test "stock 6.1: the seccomp guard kills a raw call of 451 (positive control)" {
	guard_kills_raw_call 451
}

@test "stock 6.1, --backend=syscall: exit 2, the message, 451 never called, target unchanged" {
	target_start
	not_provided pmp-seccomp --deny=451 -- "$PMP" --backend=syscall --interleave=0-3 -p "$TARGET_PID"
	[ -z "$output" ]
}

@test "stock 6.1, --backend=syscall: the same with -a and a run-time number override" {
	target_start --threads=2
	PIDMEMPOLICY_SYSCALL_NR=451 not_provided pmp-seccomp --deny=451 -- "$PMP" --backend=syscall -a --membind=1 -p "$TARGET_PID"
}

@test "stock 6.1, --backend=syscall: --dry-run still plans, with a note, and changes nothing" {
	target_start
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --backend=syscall -n --interleave=0-3 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$output" = "would set pid $TARGET_PID (pmp-target) to interleave:0-3" ]
	[[ "$stderr" == "pidmempolicy: note: this kernel does not provide pidfd_set_mempolicy(2)"* ]]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "stock 6.1: --show works on any kernel" {
	target_start
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --show -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	read -r pid tid comm policy mems _ <<<"${lines[1]}"
	[ "$pid $comm $policy $mems" = "$TARGET_PID pmp-target default 0-3" ]
}

@test "stock 6.1: --migrate-only moves pages without the syscall" {
	target_start
	addr=$(target_cmd alloc 16)
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --migrate-only --membind=2 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 0 4096 0" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "stock 6.1, --backend=syscall: --migrate (which also sets) still exits 2" {
	target_start
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --backend=syscall --migrate --membind=2 -p "$TARGET_PID"
	[ "$status" -eq 2 ]
}

@test "stock 6.1, --backend=ptrace -a: every thread set, new memory interleaved" {
	target_start --threads=2
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --backend=ptrace -a --interleave=0-3 -p "$TARGET_PID"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	target_threads_have interleave:0-3
	[ "$(target_cmd policy-thread 2)" = "mode=3 nodes=0-3" ]
	addr=$(target_cmd alloc-thread 1 64)
	evenly_on_4_nodes "$addr"
}

@test "stock 6.1, --backend=ptrace: bind confines new memory, the target keeps working" {
	target_start --threads=1
	run --separate-stderr "$PMP" --backend=ptrace -a --membind=3 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd alloc 32)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 0 0 8192" ]
	addr=$(target_cmd alloc-thread 1 16)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 0 0 4096" ]
	[ "$(target_cmd ping)" = pong ]
}

@test "stock 6.1, --backend=auto chooses ptrace, and never calls 451" {
	target_start
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --backend=auto -v --preferred=1 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "set pid $TARGET_PID (pmp-target) to prefer:1 (was default)" ]
	[[ ${lines[1]} == "backend: ptrace (this kernel does not provide pidfd_set_mempolicy(2): "* ]]
	[ "$(task_policy "$TARGET_PID")" = "prefer:1" ]
}

@test "stock 6.1, --backend=ptrace: the cpuset refusal is explained the same way" {
	mkdir /sys/fs/cgroup/pmp-ptrace
	echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
	echo 0-1 > /sys/fs/cgroup/pmp-ptrace/cpuset.mems
	target_start
	echo "$TARGET_PID" > /sys/fs/cgroup/pmp-ptrace/cgroup.procs
	pid=$TARGET_PID
	run --separate-stderr "$PMP" --backend=ptrace --membind=3 -p "$pid"
	[ "$(task_policy "$pid")" = default ]
	target_stop
	rmdir /sys/fs/cgroup/pmp-ptrace
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid $pid (pmp-target): nodes 3 not allowed for pid $pid (its Mems_allowed_list: 0-1)" ]
}

@test "stock 6.1, --backend=ptrace refuses a 32-bit (compat) process by name, unchanged" {
	# The rig's kernels run 32-bit programs (x86_64: IA32 emulation, arm64:
	# COMPAT): here an exec failure of pmp-sleep32 fails the test.
	[ "$(od -An -j4 -N1 -tu1 "$PMP_HELPERS/pmp-sleep32" | tr -d " ")" = 1 ]	# ELFCLASS32
	execs_32bit "$PMP_HELPERS/pmp-sleep32" || { echo "this kernel runs no 32-bit programs" >&2; false; }
	target_start --exec=pmp-sleep32
	pid=$TARGET_PID
	run --separate-stderr "$PMP" --backend=ptrace --membind=0 -p "$pid"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid $pid (pmp-sleep32): tid $pid is a 32-bit task; the ptrace backend does not inject into it" ]
	[ "$(task_policy "$pid")" = default ]
	[ "$(thread_state "$pid" "$pid")" = S ]
}

@test "stock 6.1: the default sets every thread through ptrace, says so, never calls 451" {
	target_start --threads=2
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --json -a --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# (no jq in the arm64 guest)
	[[ $output == *'"backend":"ptrace"'* ]]
	[[ $output == *'"totals":{"done":3,"failed":0,'* ]]
	target_threads_have interleave:0-3
	addr=$(target_cmd alloc-thread 1 64)
	evenly_on_4_nodes "$addr"
}

@test "stock 6.1: the default --migrate sets through ptrace and moves the pages" {
	target_start
	addr=$(target_cmd alloc 16)
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --migrate --membind=2 -p "$TARGET_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$TARGET_PID")" = bind:2 ]
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 0 4096 0" ]
}

@test "stock 6.1: --migrate-only --interleave=all re-spreads the pages, no policy set, no ptrace" {
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd alloc 64)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "16384 0 0 0" ]
	# ptrace(2) is 101 on x86_64, 117 on aarch64: the filter would kill the tool
	local nr=101
	[ "$(uname -m)" = aarch64 ] && nr=117
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr pmp-seccomp --deny=451,$nr -- "$PMP" --json --migrate-only --interleave=all -p "$TARGET_PID"
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	# (no jq in the arm64 guest)
	[[ $output =~ \"pages_moved\":([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -ge 12000 ]
	within_share $(numa_nodes_of "$TARGET_PID" "$addr")
	[ "$(task_policy "$TARGET_PID")" = bind:0 ]
}
