#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# --cgroup takes a cgroup v2 subtree, as systemd slices and Kubernetes pods
# keep their processes in leaf cgroups; it refuses what is not on a
# cgroup2 file system (a v1 controller's root holds every process), and
# says when a subtree has no process.  The host may have only cgroup v1
# (as this project's CI host does): a cgroup2 file system is mounted for
# the test.  tests/guest/tool-more.bats proves the same at /sys/fs/cgroup.

load helpers

# mount_cgroup2 DIR: a cgroup2 file system at DIR.
mount_cgroup2() {
	mkdir -p "$1" && mount -t cgroup2 none "$1" 2>/dev/null || return 1
}

setup() {
	CG2=$BATS_TEST_TMPDIR/cg2
	require_fact "cannot mount a cgroup2 file system here (needs root)" mount_cgroup2 "$CG2"
	need_ptrace_arch
	CG=$CG2/pmp-host-$$
	mkdir -p "$CG/slice/leaf" "$CG/empty/deeper"
	sleep 300 3>&- &
	INSIDE=$!
	sleep 300 3>&- &
	OUTSIDE=$!
	echo "$INSIDE" >"$CG/slice/leaf/cgroup.procs"
}

teardown() {
	kill -KILL "${INSIDE:-}" "${OUTSIDE:-}" 2>/dev/null || true
	wait 2>/dev/null || true
	if [ -n "${CG2:-}" ] && mountpoint -q "$CG2"; then
		rmdir "$CG/slice/leaf" "$CG/slice" "$CG/empty/deeper" "$CG/empty" "$CG" 2>/dev/null || true
		umount "$CG2"
	fi
}

@test "--cgroup: a process in a leaf cgroup below the one named is set; one outside is not" {
	run --separate-stderr "$PMP" -v --cgroup="$CG" --interleave=0
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[-1]}" = "1 set, 0 failed, 0 exited" ]
	[ "$(task_policy "$INSIDE" "$INSIDE")" = interleave:0 ]
	[ "$(task_policy "$OUTSIDE" "$OUTSIDE")" = default ]
	# a trailing slash names the same cgroup
	run --separate-stderr "$PMP" --json --cgroup="$CG/slice/" --membind=0
	[ "$status" -eq 0 ]
	[ "$(jq -r '.threads[0].pid' <<<"$output")" = "$INSIDE" ]
}

@test "--cgroup: a subtree without a process says so, exit 1" {
	run --separate-stderr "$PMP" --cgroup="$CG/empty" --interleave=0
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "pidmempolicy: cgroup $CG/empty has no processes (nor has any cgroup below it)" ]
}

@test "--cgroup: a directory not on a cgroup2 file system is refused, even with a cgroup.procs (a FIFO)" {
	local fake=$BATS_TEST_TMPDIR/fake
	mkdir "$fake"
	mkfifo "$fake/cgroup.procs"
	run --separate-stderr timeout 10 "$PMP" --cgroup="$fake" --interleave=0
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: $fake is not a cgroup v2 directory (not on a cgroup2 file system)" ]
	[ "$(task_policy "$INSIDE" "$INSIDE")" = default ]
}
