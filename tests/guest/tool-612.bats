#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel truth on Linux 6.12 + the project's forward port of
# pidfd_set_mempolicy (tests/kernel/patches/linux-6.12/): PIDFD_THREAD pidfds
# address single threads, so -a sets EVERY thread for real (issue #4).
# The port puts the syscall at 463 (setxattrat in mainline 6.13+): the tool is
# told the number at run time (PIDMEMPOLICY_SYSCALL_NR) and verifies it as on
# 6.1 (the kernel names the syscall, then the probes); nothing in the tool
# knows about this kernel.  This kernel has syscall tracepoints, so the name
# comes from tracefs (on 6.1, built without, from /proc/kallsyms).

load lib
bats_require_minimum_version 1.5.0

CG=/sys/fs/cgroup/pmp-test
WI=/sys/kernel/mm/mempolicy/weighted_interleave

setup() {
	only_on patched 6.12
	PIDMEMPOLICY_SYSCALL_NR=$PMP_NR_612
	export PIDMEMPOLICY_SYSCALL_NR
}

EVENT=$TRACEFS/events/syscalls/sys_enter_pidfd_set_mempolicy

# traced_run ARGS...: run the tool under strace (file and statfs calls
# into $BATS_TEST_TMPDIR/trace), as `run --separate-stderr` does.  An
# ASan build's leak check cannot run under ptrace: it is left to the
# other tests.
traced_run() {
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr \
		strace -f -qq -e trace=open,openat,statfs -o "$BATS_TEST_TMPDIR/trace" "$PMP" "$@"
}

teardown() {
	tracefs_restore
	pmp_teardown
	# the hugetlbfs tests' mount and pool, once their target is gone
	umount "$BATS_TEST_TMPDIR/huge" 2>/dev/null || true
	echo 0 >/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages 2>/dev/null || true
	[ -n "${LATE_PID:-}" ] && kill -9 "$LATE_PID" 2>/dev/null
	if [ -d "$CG" ]; then
		while read -r p; do echo "$p" >/sys/fs/cgroup/cgroup.procs 2>/dev/null; done <"$CG/cgroup.procs"
		rmdir "$CG" 2>/dev/null || true
	fi
	local n
	for n in 0 1 2 3; do
		[ -w "$WI/node$n" ] && echo 1 >"$WI/node$n" 2>/dev/null || true
	done
	return 0
}

# every_thread_has PID POLICY: each thread in /proc/PID/task shows POLICY
every_thread_has() {
	local pid=$1 want=$2 t got bad=0 n=0
	for t in $(ls "/proc/$pid/task"); do
		got=$(task_policy "$pid" "$t" 2>/dev/null) || continue # ended meanwhile
		n=$((n + 1))
		if [ "$got" != "$want" ]; then
			echo "tid $t has '$got', want '$want'"
			bad=1
		fi
	done
	echo "$n threads checked"
	[ "$bad" = 0 ] && [ "$n" -gt 0 ]
}

@test "6.12: the tool verifies syscall 463 (tracefs + probes) and sets, without reading /proc/kallsyms" {
	grep -Eq ' (__x64_)?sys_pidfd_set_mempolicy$' /proc/kallsyms
	grep -q " $TRACEFS tracefs " /proc/mounts
	[ -d "$EVENT" ]
	target_start
	traced_run -v --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status out=$output err=$stderr"
	cat "$BATS_TEST_TMPDIR/trace"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "set pid $TARGET_PID (pmp-target) to interleave:0-3 (was default)" ]
	[ "$(task_policy "$TARGET_PID")" = interleave:0-3 ]
	[ "$(target_cmd policy)" = "mode=3 nodes=0-3" ]
	grep -q "statfs(\"$EVENT\", .*) = 0" "$BATS_TEST_TMPDIR/trace"
	! grep -q kallsyms "$BATS_TEST_TMPDIR/trace"
}

@test "6.12: tracefs not mounted: /proc/kallsyms names the syscall, and it is set" {
	umount "$TRACEFS"
	target_start
	traced_run --interleave=1-2 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	cat "$BATS_TEST_TMPDIR/trace"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(task_policy "$TARGET_PID")" = interleave:1-2 ]
	grep -q 'open.*"/proc/kallsyms".* = [0-9]' "$BATS_TEST_TMPDIR/trace"
}

