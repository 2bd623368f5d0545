#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# arm64-smoke.bats - the arm64 rig and a cross-built tool on Debian's STOCK
# arm64 kernel: topology, architecture, numa_maps, --show, and the refusal
# to set a policy on a kernel without pidfd_set_mempolicy(2).
#
#   tests/guest/arm64.sh build /tmp/pmp-arm64
#   tests/guest/run-guest.sh --arch=arm64 --binary=/tmp/pmp-arm64/src/pidmempolicy \
#       --helpers-dir=/tmp/pmp-arm64/tests/helpers tests/guest/arm64-smoke.bats

bats_require_minimum_version 1.5.0
load lib

NOT_PROVIDED_START="pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2)"

@test "arm64: 4 NUMA nodes online, each with one CPU and about 512 MiB" {
	[ "$(node_count)" -eq 4 ]
	[ "$(cat /sys/devices/system/node/online)" = 0-3 ]
	[ "$(cat /sys/devices/system/node/has_memory)" = 0-3 ]
	[ "$(cat /sys/devices/system/node/has_cpu)" = 0-3 ]
	for n in 0 1 2 3; do
		[ "$(cat "/sys/devices/system/node/node$n/cpulist")" = "$n" ]
		kb=$(awk '/MemTotal/ { print $4 }' "/sys/devices/system/node/node$n/meminfo")
		echo "node$n MemTotal=${kb}kB"
		[ "$kb" -gt 400000 ]
	done
}

@test "arm64: the machine is aarch64, the kernel Debian's stock 6.1 arm64, no THP" {
	[ "$(uname -m)" = aarch64 ]
	[ "$PMP_ARCH" = aarch64 ]
	[[ $(uname -r) == 6.1.*-arm64 ]]
	[ "$PMP_KERNEL_VARIANT" = stock ]
	run grep -c 'sys_pidfd_set_mempolicy' /proc/kallsyms
	[ "$output" = 0 ]
	# run-guest.sh turns these off, as the x86 kernels' configs do
	grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled
	[ "$(cat /proc/sys/kernel/numa_balancing)" = 0 ]
}

@test "arm64: the cross-built tool runs" {
	run --separate-stderr "$PMP" --version
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "pidmempolicy "[0-9]* ]]
	file=$(od -A n -t x1 -j 18 -N 2 "$PMP" | tr -d ' ')
	[ "$file" = b700 ]	# e_machine EM_AARCH64
}

@test "arm64: pmp-target alloc, numa_maps counts every page" {
	target_start
	addr=$(target_cmd "alloc 16")
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "pages per node: ${n[*]}"
	[ $((n[0] + n[1] + n[2] + n[3])) -eq 4096 ]
	[ "$(numa_policy_of "$TARGET_PID" "$addr")" = default ]
}

@test "arm64: --show: task policy default, Mems_allowed_list 0-3" {
	target_start
	run --separate-stderr "$PMP" --show -p "$TARGET_PID"
	echo "$output"
	[ "$status" -eq 0 ]
	read -r pid tid comm policy mems _ <<<"${lines[1]}"
	[ "$pid $tid $comm $policy $mems" = "$TARGET_PID $TARGET_PID pmp-target default 0-3" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
	grep -qx $'Mems_allowed_list:\t0-3' "/proc/$TARGET_PID/status"
}

@test "arm64: --backend=syscall on the stock kernel exits 2, says why, changes nothing" {
	target_start
	run --separate-stderr "$PMP" --backend=syscall --interleave=0-3 -p "$TARGET_PID"
	echo "$stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ $stderr == "$NOT_PROVIDED_START"* ]]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "arm64: --migrate-only moves a target's pages (migrate_pages(2))" {
	target_start
	addr=$(target_cmd "alloc 16")
	run --separate-stderr "$PMP" --migrate-only --membind=2 -p "$TARGET_PID"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 0 4096 0" ]
}

@test "arm64: --migrate on a terminal draws a progress line on stderr, redrawn in place, then wiped; elsewhere nothing" {
	# Debian's kernel has pseudo-terminals; the guest's /init mounts no devpts
	grep -q " /dev/pts devpts " /proc/mounts || { mkdir -p /dev/pts && mount -t devpts devpts /dev/pts; }
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd "alloc 16")
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "4096 0 0 0" ]
	run pmp-pty "$PMP" --migrate-only --interleave=0-3 --rate=4M/s -p "$TARGET_PID"
	echo "status=$status"
	printf '%s' "$output" | od -c | tail -4
	[ "$status" -eq 0 ]
	[[ $output == "$(printf '\rpidmempolicy: moving the pages of pid %s: ' "$TARGET_PID")"* ]]
	[ "$(grep -o "$(printf '\r')pidmempolicy: moving" <<<"$output" | wc -l)" -ge 2 ]
	[[ $output =~ " of "[0-9]+" ("[0-9.]+" MiB/s" ]]
	[[ $output == *"$(printf '\r\033[K')" ]]
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	[ "${n[1]}" -gt 900 ] && [ "${n[2]}" -gt 900 ] && [ "${n[3]}" -gt 900 ]
	# not a terminal: not a byte on stderr
	run "$PMP" --migrate-only --membind=0 -p "$TARGET_PID"
	run --separate-stderr "$PMP" --migrate-only --interleave=0-3 --rate=4M/s -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "arm64: the default on the stock kernel sets through ptrace and says so" {
	target_start
	run --separate-stderr "$PMP" -v --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "set pid $TARGET_PID (pmp-target) to interleave:0-3 (was default)" ]
	[[ ${lines[1]} == "backend: ptrace (this kernel does not provide pidfd_set_mempolicy(2): "* ]]
	[ "$(task_policy "$TARGET_PID")" = interleave:0-3 ]
}
