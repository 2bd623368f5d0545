#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# smoke.bats - proves the QEMU rig itself, before (and independent of) the
# pidmempolicy tool: topology, kernel variant, the helper programs, and a raw
# pidfd_set_mempolicy(2) call on the patched kernel.
#
# Run on all kernels (6.1 and, with --version=6.12, 6.12; the syscall is 451
# on 6.1 with the v2 patch, 463 on 6.12 with the project's port):
#   tests/guest/run-guest.sh --variant=patched --helpers-dir=DIR tests/guest/smoke.bats
#   tests/guest/run-guest.sh --variant=stock   --helpers-dir=DIR tests/guest/smoke.bats
#   tests/guest/run-guest.sh --version=6.12 --variant=patched ... tests/guest/smoke.bats

bats_require_minimum_version 1.5.0
load lib

NR_PIDFD_SET_MEMPOLICY=$(pmp_syscall_nr)
CAP_SYS_NICE=23

@test "4 NUMA nodes online, each with memory and a CPU" {
	[ "$(node_count)" -eq 4 ]
	[ "$(cat /sys/devices/system/node/online)" = 0-3 ]
	[ "$(cat /sys/devices/system/node/has_memory)" = 0-3 ]
	[ "$(cat /sys/devices/system/node/has_cpu)" = 0-3 ]
	for n in 0 1 2 3; do
		cpus=$(cat "/sys/devices/system/node/node$n/cpulist")
		[ "$cpus" = "$n" ]
		[ -e "/sys/devices/system/cpu/cpu$n/node$n" ]
		kb=$(awk '/MemTotal/ { print $4 }' "/sys/devices/system/node/node$n/meminfo")
		echo "node$n cpus=$cpus MemTotal=${kb}kB"
		[ "$kb" -gt 100000 ]
	done
}

@test "kernel is the version the rig booted (6.1.x by default), variant is known" {
	case $PMP_KERNEL_VERSION in
	6.12) [[ $(uname -r) == 6.12.* ]] ;;
	*) [[ $(uname -r) == 6.1.* ]] ;;
	esac
	[ "$PMP_KERNEL_RELEASE" = "$(uname -r)" ]
	[[ $PMP_KERNEL_VARIANT == patched || $PMP_KERNEL_VARIANT == stock ]]
}

@test "kallsyms has sys_pidfd_set_mempolicy exactly on the patched kernel" {
	run grep -c 'sys_pidfd_set_mempolicy' /proc/kallsyms
	if [ "$PMP_KERNEL_VARIANT" = patched ]; then
		[ "$status" -eq 0 ]
		[ "$output" -ge 1 ]
	else
		[ "$status" -eq 1 ]
		[ "$output" = 0 ]
	fi
}

# 6.1: no THP, so numa_maps counts plain pages everywhere; 6.12: THP only
# for memory that asks (MADV_HUGEPAGE), which the huge-page migration
# tests do and no other test does.
@test "transparent hugepages are off (6.1) or madvise only (6.12), cgroup2 cpuset is available" {
	if [[ $(uname -r) == 6.1.* ]]; then
		[ ! -e /sys/kernel/mm/transparent_hugepage ]
	else
		[ "$(cat /sys/kernel/mm/transparent_hugepage/enabled)" = "always [madvise] never" ]
	fi
	grep -qw cpuset /sys/fs/cgroup/cgroup.controllers
}

@test "pmp-target alloc: numa_maps shows all pages of the mapping" {
	target_start
	addr=$(target_cmd "alloc 16")
	[[ $addr =~ ^[0-9a-f]{8,}$ ]]
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "pages per node: ${n[*]}"
	[ "${#n[@]}" -eq 4 ]
	[ $((n[0] + n[1] + n[2] + n[3])) -eq 4096 ]
	[ "$(numa_policy_of "$TARGET_PID" "$addr")" = default ]
	[ "$(task_policy "$TARGET_PID")" = default ]
	[ "$(target_cmd policy)" = "mode=0 nodes=none" ]
	target_stop
}

@test "pmp-target threads: spawn, list, reap, per-thread alloc" {
	target_start --threads=2
	read -r -a tids <<<"$(target_cmd threads)"
	[ "${#tids[@]}" -eq 3 ]
	[ "${tids[0]}" = "$TARGET_PID" ]
	[ -d "/proc/$TARGET_PID/task/${tids[2]}" ]
	[ "$(target_cmd "spawn 3")" = "ok 5" ]
	[ "$(ls "/proc/$TARGET_PID/task" | wc -l)" -eq 6 ]
	[ "$(target_cmd "reap 4")" = "ok 1" ]
	addr=$(target_cmd "alloc-thread 1 4")
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	[ $((n[0] + n[1] + n[2] + n[3])) -eq 1024 ]
	[ "$(target_cmd "policy-thread 1")" = "mode=0 nodes=none" ]
	run target_cmd "policy-thread 7"
	[ "$status" -eq 1 ]
	[[ $output == error* ]]
}

