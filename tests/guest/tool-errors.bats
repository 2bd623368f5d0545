#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel truth on Linux 6.1 + v2: each refusal of the kernel comes back as
# the tool's one-line explanation with its exit status, and the target is
# left as it was.

load lib
bats_require_minimum_version 1.5.0

CG=/sys/fs/cgroup/pmp-test

setup() {
	only_on patched
}

teardown() {
	pmp_teardown
	[ -z "${EXEC_PID:-}" ] || kill "$EXEC_PID" 2>/dev/null || true
	if [ -d "$CG" ]; then
		while read -r p; do echo "$p" > /sys/fs/cgroup/cgroup.procs 2>/dev/null; done < "$CG/cgroup.procs"
		rmdir "$CG" 2>/dev/null || true
	fi
}

@test "root without CAP_SYS_NICE: needs CAP_SYS_NICE, target unchanged" {
	target_start
	refused "$TARGET_PID" "needs CAP_SYS_NICE (try sudo)" pmp-runas --drop=cap_sys_nice -- "$PMP" --interleave=0-3 -p "$TARGET_PID"
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "an unprivileged user on its own process: needs CAP_SYS_NICE" {
	target_start -- pmp-runas --uid=1000 --
	refused "$TARGET_PID" "needs CAP_SYS_NICE (try sudo)" pmp-runas --uid=1000 -- "$PMP" --membind=1 -p "$TARGET_PID"
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "an unprivileged user with CAP_SYS_NICE against root's process: ptrace denial" {
	target_start
	refused "$TARGET_PID" "not allowed to access pid $TARGET_PID (ptrace access mode check; see PERMISSIONS in pidmempolicy(8))" \
		pmp-runas --uid=1000 --keep=cap_sys_nice -- "$PMP" --membind=1 -p "$TARGET_PID"
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "the same user with CAP_SYS_NICE on its own process: allowed" {
	target_start -- pmp-runas --uid=1000 --
	run --separate-stderr pmp-runas --uid=1000 --keep=cap_sys_nice -- "$PMP" --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$TARGET_PID")" = "bind:1" ]
}

@test "told 440 (process_madvise, which answers the probes alike): the proof refuses it, exit 2, target unchanged" {
	target_start
	PIDMEMPOLICY_SYSCALL_NR=440 run --separate-stderr "$PMP" --backend=syscall --interleave=0-3 -p "$TARGET_PID"
	[ "$status" -eq 2 ]
	[ "$stderr" = "pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): syscall 440 did not set the caller's own policy (it is not pidfd_set_mempolicy) (--backend=ptrace works without it)" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
	[ "$(target_cmd policy)" = "mode=0 nodes=none" ]
}

@test "a kernel thread (kthreadd) is refused and named as one" {
	run --separate-stderr "$PMP" --interleave=0-3 -p 2
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid 2 (kthreadd): pid 2 is a kernel thread; its policy cannot be changed" ]
}

@test "a zombie has exited: refused, exit 1" {
	target_start
	zombie=$(target_cmd zombie)
	wait_until 5 test "$(cut -d' ' -f3 /proc/$zombie/stat)" = Z
	refused "$zombie" "pid $zombie has exited" "$PMP" --interleave=0-3 -p "$zombie"
}

@test "a target whose cpuset allows mems 0-1 asked for node 3: names its Mems_allowed_list" {
	mkdir "$CG"
	echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
	echo 0-1 > "$CG/cpuset.mems"
	target_start
	echo "$TARGET_PID" > "$CG/cgroup.procs"
	grep -q '^Mems_allowed_list:.*0-1$' "/proc/$TARGET_PID/status"
	refused "$TARGET_PID" "nodes 3 not allowed for pid $TARGET_PID (its Mems_allowed_list: 0-1)" "$PMP" --membind=3 -p "$TARGET_PID"
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "the same target asked for 0-3: the kernel clips the policy to its cpuset" {
	mkdir "$CG"
	echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
	echo 0-1 > "$CG/cpuset.mems"
	target_start
	echo "$TARGET_PID" > "$CG/cgroup.procs"
	run --separate-stderr "$PMP" --interleave=0-3 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$TARGET_PID")" = "interleave:0-1" ]
	addr=$(target_cmd alloc 16)
	read -r n0 n1 n2 n3 < <(numa_nodes_of "$TARGET_PID" "$addr")
	echo "pages per node: $n0 $n1 $n2 $n3"
	[ $((n2 + n3)) -eq 0 ] && [ "$n0" -ge 2000 ] && [ "$n1" -ge 2000 ]
}

@test "the caller's own cpuset does not limit the nodes: the target's does" {
	mkdir "$CG"
	echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
	echo 0 > "$CG/cpuset.mems"
	target_start
	run --separate-stderr sh -c "echo \$\$ > $CG/cgroup.procs && exec $PMP --membind=3 -p $TARGET_PID"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$TARGET_PID")" = "bind:3" ]
}

@test "a node past the system's nodes is refused before any call" {
	target_start
	run --separate-stderr "$PMP" --membind=7 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: invalid node list '7': node argument 7 is out of range" ]
}

@test "--weighted-interleave on 6.1 (no weighted interleave before 6.9): refused before any call" {
	target_start
	[ ! -e /sys/kernel/mm/mempolicy/weighted_interleave ]
	run --separate-stderr pmp-seccomp --deny=451 -- "$PMP" --weighted-interleave=0-3 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: this kernel does not support --weighted-interleave (needs Linux 6.9)" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

# hidden_run ARGS...: the tool as uid 1000 with CAP_SYS_NICE, in a mount
# namespace whose /proc is mounted hidepid=2 (processes of others invisible)
hidden_run() {
	run --separate-stderr unshare -m sh -c 'mount -t proc -o hidepid=2 proc /proc && exec "$@"' sh \
		pmp-runas --uid=1000 --keep=cap_sys_nice -- "$PMP" "$@"
	echo "status=$status stderr=[$stderr]"
}

@test "/proc mounted hidepid=2, another user's process: the kernel's ptrace denial, unchanged" {
	target_start
	hidden_run --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid $TARGET_PID: not allowed to access pid $TARGET_PID (ptrace access mode check; see PERMISSIONS in pidmempolicy(8))" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "/proc mounted hidepid=2, -a: says /proc hides the process, sets no thread" {
	target_start --threads=2
	hidden_run -a --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid $TARGET_PID: /proc hides pid $TARGET_PID from this user (mounted with hidepid?); see PERMISSIONS in pidmempolicy(8)" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "/proc mounted hidepid=2, --show: says /proc hides the process, not that it exited" {
	target_start
	hidden_run --show -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to read pid $TARGET_PID: /proc hides pid $TARGET_PID from this user (mounted with hidepid?); see PERMISSIONS in pidmempolicy(8)" ]
}

@test "/proc mounted hidepid=2, the user's own process: set as usual" {
	target_start -- pmp-runas --uid=1000 --
	hidden_run -a --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(task_policy "$TARGET_PID")" = "bind:1" ]
}

@test "a target that execs again and again during the calls: every call sets it, the policy survives exec" {
	local loop=$BATS_TEST_TMPDIR/execloop calls=0
	cat > "$loop" <<'SCRIPT'
#!/bin/bash
n=${1:-0}
[ "$n" -lt 300 ] && exec "$0" $((n + 1))
echo done > "$0.done"
exec sleep 300
SCRIPT
	chmod +x "$loop"
	"$loop" 3>&- &
	EXEC_PID=$!
	while [ ! -e "$loop.done" ]; do
		run --separate-stderr "$PMP" --membind=$((calls % 4)) -p "$EXEC_PID"
		[ "$status" -eq 0 ] || { kill "$EXEC_PID"; echo "call $calls: status=$status stderr=[$stderr]"; false; }
		[ -z "$stderr" ]
		calls=$((calls + 1))
	done
	echo "calls during the exec loop: $calls"
	[ "$calls" -ge 3 ]
	wait_until 5 test "$(task_policy "$EXEC_PID")" = "bind:$(((calls - 1) % 4))"
	kill "$EXEC_PID"
}
