#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# host-ptrace.sh BUILDDIR - the ptrace backend on the host's own kernel
# (the default wherever the kernel lacks pidfd_set_mempolicy), against
# taskset on the same process in the same run.
#
# For 1, 100, 1,000 and 10,000 threads (BENCH_HOST_SIZES) of a pmp-threads
# process: `pidmempolicy --backend=ptrace -a --interleave=0 --json` and
# `taskset -a -p f` in turn, BENCH_HOST_RUNS times (5), each timed by
# pmp-measure: the medians of wall time and of CPU time (user + system,
# the tool's tracing process included), their ratios, and the pause of
# each thread (held_us in the JSON: from the request to stop to the
# release) as p50 and p99 over every thread of every run.  Needs root (or
# the right to trace the target) and jq.
set -euo pipefail
builddir=${1:?usage: host-ptrace.sh BUILDDIR}
helpers=$builddir/tests/helpers
tool=$builddir/src/pidmempolicy
sizes=${BENCH_HOST_SIZES:-1 100 1000 10000}
runs=${BENCH_HOST_RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() {	# measure OUT CMD...: "wall_us cpu_us" of CMD, its stdout in OUT
	"$helpers/pmp-measure" "$@" 2>&1 >"$out" | sed -n \
		's/^measure: wall_us=\([0-9]*\) user_us=\([0-9]*\) sys_us=\([0-9]*\).*/\1 \2 \3/p' |
		awk '{ print $1, $2 + $3 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
percentile() { sort -n | awk -v p="$1" '{ v[NR] = $1 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print v[i] }'; }

echo "Host, not emulated: Linux $(uname -r), $(nproc) CPUs; medians of $runs runs; ms unless said"
echo
echo "| threads | taskset wall | taskset CPU | ptrace wall | ptrace CPU | wall ratio | CPU ratio | pause p50 (us) | pause p99 (us) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $sizes; do
	exec {keep}< <(sleep 100000)
	"$helpers/pmp-threads" $((n - 1)) <&"$keep" >"$work/ready" &
	tpid=$!
	for _ in $(seq 600); do [ -s "$work/ready" ] && break; sleep 0.1; done
	: >"$work/taskset" ; : >"$work/ptrace" ; : >"$work/held"
	for _ in $(seq "$runs"); do
		out=/dev/null
		measure taskset -a -p f "$tpid" >>"$work/taskset"
		out=$work/json
		measure "$tool" --backend=ptrace -a --interleave=0 --json -p "$tpid" >>"$work/ptrace"
		jq -r '.threads[].held_us // empty' "$work/json" >>"$work/held"
		[ "$(jq -r .totals.done "$work/json")" = "$n" ] || { echo "host-ptrace: a run did not set all $n threads" >&2; exit 1; }
	done
	kill "$tpid"
	exec {keep}<&-
	wait "$tpid" 2>/dev/null || true
	tw=$(cut -d' ' -f1 "$work/taskset" | median) tc=$(cut -d' ' -f2 "$work/taskset" | median)
	pw=$(cut -d' ' -f1 "$work/ptrace" | median) pc=$(cut -d' ' -f2 "$work/ptrace" | median)
	awk -v n="$n" -v tw="$tw" -v tc="$tc" -v pw="$pw" -v pc="$pc" \
		-v p50="$(percentile 50 <"$work/held")" -v p99="$(percentile 99 <"$work/held")" 'BEGIN {
		printf "| %d | %.1f | %.1f | %.1f | %.1f | %.1fx | %.1fx | %d | %d |\n",
			n, tw / 1000, tc / 1000, pw / 1000, pc / 1000, pw / tw, (tc ? pc / tc : 0), p50, p99 }'
done
