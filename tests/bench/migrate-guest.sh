#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# migrate-guest.sh - runs INSIDE the QEMU guest (see bench.sh): how fast
# --migrate moves pages, against numactl's migratepages(8) on the same
# 256 MiB in the same run.
#
# 1. node 0 -> node 2, the move both tools can make: migratepages PID 0 2
#    against pidmempolicy --migrate-only --membind=2 (both end in
#    migrate_pages(2)); before each timed move the pages are put back on
#    node 0 by the other tool, untimed.  Medians of $RUNS, MiB/s and the
#    ratio.
# 2. re-spread 256 MiB from node 0 over nodes 0-3 (pidmempolicy
#    --migrate-only --interleave=0-3, move_pages(2), 3/4 of the pages
#    move), which migratepages cannot do: time, MiB/s, and pages moved a
#    second per CPU second of the tool.
# Prints a Markdown table and key=value lines.
set -euo pipefail

RUNS=${BENCH_RUNS:-5}
MIB=${BENCH_MIGRATE_MIB:-256}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# measure CMD...: "wall_us cpu_us" of one run
measure() {
	local line
	line=$(pmp-measure "$@" 2>&1 >/dev/null | grep '^measure:' | tail -1)
	[[ $line == *" status=0" ]] || { echo "bench: '$*' failed: $line" >&2; return 1; }
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	       print v["wall_us"], v["user_us"] + v["sys_us"] }' <<<"$line"
}

# pages_on PID NODE: the target's resident pages on NODE (numa_maps)
pages_on() {
	awk -v n="N$2=" '{ for (i = 3; i <= NF; i++) if (index($i, n) == 1) s += substr($i, length(n) + 1) }
	                 END { print s + 0 }' "/proc/$1/numa_maps"
}

coproc TGT { exec pmp-target; }
read -r _ pid <&"${TGT[0]}"
pidmempolicy --membind=0 -p "$pid" >/dev/null
echo "alloc $MIB" >&"${TGT[1]}"
read -r addr <&"${TGT[0]}"
on0=$(pages_on "$pid" 0)
echo "kernel $(uname -r), $(nproc) CPUs, QEMU TCG; target $pid with $MIB MiB at $addr, $on0 pages on node 0; runs: $RUNS"

mig=() pmp=()
for ((r = 0; r < RUNS; r++)); do
	pidmempolicy --migrate-only --membind=0 -p "$pid" >/dev/null
	mig+=("$(measure migratepages "$pid" 0 2)")
	[ "$(pages_on "$pid" 2)" -ge $((MIB * 256)) ]
	migratepages "$pid" 2 0
	pmp+=("$(measure pidmempolicy --migrate-only --membind=2 -p "$pid")")
	[ "$(pages_on "$pid" 2)" -ge $((MIB * 256)) ]
done
m=$(printf '%s\n' "${mig[@]}" | cut -d' ' -f1 | median)
p=$(printf '%s\n' "${pmp[@]}" | cut -d' ' -f1 | median)

# the re-spread: from all on node 0
spread=() cpu=()
for ((r = 0; r < RUNS; r++)); do
	pidmempolicy --migrate-only --membind=0 -p "$pid" >/dev/null
	before=$(pages_on "$pid" 0)
	read -r w c <<<"$(measure pidmempolicy --migrate-only --interleave=0-3 -p "$pid")"
	after=$(pages_on "$pid" 0)
	spread+=("$w")
	cpu+=("$c")
	moved=$((before - after))
done
s=$(printf '%s\n' "${spread[@]}" | median)
sc=$(printf '%s\n' "${cpu[@]}" | median)

echo
echo "| move | tool | wall (ms) | MiB/s | ratio |"
echo "|---|---|---:|---:|---:|"
awk -v m="$m" -v p="$p" -v mib="$MIB" 'BEGIN {
	printf "| %d MiB node 0 -> 2 | migratepages PID 0 2 | %.0f | %.0f | 1.00 |\n", mib, m / 1000, mib / (m / 1e6)
	printf "| %d MiB node 0 -> 2 | pidmempolicy --migrate-only --membind=2 | %.0f | %.0f | %.2f |\n", mib, p / 1000, mib / (p / 1e6), p / m
}'
awk -v s="$s" -v c="$sc" -v moved="$moved" -v mib="$MIB" 'BEGIN {
	printf "| %d MiB re-spread over 0-3 (%d pages moved) | pidmempolicy --migrate-only --interleave=0-3 | %.0f | %.0f | - |\n",
	       mib, moved, s / 1000, moved * 4096 / 1048576 / (s / 1e6)
	printf "\nre-spread: %.0f pages moved a second, %.0f a CPU second of the tool\n", moved / (s / 1e6), moved / (c / 1e6)
}'
echo "bench-migrate: migratepages_us=$m pidmempolicy_us=$p ratio=$(awk -v a="$p" -v b="$m" 'BEGIN { printf "%.2f", a / b }') respread_us=$s respread_cpu_us=$sc respread_pages=$moved"
eval "exec ${TGT[1]}>&- ${TGT[0]}<&-"
