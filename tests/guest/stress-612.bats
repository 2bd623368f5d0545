#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Stress of the 6.12 port (tests/kernel/patches/linux-6.12/): a caller flips
# the task policy of every thread of a target 20,000 times, while the target
# faults memory in on several threads, reads its own policy, and creates and
# ends threads. Proves: no Oops/BUG/WARNING/lockup (run-guest.sh fails the run
# on any of them in the serial log), no hang (every step is bounded), the
# target is alive and answers, and no numa_policy object is leaked (the old
# policies are put by task_work in the target's context: all of them must be
# gone once the target has exited).

load lib
bats_require_minimum_version 1.5.0

# 20,000 calls take a fraction of a second under TCG (1,000,000: ~10-20 s), so
# up to 1,000,000 are made, to overlap the target's faulting, policy reads and
# thread churn for a while, but for at most STRESS_SECONDS; at least MIN_CALLS
# must be made in that time (a KASAN + lockdep kernel makes ~1,700 a second).
CALLS=1000000
MIN_CALLS=20000
STRESS_SECONDS=60
# Objects of the numa_policy cache that may differ before/after for reasons
# that are not this test's (other processes, e.g. bats itself, numa_maps
# readers). Measured after a shrink of the cache, so per-CPU slabs do not count.
LEAK_TOLERANCE=16

setup() {
	only_on patched 6.12
	export PIDMEMPOLICY_SYSCALL_NR=$PMP_NR_612
}

policy_objects() {
	echo 1 >/sys/kernel/slab/numa_policy/shrink 2>/dev/null || true
	slab_objects numa_policy
}

@test "stress: $MIN_CALLS to $CALLS policy flips (${STRESS_SECONDS}s at most) over all threads while they fault, read their policy and churn" {
	[ -r /proc/slabinfo ]
	before=$(policy_objects)
	echo "numa_policy objects before: $before"

	target_start --threads=4
	[ "$(target_cmd "faulters 4 2")" = "ok 0" ]
	[[ $(target_cmd "churn on") == "ok "* ]]

	# The caller, bounded: pmp-stress stops after STRESS_SECONDS (status 3 if
	# it made fewer than MIN_CALLS calls by then), timeout(1) as a backstop.
	timeout -k 5 $((STRESS_SECONDS + 60)) pmp-stress --pid="$TARGET_PID" --calls="$CALLS" \
		--min-calls="$MIN_CALLS" --seconds="$STRESS_SECONDS" \
		>"$BATS_TEST_TMPDIR/stress.out" 2>&1 &
	spid=$!
	# Meanwhile the target's threads read their own policy.
	queries=0
	while kill -0 "$spid" 2>/dev/null; do
		for i in 0 1 2 3 4; do
			reply=$(target_cmd "policy-thread $i")
			[[ $reply == mode=* ]] || { echo "policy-thread $i: $reply"; false; }
			queries=$((queries + 1))
		done
		addr=$(target_cmd "alloc-thread $((queries % 5)) 1")
		target_cmd "free $addr" >/dev/null
	done
	srv=0
	wait "$spid" || srv=$?
	cat "$BATS_TEST_TMPDIR/stress.out"
	echo "pmp-stress status $srv; $queries policy queries by the target meanwhile"
	echo "# $(cat "$BATS_TEST_TMPDIR/stress.out"); $queries policy queries meanwhile" >&3
	[ "$srv" -eq 0 ]
	calls=$(sed -n 's/^pmp-stress: calls=\([0-9]*\) .*/\1/p' "$BATS_TEST_TMPDIR/stress.out")
	ok=$(sed -n 's/.* ok=\([0-9]*\) .*/\1/p' "$BATS_TEST_TMPDIR/stress.out")
	[ "$calls" -ge "$MIN_CALLS" ]
	[ "$ok" -ge $((calls / 2)) ]
	[ "$queries" -gt 0 ]

	# The target is alive, answers, and its threads did fault all along.
	[ "$(target_cmd ping)" = pong ]
	[[ $(target_cmd "churn off") == "ok "* ]]
	loops=$(target_cmd "faulters 0 1")
	echo "faulter loops: ${loops#ok }"
	[ "${loops#ok }" -gt 0 ]
	for i in 0 1 2 3 4; do
		[[ $(target_cmd "policy-thread $i") == mode=* ]]
	done
	# One last policy for all, then check every thread has it.
	run --separate-stderr "$PMP_TOOL" -a --membind=2 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	for t in $(ls "/proc/$TARGET_PID/task"); do
		[ "$(task_policy "$TARGET_PID" "$t")" = bind:2 ]
	done
	during=$(policy_objects)
	echo "numa_policy objects with the target still alive: $during"

	pid=$TARGET_PID
	target_stop
	wait_until 10 test ! -e "/proc/$pid"
	after=$(policy_objects)
	echo "numa_policy objects after the target exited: $after (before: $before, tolerance $LEAK_TOLERANCE)"
	echo "# faulter loops ${loops#ok }; numa_policy objects: before $before, target alive $during, after exit $after" >&3
	d=$((after - before))
	[ "${d#-}" -le "$LEAK_TOLERANCE" ]
}

@test "stress: a target sleeping in the kernel keeps the old policies until it exits, then frees all" {
	before=$(policy_objects)
	target_start --threads=2
	# The workers sleep in futex_wait the whole time: no return to user mode,
	# so every old policy waits in a task_work.
	timeout -k 5 120 pmp-stress --pid="$TARGET_PID" --calls=3000 --seconds=100
	held=$(policy_objects)
	echo "numa_policy objects: before $before, while held $held"
	[ "$held" -gt $((before + 1000)) ]
	[ "$(target_cmd ping)" = pong ]
	pid=$TARGET_PID
	target_stop
	wait_until 10 test ! -e "/proc/$pid"
	after=$(policy_objects)
	echo "after exit: $after"
	echo "# numa_policy objects: before $before, held in task_works $held, after exit $after" >&3
	d=$((after - before))
	[ "${d#-}" -le "$LEAK_TOLERANCE" ]
}