@test "6.12: a tmpfs mounted where tracefs goes, with the event's directory, is not believed" {
	umount "$TRACEFS"
	mount -t tmpfs tmpfs "$TRACEFS"
	mkdir -p "$EVENT"
	target_start
	traced_run --interleave=0-1 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	cat "$BATS_TEST_TMPDIR/trace"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$TARGET_PID")" = interleave:0-1 ]
	# the directory was found, its filesystem refused, /proc/kallsyms read
	grep -q "statfs(\"$EVENT\", .*) = 0" "$BATS_TEST_TMPDIR/trace"
	grep -q 'open.*"/proc/kallsyms".* = [0-9]' "$BATS_TEST_TMPDIR/trace"
}

@test "6.12: told 451 (cachestat here), the probes refuse it: exit 2, nothing set" {
	target_start
	PIDMEMPOLICY_SYSCALL_NR=451 run --separate-stderr "$PMP" --backend=syscall --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 2 ]
	[ "$stderr" = "pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): syscall 451 does not answer like pidfd_set_mempolicy (probe: EBADF, EBADF) (--backend=ptrace works without it)" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

@test "6.12: told 440 (process_madvise answers the probes alike), the proof refuses it: exit 2, nothing set" {
	target_start
	# the name check passes (the syscall is at 463) and so do the probes
	[ -d "$EVENT" ]
	ASAN_OPTIONS=detect_leaks=0 PIDMEMPOLICY_SYSCALL_NR=440 run --separate-stderr \
		strace -f -qq -e trace=pidfd_open,process_madvise,set_mempolicy -o "$BATS_TEST_TMPDIR/trace" \
		"$PMP" --backend=syscall --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	cat "$BATS_TEST_TMPDIR/trace"
	[ "$status" -eq 2 ]
	[ "$stderr" = "pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): syscall 440 did not set the caller's own policy (it is not pidfd_set_mempolicy) (--backend=ptrace works without it)" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
	[ "$(target_cmd policy)" = "mode=0 nodes=none" ]
	# the two probes on pidfd -1, then the proof on the tool's own pidfd;
	# the target is never opened, 440 never succeeds, nothing to restore
	local trace=$BATS_TEST_TMPDIR/trace own
	[ "$(grep -c 'process_madvise(' "$trace")" -eq 3 ]
	[ "$(grep -c 'process_madvise(-1, ' "$trace")" -eq 2 ]
	own=$(grep -E '^([0-9]+) +pidfd_open\(\1, 0\) += [0-9]+$' "$trace" | sed 's/.*= //')
	[ -n "$own" ]
	grep -Eq "process_madvise\($own, 0x8001, [0-9]+, 0x1001 .*= -1 E" "$trace"
	! grep -q 'process_madvise(.*) = 0' "$trace" || false
	! grep -q "pidfd_open($TARGET_PID," "$trace" || false
	# libnuma probes MPOL_PREFERRED_MANY with set_mempolicy when it loads:
	# only what comes after the first probe is the tool's
	! sed -n '/process_madvise(-1, /,$p' "$trace" | grep -q 'set_mempolicy('
}

@test "6.12: the proof sets the tool's own policy through 463 and puts it back" {
	target_start
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr \
		strace -f -qq -e trace=get_mempolicy,set_mempolicy -o "$BATS_TEST_TMPDIR/trace" \
		"$PMP" --membind=1 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	cat "$BATS_TEST_TMPDIR/trace"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(task_policy "$TARGET_PID")" = bind:1 ]
	local trace=$BATS_TEST_TMPDIR/trace
	# read back: preferred (1) with static nodes (0x8000) on node 0, the
	# tool's lowest allowed node; then the tool's default policy restored
	grep -q 'get_mempolicy(\[0x8001 /\* MPOL_??? \*/\], \[0x00000000000001, .*, 4097, NULL, 0) = 0' "$trace"
	# (libnuma probes with set_mempolicy when it loads; the proof's part
	# starts where the tool reads its own policy, with 4097 bits)
	[ "$(sed -n '/get_mempolicy(.*, 4097, NULL, 0) = 0/,$p' "$trace" | grep -c 'set_mempolicy(')" -eq 1 ]
	grep -q 'set_mempolicy(MPOL_DEFAULT, \[0000000000000000, .*, 4097) = 0' "$trace"
}

@test "-a on 6.12: every thread gets its own policy, exit 0, no stderr" {
	target_start --threads=3
	read -r -a tids <<<"$(target_cmd threads)"
	[ "${#tids[@]}" -eq 4 ]
	run --separate-stderr "$PMP" -a --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	for i in 0 1 2 3; do
		[ "$(task_policy "$TARGET_PID" "${tids[i]}")" = interleave:0-3 ]
		[ "$(target_cmd "policy-thread $i")" = "mode=3 nodes=0-3" ]
	done
}

@test "-a --membind=2: a worker thread's new memory is placed by its own policy" {
	target_start --threads=3
	run --separate-stderr "$PMP" -a --membind=2 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	addr=$(target_cmd "alloc-thread 2 16")
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "pages per node: ${n[*]}"
	[ "${n[0]}" -eq 0 ] && [ "${n[1]}" -eq 0 ] && [ "${n[2]}" -eq 4096 ] && [ "${n[3]}" -eq 0 ]
	[ "$(target_cmd "policy-thread 2")" = "mode=2 nodes=2" ]
}

@test "process pidfd = leader only, thread pidfds = threads: leader bind:3, workers bind:1" {
	target_start --threads=3
	read -r -a tids <<<"$(target_cmd threads)"
	run --separate-stderr "$PMP" -a --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run --separate-stderr "$PMP" --membind=3 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(task_policy "$TARGET_PID" "${tids[0]}")" = bind:3 ]
	[ "$(target_cmd "policy-thread 0")" = "mode=2 nodes=3" ]
	for i in 1 2 3; do
		[ "$(task_policy "$TARGET_PID" "${tids[i]}")" = bind:1 ]
		[ "$(target_cmd "policy-thread $i")" = "mode=2 nodes=1" ]
	done
	# and a worker's memory still goes to node 1, the leader's to node 3
	addr=$(target_cmd "alloc-thread 1 4")
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 1024 0 0" ]
	addr=$(target_cmd "alloc 4")
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 0 0 1024" ]
}

@test "churn: -a while threads come and go; every surviving and every later thread has the policy" {
	target_start --threads=2
	[[ $(target_cmd "churn on") == "ok "* ]]
	sleep 0.3
	for round in 1 2 3 4 5 6 7 8; do
		run --separate-stderr "$PMP" -a --membind=$((round % 4)) -p "$TARGET_PID"
		echo "round $round: status=$status err=$stderr"
		[ "$status" -eq 0 ]
	done
	run --separate-stderr "$PMP" -a --interleave=1-2 -p "$TARGET_PID"
	echo "final: status=$status err=$stderr"
	[ "$status" -eq 0 ]
	during=$(target_cmd "churn on")
	# keep churning: the churn thread (set by the call) creates new threads,
	# which must inherit its new policy; all of the old ones get replaced
	sleep 0.5
	after=$(target_cmd "churn off")
	echo "churn cycles: right after the call ${during#ok }, at the end ${after#ok }"
	[ "${during#ok }" -gt 20 ]
	[ "${after#ok }" -gt $((${during#ok } + 8)) ]
	every_thread_has "$TARGET_PID" interleave:1-2
	# threads created afterwards by the (set) main thread inherit it too
	[ "$(target_cmd "spawn 2")" = "ok 4" ]
	read -r -a tids <<<"$(target_cmd threads)"
	[ "$(task_policy "$TARGET_PID" "${tids[3]}")" = interleave:1-2 ]
	[ "$(task_policy "$TARGET_PID" "${tids[4]}")" = interleave:1-2 ]
	[ "$(target_cmd "policy-thread 4")" = "mode=3 nodes=1-2" ]
	[ "$(target_cmd ping)" = pong ]
}

# start_latecomer N [K]: pmp-threads --latecomer=K N (K is 1 by default)
# in the background, its output in $BATS_TEST_TMPDIR/late.out; sets
# LATE_PID (the process) and LATE_FD (its stdin: closing it ends the
# process)
start_latecomer() {
	local dir=$BATS_TEST_TMPDIR line k=${2:-1}
	rm -f "$dir/late.in" "$dir/late.out"
	mkfifo "$dir/late.in"
	exec {LATE_FD}<>"$dir/late.in"
	"$PMP_HELPERS/pmp-threads" --latecomer="$k" "$1" <"$dir/late.in" >"$dir/late.out" {LATE_FD}>&- &
	for _ in $(seq 300); do
		line=$(head -1 "$dir/late.out" 2>/dev/null) && [[ $line == "ready "* ]] && break
		sleep 0.1
	done
	LATE_PID=${line#ready }
	[ -n "$LATE_PID" ] && [ "$(ls "/proc/$LATE_PID/task" | wc -l)" -eq $(($1 + k + 2)) ]
}

@test "-a: a thread born during the walk from a thread not yet set is found and set" {
	# The watcher thread, last in /proc/PID/task, ends a thread and creates
	# the latecomer as soon as the main thread's policy changes: before the
	# walk reaches the watcher, the latecomer inherits the old policy, and
	# the listing in progress (which resumes at its count of threads)
	# passes over it.  Only a look after the walk finds it.  If the walk
	# reached the watcher first (the latecomer born with the new policy),
	# the run proves nothing and is repeated.
	local try won=0 tid born
	for try in 1 2 3 4 5; do
		start_latecomer 500
		run --separate-stderr "$PMP" -a --interleave=0-3 -p "$LATE_PID"
		echo "try $try: status=$status err=$stderr"
		[ "$status" -eq 0 ] && [ -z "$stderr" ]
		for _ in $(seq 100); do
			read -r _ tid born < <(grep '^latecomer ' "$BATS_TEST_TMPDIR/late.out") && break
			sleep 0.1
		done
		echo "try $try: latecomer tid=$tid born with mode $born"
		[ -n "$tid" ] && [ "$tid" -gt 0 ]
		if [ "$born" = 0 ]; then
			won=1
			[ "$(task_policy "$LATE_PID" "$tid")" = interleave:0-3 ]
			[ "$(task_policy "$LATE_PID")" = interleave:0-3 ]
		fi
		exec {LATE_FD}>&-
		wait "$LATE_PID" || true
		[ "$won" = 1 ] && break
	done
	[ "$won" = 1 ]
}

@test "-a: 100 threads end and 101 are born during the walk: every newcomer is found and set" {
	# As above with 100 doomed threads and 101 latecomers, all born with
	# the old policy while the walk sets 5,000 other threads.  After the
	# first listing, the list has shifted by 100: a read of its end from
	# where that listing ended, with its overlap of 64 entries, begins
	# among the latecomers and would pass over those before; the walk must
	# see that the first thread it meets there is new, and list again.
	# The watcher needs all 101 born before the walk reaches it: strace
	# delays each thread's pidfd_open by 200 us, so that a walk of 5,000
	# threads lasts a second longer, which an emulated CPU shared with
	# the host's other work needs (without it, all 5 tries were lost in
	# some runs).
	local try won=0 lines tid born
	for try in 1 2 3 4 5; do
		start_latecomer 5000 100
		ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -qq --seccomp-bpf -o /dev/null \
			-e trace=pidfd_open -e inject=pidfd_open:delay_enter=200:when=2+ \
			"$PMP" -a --interleave=0-3 -p "$LATE_PID"
		echo "try $try: status=$status err=$stderr"
		[ "$status" -eq 0 ] && [ -z "$stderr" ]
		for _ in $(seq 300); do
			lines=$(grep -c '^latecomer ' "$BATS_TEST_TMPDIR/late.out" || true)
			[ "$lines" -ge 101 ] && break
			sleep 0.1
		done
		echo "try $try: $lines latecomers, $(grep -c '^latecomer [0-9]* 0$' "$BATS_TEST_TMPDIR/late.out") born with the old policy"
		[ "$lines" -eq 101 ]
		! grep -q '^latecomer 0 ' "$BATS_TEST_TMPDIR/late.out" || false
		if [ "$(grep -c '^latecomer [0-9]* 0$' "$BATS_TEST_TMPDIR/late.out")" -eq 101 ]; then
			won=1
			while read -r _ tid born; do
				[ "$(task_policy "$LATE_PID" "$tid")" = interleave:0-3 ] || {
					echo "latecomer $tid: $(task_policy "$LATE_PID" "$tid")"
					false
				}
			done < <(grep '^latecomer ' "$BATS_TEST_TMPDIR/late.out")
		fi
		exec {LATE_FD}>&-
		wait "$LATE_PID" || true
		[ "$won" = 1 ] && break
	done
	[ "$won" = 1 ]
}

@test "--weighted-interleave with weights 3:1:1:1: 64 MiB split 3:1:1:1 (each node within 5% of its share)" {
	[ -d "$WI" ]
	echo 3 >"$WI/node0"
	echo 1 >"$WI/node1"
	echo 1 >"$WI/node2"
	echo 1 >"$WI/node3"
	[ "$(cat "$WI/node0")" = 3 ]
	target_start
	run --separate-stderr "$PMP" --weighted-interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(task_policy "$TARGET_PID")" = "weighted interleave:0-3" ]
	[ "$(target_cmd policy)" = "mode=6 nodes=0-3" ]
	addr=$(target_cmd "alloc 64")
	grep "^$addr " "/proc/$TARGET_PID/numa_maps" | grep -q ' weighted interleave:0-3 '
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "pages per node: ${n[*]}"
	total=$((n[0] + n[1] + n[2] + n[3]))
	[ "$total" -eq 16384 ]
	# shares 3/6, 1/6, 1/6, 1/6 of 16384 pages; tolerance 5% of each share
	want=(8192 2731 2731 2731)
	for i in 0 1 2 3; do
		d=$((n[i] - want[i]))
		d=${d#-}
		echo "node $i: ${n[i]} pages, share ${want[i]}, off by $d (allowed $((want[i] / 20)))"
		[ "$d" -le $((want[i] / 20)) ]
	done
}

@test "--migrate --weighted-interleave 3:1:1:1 re-spreads 64 MiB on node 0 by the weights (each node within 5% of its share)" {
	[ -d "$WI" ]
	echo 3 >"$WI/node0"
	for i in 1 2 3; do echo 1 >"$WI/node$i"; done
	target_start
	run "$PMP" --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd "alloc 64")
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 16384 0 0" ]
	run --separate-stderr "$PMP" --json --migrate --weighted-interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$TARGET_PID")" = "weighted interleave:0-3" ]
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "pages per node: ${n[*]}"
	want=(8192 2731 2731 2731)
	for i in 0 1 2 3; do
		d=$((n[i] - want[i]))
		d=${d#-}
		[ "$d" -le $((want[i] / 20)) ]
	done
	# what --json says moved agrees with what the kernel shows, node by node
	[ "$(jq -r '.threads[0].migration.not_moved' <<<"$output")" -eq 0 ]
	[ "$(jq -r '.threads[0].migration.after["0"] >= 8192 - 410' <<<"$output")" = true ]
	[ "$(jq -r '.threads[0].migration.before["1"] >= 16384' <<<"$output")" = true ]
	for i in 1 2 3; do echo 1 >"$WI/node$i"; done
	echo 1 >"$WI/node0"
}

# spread.h: the kernel moves a transparent huge page whole, whichever of
# its pages move_pages(2) names; were its pages sent to different nodes, it
# would move once per node it is sent to, and the later ones would answer
# EBUSY.  This kernel has THP for MADV_HUGEPAGE memory and PAGEMAP_SCAN.
@test "--migrate re-spreads transparent huge pages whole: each node its share, none split, each page moved once" {
	[ -r /sys/kernel/mm/transparent_hugepage/hpage_pmd_size ]
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd "alloc-huge 64")
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "16384 0 0 0" ]
	huge=$(anon_huge_kb "$TARGET_PID" "$addr")
	echo "in huge pages before: $huge kB"
	[ "$huge" -eq 65536 ]
	local mig0 thp0
	mig0=$(vmstat pgmigrate_success) thp0=$(vmstat thp_migration_success)
	run --separate-stderr "$PMP" --json --migrate --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(jq -r '.threads[0].migration.not_moved' <<<"$output")" -eq 0 ]
	moved=$(jq -r '.threads[0].migration.pages_moved' <<<"$output")
	echo "moved $moved"
	spread_in_huge_pages "$TARGET_PID" "$addr"
	# the kernel's own count: each page moved once (a huge page sent two
	# ways moves twice), 24 huge pages of the region among them; the
	# slack is for compaction, which the kernel may run meanwhile
	local mig thp
	mig=$(($(vmstat pgmigrate_success) - mig0)) thp=$(($(vmstat thp_migration_success) - thp0))
	echo "the kernel migrated $mig pages, $thp huge pages"
	[ "$mig" -ge "$moved" ] && [ "$mig" -le $((moved + 1024)) ]
	[ "$thp" -ge 24 ] && [ "$thp" -le 26 ]
}

# spread.c: a hugetlbfs page is 2 MiB (or 1 GiB) whole, which a plan in
# base pages would send to several nodes; --migrate-shared leaves them
# where they are and does not count them.  This kernel has HUGETLBFS.
#
# hugetlb_stays PAGES COMMAND: a target on node 0 with PAGES huge pages
# reserved there; COMMAND (to pmp-target) maps one 2 MiB page of them or
# more, at the address it replies (HUGETLB_ADDR); a re-spread with
# --migrate-shared then counts fewer than 256 pages more than before
# and leaves them on node 0.
hugetlb_stays() {
	local pool=/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages before after
	echo "$1" >"$pool"
	[ "$(cat "$pool")" -eq "$1" ]
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	respread_shared
	before=$RESPREAD_PAGES
	HUGETLB_ADDR=$(target_cmd "$2") || {
		echo "the target: $HUGETLB_ADDR; $(grep -h HugePages_Free /sys/devices/system/node/node*/meminfo)"
		false
	}
	HUGETLB_LINE=$(grep "^0*$HUGETLB_ADDR " "/proc/$TARGET_PID/numa_maps")
	echo "its numa_maps line: ${#HUGETLB_LINE} bytes, ending ${HUGETLB_LINE: -60}"
	[[ $HUGETLB_LINE == *" huge "*" N0="*" kernelpagesize_kB=2048" ]]
	respread_shared
	after=$RESPREAD_PAGES
	echo "pages counted: $before, then $after with the hugetlbfs mapping"
	[ "$after" -lt $((before + 256)) ]
}

respread_shared() {
	run --separate-stderr "$PMP" --json --migrate-only --migrate-shared --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(jq -r '.threads[0].migration.not_moved' <<<"$output")" -eq 0 ]
	RESPREAD_PAGES=$(jq -r '.threads[0].migration.pages' <<<"$output")
}

@test "--migrate-shared leaves hugetlbfs pages where they are and does not count them" {
	hugetlb_stays 4 "alloc-hugetlb 4"
	[ "$(numa_nodes_of "$TARGET_PID" "$HUGETLB_ADDR")" = "2 0 0 0" ]
}

# A mapping whose numa_maps line the tool cannot read is not known not to
# be hugetlbfs.  A hostile target names its hugetlbfs file (12 directories
# of 200 blanks) so that its numa_maps line, which shows each blank as
# \040, outgrows the reader's 8 KiB, while its maps line (blanks as they
# are) does not: its pages still stay where they are.
@test "--migrate-shared: a hugetlbfs file whose numa_maps line outgrows the reader stays where it is (hostile name)" {
	local mnt=$BATS_TEST_TMPDIR/huge dir blanks i line
	mkdir "$mnt"
	mount -t hugetlbfs none "$mnt"
	printf -v blanks '%*s' 200 ''
	dir=$mnt
	for i in $(seq 12); do
		dir=$dir/$blanks
		mkdir "$dir"
	done
	ln -s "$dir/f" "$BATS_TEST_TMPDIR/link"
	hugetlb_stays 2 "alloc-file 2 $BATS_TEST_TMPDIR/link"
	[ "${#HUGETLB_LINE}" -gt 8192 ]
	line=$(grep "^0*$HUGETLB_ADDR-" "/proc/$TARGET_PID/maps")
	echo "its maps line: ${#line} bytes"
	[ "${#line}" -lt 4096 ]
	[ "$(numa_nodes_of "$TARGET_PID" "$HUGETLB_ADDR")" = "1 0 0 0" ]
}

@test "6.12 contract: root without CAP_SYS_NICE: needs CAP_SYS_NICE (EPERM), target unchanged" {
	target_start --threads=1
	refused "$TARGET_PID" "needs CAP_SYS_NICE (try sudo)" pmp-runas --drop=cap_sys_nice -- "$PMP" --interleave=0-3 -p "$TARGET_PID"
	[ "$(task_policy "$TARGET_PID")" = default ]
	run --separate-stderr pmp-runas --drop=cap_sys_nice -- pmp-rawcall --nr="$PMP_NR_612" --pid="$TARGET_PID" --mode=bind --nodes=1
	[ "$output" = EPERM ]
}

@test "6.12 contract: uid 1000 with CAP_SYS_NICE against root's process: ptrace denial (EACCES)" {
	target_start
	refused "$TARGET_PID" "not allowed to access pid $TARGET_PID (ptrace access mode check; see PERMISSIONS in pidmempolicy(8))" \
		pmp-runas --uid=1000 --keep=cap_sys_nice -- "$PMP" --membind=1 -p "$TARGET_PID"
	[ "$(task_policy "$TARGET_PID")" = default ]
	run pmp-runas --uid=1000 --keep=cap_sys_nice -- pmp-rawcall --nr="$PMP_NR_612" --pid="$TARGET_PID" --mode=bind --nodes=1
	[ "$output" = EACCES ]
}

@test "6.12 contract: the same user with CAP_SYS_NICE on its own process, all threads: allowed" {
	target_start --threads=2 -- pmp-runas --uid=1000 --
	run --separate-stderr pmp-runas --uid=1000 --keep=cap_sys_nice -- "$PMP" -a --membind=1 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 0 ]
	every_thread_has "$TARGET_PID" bind:1
}

@test "6.12 contract: a kernel thread (kthreadd) is refused (EPERM) and named as one" {
	run --separate-stderr "$PMP" --interleave=0-3 -p 2
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid 2 (kthreadd): pid 2 is a kernel thread; its policy cannot be changed" ]
	run pmp-rawcall --nr="$PMP_NR_612" --pid=2 --mode=bind --nodes=1
	[ "$output" = EPERM ]
}

@test "6.12 contract: flags != 0 is EINVAL before anything, pidfd -1 is EBADF" {
	run pmp-rawcall --nr="$PMP_NR_612" --fd=-1 --mode=default --flags=1
	[ "$output" = EINVAL ]
	run pmp-rawcall --nr="$PMP_NR_612" --fd=-1 --mode=default
	[ "$output" = EBADF ]
}

@test "6.12 contract: a zombie has exited: refused (ESRCH), exit 1" {
	target_start
	zombie=$(target_cmd zombie)
	wait_until 5 test "$(cut -d' ' -f3 /proc/$zombie/stat)" = Z
	refused "$zombie" "pid $zombie has exited" "$PMP" --interleave=0-3 -p "$zombie"
	run pmp-rawcall --nr="$PMP_NR_612" --pid="$zombie" --mode=bind --nodes=1
	[ "$output" = ESRCH ]
}

@test "6.12 contract: target's cpuset allows mems 0-1, node 3 asked: names its Mems_allowed_list" {
	mkdir "$CG"
	echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control
	echo 0-1 >"$CG/cpuset.mems"
	target_start --threads=2
	echo "$TARGET_PID" >"$CG/cgroup.procs"
	grep -q '^Mems_allowed_list:.*0-1$' "/proc/$TARGET_PID/status"
	refused "$TARGET_PID" "nodes 3 not allowed for pid $TARGET_PID (its Mems_allowed_list: 0-1)" "$PMP" --membind=3 -p "$TARGET_PID"
	every_thread_has "$TARGET_PID" default
	# interleave 0-3 is clipped to the target's cpuset, in every thread
	run --separate-stderr "$PMP" -a --interleave=0-3 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	every_thread_has "$TARGET_PID" interleave:0-1
}

@test "6.12 contract: the caller's own cpuset does not limit the nodes: the target's does" {
	mkdir "$CG"
	echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control
	echo 0 >"$CG/cpuset.mems"
	target_start --threads=1
	run --separate-stderr sh -c "echo \$\$ > $CG/cgroup.procs && exec $PMP -a --membind=3 -p $TARGET_PID"
	echo "$stderr"
	[ "$status" -eq 0 ]
	every_thread_has "$TARGET_PID" bind:3
}

@test "6.12: the default picks the verified syscall: never a ptrace(2) call (seccomp), --json says so" {
	target_start --threads=2
	# ptrace(2) is 101 on x86_64: the filter kills the tool if it calls it
	# (LeakSanitizer's check at exit would call it too: off)
	export ASAN_OPTIONS=detect_leaks=0
	# (the positive control: its tracing process dies of it, before any change)
	run --separate-stderr pmp-seccomp --deny=101 -- "$PMP" --backend=ptrace --membind=2 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[[ $stderr == *": ptrace injection failed: the tracing process ended before the thread was changed" ]]
	[ "$(task_policy "$TARGET_PID")" = default ]
	run --separate-stderr pmp-seccomp --deny=101 -- "$PMP" --json -a --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(jq -r .backend <<<"$output")" = syscall ]
	[ "$(jq -r .totals.done <<<"$output")" = 3 ]
	target_threads_have interleave:0-3
}
