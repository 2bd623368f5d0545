#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# host-ptrace.sh BUILDDIR - the ptrace backend on the host's own kernel
# (the default wherever the kernel lacks pidfd_set_mempolicy), against
# taskset on the same process in the same run.
#
# For 1, 100, 1,000 and 10,000 threads (BENCH_HOST_SIZES) of a pmp-threads
# process whose threads wait on a futex (as a pool's idle threads wait),
# then for 1,000 threads of which 2 spin in user space and 2 make
# getppid(2) without pause (a busy target), in turn, BENCH_HOST_RUNS times
# (5): `taskset -a -p f`, `pidmempolicy --backend=ptrace -a --interleave=0`
# (the signal engine: one thread stopped, the others signalled) and the
# same with --no-signal (every thread through its own ptrace stops), each
# timed by pmp-measure, then each once more with --json, untimed, for the
# figures of each thread.  Printed: the medians of wall time and of CPU
# time (user + system, the tool's tracing process included), the ratios
# to taskset, and over every thread of every --json run the delay of each
# signalled thread (delay_us: from its signal to its handler's call) and
# the pause of each thread --no-signal stops (held_us: from the request
# to stop to the release), as p50 and p99.  Needs root (or the right to
# trace the target) and jq.
set -euo pipefail
builddir=${1:?usage: host-ptrace.sh BUILDDIR}
helpers=$builddir/tests/helpers
tool=$builddir/src/pidmempolicy
sizes=${BENCH_HOST_SIZES:-1 100 1000 10000}
runs=${BENCH_HOST_RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() {	# measure OUT CMD...: "wall_us cpu_us" of CMD, its stdout in OUT
	local out=$1
	shift
	"$helpers/pmp-measure" "$@" 2>&1 >"$out" | sed -n \
		's/^measure: wall_us=\([0-9]*\) user_us=\([0-9]*\) sys_us=\([0-9]*\).*/\1 \2 \3/p' |
		awk '{ print $1, $2 + $3 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
percentile() {
	sort -n | awk -v p="$1" '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
		i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print v[i] }'
}

# time_tool RUN_FILE FIELD ARGS...: one timed run of the tool over $tpid,
# as an admin or a script runs it (no --json: -v and --json read every
# thread's numa_maps first, for its policy before); then one untimed run
# with --json, whose thread FIELD (delay_us or held_us) of each thread is
# appended to $work/FIELD.  Both must set every one of the $n threads.
time_tool() {
	local file=$1 field=$2
	shift 2
	measure /dev/null "$tool" --backend=ptrace -a --interleave=0 "$@" -p "$tpid" >>"$work/$file" ||
		{ echo "host-ptrace: a timed run failed" >&2; exit 1; }
	"$tool" --backend=ptrace -a --interleave=0 --json "$@" -p "$tpid" >"$work/json"
	jq -r ".threads[].$field // empty" "$work/json" >>"$work/$field"
	[ "$(jq -r .totals.done "$work/json")" = "$n" ] ||
		{ echo "host-ptrace: a run did not set all $n threads" >&2; exit 1; }
	jq -r '[.threads[] | select(.path == "signal")] | length' "$work/json" >>"$work/bysignal-$file"
}

# row LABEL N PMP-THREADS-ARGS...: a target of N threads in all, timed
row() {
	local label=$1 keep sleeper
	n=$2
	shift 2
	# the target's stdin, open until it is to go (the sleep keeps no
	# stderr of ours open: a pipe read to its end would wait for it)
	exec {keep}< <(exec sleep 100000 2>/dev/null)
	sleeper=$!
	"$helpers/pmp-threads" --wait=futex "$@" <&"$keep" >"$work/ready" &
	tpid=$!
	for _ in $(seq 600); do [ -s "$work/ready" ] && break; sleep 0.1; done
	[ "$(ls "/proc/$tpid/task" | wc -l)" = "$n" ] || { echo "host-ptrace: the target has not $n threads" >&2; exit 1; }
	for f in taskset engine ptrace delay_us held_us bysignal-engine bysignal-ptrace; do : >"$work/$f"; done
	for _ in $(seq "$runs"); do
		measure /dev/null taskset -a -p f "$tpid" >>"$work/taskset"
		time_tool engine delay_us
		time_tool ptrace held_us --no-signal
	done
	kill "$tpid" "$sleeper"
	exec {keep}<&-
	wait "$tpid" 2>/dev/null || true
	local tw tc ew ec pw pc
	tw=$(cut -d' ' -f1 "$work/taskset" | median) tc=$(cut -d' ' -f2 "$work/taskset" | median)
	ew=$(cut -d' ' -f1 "$work/engine" | median) ec=$(cut -d' ' -f2 "$work/engine" | median)
	pw=$(cut -d' ' -f1 "$work/ptrace" | median) pc=$(cut -d' ' -f2 "$work/ptrace" | median)
	awk -v l="$label" -v tw="$tw" -v tc="$tc" -v ew="$ew" -v ec="$ec" -v pw="$pw" -v pc="$pc" \
		-v sig="$(median <"$work/bysignal-engine")" \
		-v d50="$(percentile 50 <"$work/delay_us")" -v d99="$(percentile 99 <"$work/delay_us")" \
		-v h50="$(percentile 50 <"$work/held_us")" -v h99="$(percentile 99 <"$work/held_us")" 'BEGIN {
		printf "| %s | %.1f | %.1f / %.1f | %.1fx | %d | %s / %s | %.1f / %.1f | %.1fx | %s / %s |\n",
			l, tw / 1000, ew / 1000, ec / 1000, ew / tw, sig, d50, d99,
			pw / 1000, pc / 1000, pw / tw, h50, h99 }'
}

echo "Host, not emulated: Linux $(uname -r), $(nproc) CPUs; medians of $runs runs; ms unless said"
echo "Each thread waits on a futex; \"busy\": 2 spin in user space, 2 call getppid(2) without pause."
echo
echo "| threads | taskset wall | engine wall / CPU | ratio | by signal | delay p50 / p99 (us) | --no-signal wall / CPU | ratio | pause p50 / p99 (us) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for s in $sizes; do
	row "$s" "$s" $((s - 1))
done
row "1000 busy" 1000 --busy=2 995
