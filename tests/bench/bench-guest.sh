#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-guest.sh - runs INSIDE the QEMU guest (see bench.sh).
#
# For targets with 1, 100, 1000 and 10000 threads: the wall time of
# `pidmempolicy -a --interleave=all -p PID` against `taskset -a -p MASK PID`
# on the same target in the same run (taskset -a -p, the natural peer,
# makes three calls per thread: sched_getaffinity twice, sched_setaffinity
# once), median of $RUNS runs, as a ratio; the tool's system calls per
# thread (strace -f, one line a call); its peak RSS; with RLIMIT_NOFILE
# 1024, whether it ran out of descriptors; the ptrace backend's cost per
# thread; and, to explain the ratio, what each call costs the kernel per
# thread (pmp-syscost).  Where tracefs is mounted (the tool then names the
# syscall through it), the tool's times again with tracefs unmounted (it
# then reads /proc/kallsyms).  Prints Markdown tables and key=value lines.
set -euo pipefail

RUNS=${BENCH_RUNS:-9}
SIZES=${BENCH_SIZES:-"1 100 1000 10000"}
# The ptrace backend asks the kernel for one mapping per thread on Linux
# 6.11+ (PROCMAP_QUERY); before, it reads every mapping: O(n^2) in all.
release=$(uname -r)
if [ "$(printf '%s\n' 6.11 "${release%%-*}" | sort -V | head -1)" = 6.11 ]; then
	PTRACE_MAX=${BENCH_PTRACE_MAX:-10000}
else
	PTRACE_MAX=${BENCH_PTRACE_MAX:-1000}
fi
ulimit -n 1024
TRACEFS=/sys/kernel/tracing
TRACEFS_MOUNTED=0
grep -q " $TRACEFS tracefs " /proc/mounts && TRACEFS_MOUNTED=1
kallsyms_rows=()

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# measure CMD...: wall_us of one run (its output discarded).  Exit status
# 0, or 64 where the kernel cannot address single threads (Linux 6.1: the
# leader is set and every other thread reported).
measure() {
	local line
	line=$(pmp-measure "$@" 2>&1 >/dev/null | grep '^measure:' | tail -1)
	[[ $line == *" status=0" || $line == *" status=64" ]] || { echo "bench: '$*' failed: $line" >&2; return 1; }
	sed 's/.*wall_us=\([0-9]*\).*/\1/' <<<"$line"
}
field_of() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p" <<<"$2"; }
costs=()
rss_of() {
	{ pmp-measure "$@" 2>&1 >/dev/null || true; } | sed -n 's/^measure:.*maxrss_kb=\([0-9]*\).*/\1/p'
}

