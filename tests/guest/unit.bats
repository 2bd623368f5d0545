#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# In the arm64 guest: the unit tests of the aarch64 cross build pass there
# (linux-arm64-stock.test puts them in /opt/pmp/bin), so that a non-x86
# build is run, not only compiled.
bats_require_minimum_version 1.5.0

@test "the unit tests of the aarch64 build pass on aarch64" {
	local n=0 t
	for t in /opt/pmp/bin/test-*; do
		[ -x "$t" ] || continue
		n=$((n + 1))
		run "$t"
		echo "$t: status $status, $(grep -c '^ok' <<<"$output") ok"
		[ "$status" -eq 0 ] || { echo "$output"; false; }
		! grep -q '^not ok' <<<"$output" || { echo "$output"; false; }
	done
	[ "$n" -ge 7 ] || { echo "only $n unit tests found in /opt/pmp/bin"; false; }
}
