#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# In the guest: the binary of the Debian package, installed into the
# initramfs (a root it was not built in), runs.  Run by deb.bats.
bats_require_minimum_version 1.5.0

@test "package: --version names the version and the licence" {
	run --separate-stderr pidmempolicy --version
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^pidmempolicy\ [0-9]+\.[0-9]+ ]]
	[[ $output == *"GPL-2.0-or-later"* ]]
	[ -z "$stderr" ]
}

@test "package: --show -p 1 reads the guest's init" {
	run --separate-stderr pidmempolicy --show -p 1
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[0]} == *PID*POLICY* ]]
	[[ ${lines[1]} =~ ^\ *1\ +1\  ]]
}

@test "package: on this stock kernel the default sets a running process (through ptrace)" {
	sleep 300 &
	local pid=$!
	run --separate-stderr pidmempolicy -v --interleave=0-3 -p "$pid"
	local policy
	policy=$(awk 'NR == 1 { print $2 }' "/proc/$pid/numa_maps")
	kill "$pid"
	echo "status=$status out=$output err=$stderr policy=$policy"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "set pid $pid (sleep) to interleave:0-3 (was default)" ]
	[[ ${lines[1]} == "backend: ptrace ("* ]]
	[ "$policy" = interleave:0-3 ]
}
