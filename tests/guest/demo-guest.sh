#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo-guest.sh - runs INSIDE the QEMU guest (see demo.sh).
set -euo pipefail

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
pages() {	# pages per node of the numa_maps line starting at $2
	local line
	line=$(grep "^0*$2 " "/proc/$1/numa_maps")
	printf '%s\n' "$line"
	for n in 0 1 2 3; do
		printf '  node %d: %6d pages\n' "$n" "$(sed -n "s/.* N$n=\([0-9]*\).*/\1/p" <<<"$line" | grep . || echo 0)"
	done
}

cd /tmp
mkfifo in out
pmp-target <in >out &
target=$!
exec 3>in 4<out
read -r ready pid <&4
ask() { echo "$*" >&3; read -r reply <&4; echo "$reply"; }

say "kernel $(uname -r), $(ls -d /sys/devices/system/node/node* | wc -l) NUMA nodes; target pid $pid (pmp-target)"
say "before: 32 MiB touched under the default policy (local node)"
old=$(ask alloc 32)
pages "$pid" "$old"

say "pidmempolicy -v --interleave=0-3 -p $pid"
pidmempolicy -v --interleave=0-3 -p "$pid"

say "after: the policy as the target itself sees it (get_mempolicy)"
ask policy

say "new memory (32 MiB touched after the change) is interleaved"
new=$(ask alloc 32)
pages "$pid" "$new"

say "memory touched before the change stays where it was"
pages "$pid" "$old"

say "pidmempolicy -v --membind=3 -p $pid, then 16 MiB more"
pidmempolicy -v --membind=3 -p "$pid"
pages "$pid" "$(ask alloc 16)"

say "pidmempolicy --migrate --membind=3 -p $pid: pages already placed move too"
pidmempolicy -v --migrate --membind=3 -p "$pid"
pages "$pid" "$old"

say "pidmempolicy --show -p $pid"
pidmempolicy --show -p "$pid"

ask exit >/dev/null
wait "$target" || true
