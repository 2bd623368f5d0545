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