@test "pmp-runas --drop=cap_sys_nice removes CAP_SYS_NICE (bit 23)" {
	run -0 "$PMP_HELPERS/pmp-runas" --drop=cap_sys_nice -- grep '^Cap' /proc/self/status
	echo "$output"
	eff=$(awk '/^CapEff/ { print $2 }' <<<"$output")
	bnd=$(awk '/^CapBnd/ { print $2 }' <<<"$output")
	((((0x$eff >> CAP_SYS_NICE) & 1) == 0))
	((((0x$bnd >> CAP_SYS_NICE) & 1) == 0))
	# but it is still root with the other capabilities
	(((0x$eff >> 21) & 1)) # CAP_SYS_ADMIN
}

@test "pmp-runas --uid=1000 --keep=cap_sys_nice gives exactly CAP_SYS_NICE" {
	run -0 "$PMP_HELPERS/pmp-runas" --uid=1000 --keep=cap_sys_nice -- \
		sh -c 'id -u; id -g; grep "^Cap" /proc/self/status'
	echo "$output"
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = 1000 ]
	eff=$(awk '/^CapEff/ { print $2 }' <<<"$output")
	[ $((0x$eff)) -eq $((1 << CAP_SYS_NICE)) ]
	run -0 "$PMP_HELPERS/pmp-runas" --uid=1000 -- grep '^CapEff' /proc/self/status
	[[ $output == *0000000000000000 ]]
}

@test "raw pidfd_set_mempolicy(2): interleave 0-3 (patched) / ENOSYS (stock)" {
	target_start --threads=1
	run "$PMP_HELPERS/pmp-rawcall" --nr="$NR_PIDFD_SET_MEMPOLICY" --pid="$TARGET_PID" --mode=interleave --nodes=0-3
	if [ "$PMP_KERNEL_VARIANT" = stock ]; then
		[ "$status" -eq 1 ]
		[ "$output" = ENOSYS ]
		[ "$(task_policy "$TARGET_PID")" = default ]
		return 0
	fi
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
	[ "$(task_policy "$TARGET_PID")" = interleave:0-3 ]
	grep -q ' interleave:0-3 ' "/proc/$TARGET_PID/numa_maps"
	[ "$(target_cmd policy)" = "mode=3 nodes=0-3" ]
	# new memory of the main thread is interleaved over all 4 nodes
	addr=$(target_cmd "alloc 16")
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "pages per node after interleave: ${n[*]}"
	for i in 0 1 2 3; do
		[ "${n[i]}" -ge 900 ] && [ "${n[i]}" -le 1150 ]
	done
	# the patch sets the policy of the task the pidfd refers to: the
	# thread-group leader only; other threads keep theirs.
	tid1=$(target_cmd threads | cut -d' ' -f2)
	[ "$(task_policy "$TARGET_PID" "$tid1")" = default ]
	[ "$(target_cmd "policy-thread 1")" = "mode=0 nodes=none" ]
}

@test "raw call without CAP_SYS_NICE: EPERM (patched) / ENOSYS (stock)" {
	target_start
	run "$PMP_HELPERS/pmp-runas" --drop=cap_sys_nice -- \
		"$PMP_HELPERS/pmp-rawcall" --nr="$NR_PIDFD_SET_MEMPOLICY" --pid="$TARGET_PID" --mode=bind --nodes=1
	[ "$status" -eq 1 ]
	if [ "$PMP_KERNEL_VARIANT" = patched ]; then
		[ "$output" = EPERM ]
	else
		[ "$output" = ENOSYS ]
	fi
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "pmp-seccomp kills a process that makes the syscall (451; 463 on 6.12)" {
	target_start
	run "$PMP_HELPERS/pmp-seccomp" --deny=$NR_PIDFD_SET_MEMPOLICY -- \
		"$PMP_HELPERS/pmp-rawcall" --nr="$NR_PIDFD_SET_MEMPOLICY" --pid="$TARGET_PID" --mode=interleave --nodes=0-3
	[ "$status" -eq 159 ] # 128 + SIGSYS
	run "$PMP_HELPERS/pmp-seccomp" --deny=$NR_PIDFD_SET_MEMPOLICY --action=errno:EPERM -- \
		"$PMP_HELPERS/pmp-rawcall" --nr="$NR_PIDFD_SET_MEMPOLICY" --pid="$TARGET_PID" --mode=interleave --nodes=0-3
	[ "$status" -eq 1 ]
	[ "$output" = EPERM ]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "pmp-target zombie: raw call on a zombie gets ESRCH (patched) / ENOSYS (stock)" {
	target_start
	zpid=$(target_cmd zombie)
	[ "$(cut -d' ' -f3 "/proc/$zpid/stat")" = Z ]
	run "$PMP_HELPERS/pmp-rawcall" --nr="$NR_PIDFD_SET_MEMPOLICY" --pid="$zpid" --mode=interleave --nodes=0-3
	echo "raw call on zombie: $output"
	[ "$status" -eq 1 ]
	if [ "$PMP_KERNEL_VARIANT" = patched ]; then
		[ "$output" = ESRCH ]
	else
		[ "$output" = ENOSYS ]
	fi
}