echo "kernel $(uname -r), $(nproc) CPUs, $(ls -d /sys/devices/system/node/node* | wc -l) nodes, QEMU TCG; RLIMIT_NOFILE $(ulimit -n); runs per point: $RUNS"
echo
echo "| threads | pidmempolicy -a (ms) | taskset -a -p (ms) | ratio | syscalls/thread | fixed syscalls | peak RSS (KiB) | ptrace backend (us/thread) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
	# the target lives until its stdin (the coprocess pipe) is closed
	coproc TGT { exec pmp-threads $((n - 1)); }
	read -r _ pid <&"${TGT[0]}"
	[ "$(ls /proc/$pid/task | wc -l)" -eq "$n" ]
	tool=() peer=()
	for ((r = 0; r < RUNS; r++)); do
		tool+=("$(measure pidmempolicy -a --interleave=all -p "$pid")")
		peer+=("$(measure taskset -a -p f "$pid")")
	done
	t=$(printf '%s\n' "${tool[@]}" | median)
	p=$(printf '%s\n' "${peer[@]}" | median)
	# where tracefs names the syscall, the same runs with it unmounted, so
	# that the tool reads /proc/kallsyms instead
	if [ "$TRACEFS_MOUNTED" = 1 ]; then
		umount "$TRACEFS"
		ks=()
		for ((r = 0; r < RUNS; r++)); do
			ks+=("$(measure pidmempolicy -a --interleave=all -p "$pid")")
		done
		mount -t tracefs tracefs "$TRACEFS"
		k=$(printf '%s\n' "${ks[@]}" | median)
		kallsyms_rows+=("$n $k $p")
	fi
	# syscalls: total over the run, and the fixed part (a 1-thread target's).
	# One strace line per call: strace -c leaves out numbers it cannot
	# name, such as a patch's pidfd_set_mempolicy ("syscall_0x1cf").
	strace -f -o /tmp/strace.$n pidmempolicy -a --interleave=all -p "$pid" >/dev/null 2>&1 || true
	calls=$(grep -Ec '^[0-9]+ +[a-z_0-9]+\(' /tmp/strace.$n)
	echo "bench: n=$n syscalls by name: $(sed -nE 's/^[0-9]+ +([a-z_0-9]+)\(.*/\1/p' /tmp/strace.$n | sort | uniq -c | sort -rn | head -6 | awk '{ printf "%s %s, ", $2, $1 }')" >&2
	[ "$n" -eq 1 ] && fixed=$calls
	per=$(awk -v c="$calls" -v f="${fixed:-0}" -v n="$n" 'BEGIN { if (n > 1) printf "%.2f", (c - f) / (n - 1); else printf "-" }')
	rss=$(rss_of pidmempolicy -a --interleave=all -p "$pid" 2>/dev/null)
	if [ "$n" -le "$PTRACE_MAX" ]; then
		us=$(measure pidmempolicy --backend=ptrace -a --interleave=all -p "$pid")
		pt=$((us / n))
	else
		pt="(skipped: > $PTRACE_MAX threads)"
	fi
	printf '| %d | %.1f | %.1f | %.2f | %s | %s | %s | %s |\n' "$n" \
		"$(bc -l <<<"$t / 1000" 2>/dev/null || echo "$((t / 1000))")" \
		"$(bc -l <<<"$p / 1000" 2>/dev/null || echo "$((p / 1000))")" \
		"$(awk -v a="$t" -v b="$p" 'BEGIN { printf "%.2f", a / b }')" "$per" "${fixed:-?}" "$rss" "$pt"
	echo "bench: n=$n tool_us=$t taskset_us=$p syscalls=$calls rss_kb=$rss ptrace=$pt" >&2
	# what each call costs the kernel on this target (pmp-syscost)
	costs+=("$n $(pmp-syscost "$pid" "${PIDMEMPOLICY_SYSCALL_NR:-451}")")
	tgt=$TGT_PID
	eval "exec ${TGT[1]}>&- ${TGT[0]}<&-"
	wait "$tgt" || true
done
if [ "$TRACEFS_MOUNTED" = 1 ]; then
	echo
	echo "The tool named the syscall through tracefs above; the same, with tracefs unmounted (through /proc/kallsyms):"
	echo
	echo "| threads | pidmempolicy -a (ms) | taskset -a -p (ms) | ratio |"
	echo "|---:|---:|---:|---:|"
	for row in "${kallsyms_rows[@]}"; do
		set -- $row
		printf '| %d | %.1f | %.1f | %.2f |\n' "$1" "$(awk -v v="$2" 'BEGIN { print v / 1000 }')" \
			"$(awk -v v="$3" 'BEGIN { print v / 1000 }')" "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')"
	done
fi
echo
echo "Kernel cost per thread (us, pmp-syscost: each call in a loop over the target's threads) and one listing of /proc/PID/task:"
echo
echo "| threads | pidfd_open + close | tgkill probe | pidfd_set_mempolicy | sched_getaffinity | sched_setaffinity | listing (ms) |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for c in "${costs[@]}"; do
	set -- $c
	line=$*
	printf '| %s | %s | %s | %s | %s | %s | %.1f |\n' "$1" "$(field_of pidfd_open_close_us "$line")" \
		"$(field_of tgkill_us "$line")" "$(field_of set_us "$line")" "$(field_of getaffinity_us "$line")" \
		"$(field_of setaffinity_us "$line")" "$(awk -v u="$(field_of listing_us "$line")" 'BEGIN { print u / 1000 }')"
done
echo
startup() {
	local v=() r
	for ((r = 0; r < RUNS; r++)); do
		v+=("$(measure "$@")")
	done
	printf '%s\n' "${v[@]}" | median
}
echo "start-up, one PID of one thread, medians: pidmempolicy $(startup pidmempolicy --interleave=0 -p $$) us, taskset -p $(startup taskset -p 1 $$) us"
if [ "$TRACEFS_MOUNTED" = 1 ]; then
	umount "$TRACEFS"
	echo "start-up through /proc/kallsyms (tracefs unmounted): pidmempolicy $(startup pidmempolicy --interleave=0 -p $$) us"
	mount -t tracefs tracefs "$TRACEFS"
fi
