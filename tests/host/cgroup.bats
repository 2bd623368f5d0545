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
		rmdir "$CG2/system.slice/demo.service" "$CG2/system.slice" \
			"$CG2/shop.slice/shop-web.slice/web.service" "$CG2/shop.slice/shop-web.slice" \
			"$CG2/shop.slice" 2>/dev/null || true
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

@test "--cgroup with -p: a process named both ways is acted on once, where -p named it" {
	run --separate-stderr "$PMP" -v --backend=ptrace -p "$OUTSIDE,$INSIDE" --cgroup="$CG" --interleave=0
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 4 ]
	# --cgroup implies -a: the threads are named as threads
	[ "${lines[0]}" = "set tid $OUTSIDE (sleep) of pid $OUTSIDE to interleave:0 (was default)" ]
	[ "${lines[1]}" = "set tid $INSIDE (sleep) of pid $INSIDE to interleave:0 (was default)" ]
	[ "${lines[-1]}" = "2 set, 0 failed, 0 exited" ]
	# only named by -p, the subtree has still a process: no "has no processes"
	run --separate-stderr "$PMP" -p "$INSIDE" --cgroup="$CG" --membind=0
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

# in_systemd_layout COMMAND...: COMMAND in a mount namespace of its own in
# which /sys/fs/cgroup is the cgroup2 file system of $CG2 and /run is empty
# but for /run/systemd/system when SYSTEMD=1, as on a host booted with
# systemd.  The tool is the product's: nothing in it knows of the test.
in_systemd_layout() {
	unshare -m bash -c '
		mount --make-rprivate / &&
		mount -t tmpfs none /run &&
		{ [ "$SYSTEMD" != 1 ] || mkdir -p /run/systemd/system; } &&
		mount -t cgroup2 none /sys/fs/cgroup || exit 99
		exec "$@"' _ "$@"
}

@test "--unit: the unit's cgroup as systemd lays it out, in its slice, in slices of slices" {
	require_fact "unshare(1) cannot make a mount namespace here" unshare -m true
	mkdir -p "$CG2/system.slice/demo.service" "$CG2/shop.slice/shop-web.slice/web.service"
	echo "$OUTSIDE" >"$CG2/shop.slice/shop-web.slice/web.service/cgroup.procs"
	echo "$INSIDE" >"$CG2/system.slice/demo.service/cgroup.procs"
	SYSTEMD=1 run --separate-stderr in_systemd_layout "$PMP" -v --unit=demo --interleave=0
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "1 set, 0 failed, 0 exited" ]
	[ "$(task_policy "$INSIDE" "$INSIDE")" = interleave:0 ]
	[ "$(task_policy "$OUTSIDE" "$OUTSIDE")" = default ]
	SYSTEMD=1 run --separate-stderr in_systemd_layout "$PMP" --json --unit=web.service --membind=0
	[ "$status" -eq 0 ]
	[ "$(jq -r '.threads[0].pid' <<<"$output")" = "$OUTSIDE" ]
	# a slice is a unit too: its whole subtree
	SYSTEMD=1 run --separate-stderr in_systemd_layout "$PMP" --show=processes --raw --noheadings -o pid \
		--unit=shop.slice
	[ "$output" = "$OUTSIDE" ]
}

@test "--unit: refused with one line where systemd does not run, for a unit it has not, for a name that is none" {
	require_fact "unshare(1) cannot make a mount namespace here" unshare -m true
	SYSTEMD=0 run --separate-stderr in_systemd_layout "$PMP" --unit=demo --interleave=0
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "pidmempolicy: --unit=demo: systemd is not running here (no /run/systemd/system); name the cgroup with --cgroup=PATH" ]
	SYSTEMD=1 run --separate-stderr in_systemd_layout "$PMP" --unit=nosuch --interleave=0
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: --unit=nosuch: systemd has no cgroup for nosuch.service under /sys/fs/cgroup (not loaded, or not running)" ]
	SYSTEMD=1 run --separate-stderr in_systemd_layout "$PMP" --unit=multi-user.target --interleave=0
	[ "$stderr" = "pidmempolicy: --unit=multi-user.target: a target unit has no processes of its own (a service, scope, slice, socket, mount or swap has)" ]
	SYSTEMD=1 run --separate-stderr in_systemd_layout "$PMP" --unit=../x --interleave=0
	[ "$stderr" = "pidmempolicy: --unit=../x: not a systemd unit name" ]
	[ "$(task_policy "$INSIDE" "$INSIDE")" = default ]
	bad_usage "one --cgroup or --unit may be given" --unit=a --cgroup="$CG" --interleave=0
}
