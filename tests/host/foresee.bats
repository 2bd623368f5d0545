#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# A dry run of the ptrace backend foresees what a real run of it does: the
# same refusal in the same words ("would fail to set" for "failed to
# set"), and no refusal the real run would not make (no CAP_SYS_NICE: a
# thread setting its own policy needs none).  And a process in a frozen
# cgroup is refused up front, in one line, without waiting for it to stop.

load helpers

PMP_HOLD=$PMP_HELPER_DIR/pmp-hold
PMP_RUNAS=$PMP_HELPER_DIR/pmp-runas
PMP_THREADS=$PMP_HELPER_DIR/pmp-threads
YAMA=/proc/sys/kernel/yama/ptrace_scope
USER_UID=${PMP_TEST_UID:-1000}
case $(uname -m) in		# set_mempolicy(2)
aarch64) NR_SET_MEMPOLICY=237 ;;
*) NR_SET_MEMPOLICY=238 ;;
esac

setup() {
	need_ptrace_arch
	BG_PIDS=()
}

teardown() {
	[ "${#BG_PIDS[@]}" -eq 0 ] || kill -KILL "${BG_PIDS[@]}" 2>/dev/null || true
	[ -z "${YAMA_WAS:-}" ] || echo "$YAMA_WAS" >"$YAMA"
	if [ -n "${FROZEN_CG:-}" ]; then
		thaw "$FROZEN_CG"
		kill -KILL "${FROZEN_PIDS[@]}" 2>/dev/null || true
		wait 2>/dev/null || true
		for _ in $(seq 50); do rmdir "$FROZEN_CG" 2>/dev/null && break; sleep 0.1; done
	fi
	[ -z "${THREADS_W:-}" ] || eval "exec $THREADS_W>&-"
	wait 2>/dev/null || true
}

# background CMD...: start it, its pid in BG (and killed in teardown).
background() {
	"$@" >/dev/null 2>&1 3>&- &
	BG=$!
	BG_PIDS+=("$BG")
	sleep 0.2
}

# dry_as_real ARGS...: a real run and a dry run with ARGS (--backend=ptrace
# added): the same status and the same failure lines, word for word but
# for "would fail to set" / "failed to set".  The real run's lines in REAL.
dry_as_real() {
	run --separate-stderr "$PMP" --backend=ptrace "$@"
	local real_status=$status
	REAL=$stderr
	echo "real: status=$status stderr=[$stderr]"
	run --separate-stderr "$PMP" --backend=ptrace -n "$@"
	echo "dry:  status=$status stderr=[$stderr]"
	[ "$status" -eq "$real_status" ]
	[ -n "$REAL" ]
	[ "${stderr//would fail to set/failed to set}" = "$REAL" ]
}

task_policy() {
	awk 'NR == 1 { print $2; exit }' "/proc/$1/task/$2/numa_maps"
}

@test "an unprivileged user's dry run on its own process: would set, exit 0; the real run sets it" {
	require_fact "runs the tool as another user: needs CAP_SETUID (run as root)" has_cap 7
	[ -r "$YAMA" ] && [ "$(cat "$YAMA")" != 0 ] && skip "Yama ptrace_scope $(cat "$YAMA") forbids attaching to a non-descendant"
	background "$PMP_RUNAS" --uid="$USER_UID" -- sleep 300
	run --separate-stderr "$PMP_RUNAS" --uid="$USER_UID" -- "$PMP" --backend=ptrace -n --interleave=0 -p "$BG"
	echo "status=$status stdout=[$output] stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ "$output" = "would set pid $BG (sleep) to interleave:0" ]
	[ -z "$stderr" ]
	run --separate-stderr "$PMP_RUNAS" --uid="$USER_UID" -- "$PMP" --backend=ptrace --interleave=0 -p "$BG"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$BG" "$BG")" = interleave:0 ]
}

@test "an unprivileged user's dry run on root's process foresees the refused attach" {
	require_fact "runs the tool as another user: needs CAP_SETUID (run as root)" has_cap 7
	background sleep 300
	run --separate-stderr "$PMP_RUNAS" --uid="$USER_UID" -- "$PMP" --backend=ptrace --interleave=0 -p "$BG"
	local real_status=$status real=$stderr
	echo "real: status=$status stderr=[$stderr]"
	run --separate-stderr "$PMP_RUNAS" --uid="$USER_UID" -- "$PMP" --backend=ptrace -n --interleave=0 -p "$BG"
	echo "dry:  status=$status stderr=[$stderr]"
	[ "$status" -eq 1 ] && [ "$real_status" -eq 1 ]
	[ "${stderr//would fail to set/failed to set}" = "$real" ]
	[[ $real == *"not allowed to trace tid $BG (EPERM; "* ]]
}

@test "dry run == real run: a seccomp-filtered target" {
	background "$PMP_SECCOMP" --deny=$NR_SET_MEMPOLICY -- sleep 300
	dry_as_real --membind=0 -p "$BG"
	[[ $REAL == *"runs under a seccomp filter"* ]]
	[ "$(task_policy "$BG" "$BG")" = default ]
}

@test "dry run == real run: a target already traced" {
	background sleep 300
	local target=$BG
	"$PMP_HOLD" "$target" >"$BATS_TEST_TMPDIR/hold.out" 3>&- &
	BG_PIDS+=("$!")
	local tracer=$!
	for _ in $(seq 100); do
		[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$target/status")" = "$tracer" ] && break
		sleep 0.05
	done
	dry_as_real --membind=0 -p "$target"
	[[ $REAL == *"is already traced by pid $tracer"* ]]
}

@test "dry run == real run: the tool itself" {
	run --separate-stderr sh -c 'exec "$1" --backend=ptrace --membind=0 -p $$' sh "$PMP"
	local real_status=$status real=$stderr
	run --separate-stderr sh -c 'exec "$1" --backend=ptrace -n --membind=0 -p $$' sh "$PMP"
	echo "real=[$real] dry=[$stderr]"
	[ "$status" -eq 1 ] && [ "$real_status" -eq 1 ]
	[[ $real == *"is pidmempolicy itself; the ptrace backend cannot trace it" ]]
	# the two runs are two processes: their pids differ
	[ "$(sed "s/would fail to set/failed to set/; s/[0-9][0-9]*/N/g" <<<"$stderr")" = "$(sed "s/[0-9][0-9]*/N/g" <<<"$real")" ]
}

@test "dry run == real run: a kernel thread (kthreadd)" {
	dry_as_real --membind=0 -p 2
	[[ $REAL == *"pid 2 is a kernel thread; its policy cannot be changed" ]]
}

@test "dry run == real run: Yama ptrace_scope 3 refuses every attach" {
	[ -e "$YAMA" ] || skip "no Yama on this kernel ($YAMA absent)"
	background sleep 300
	YAMA_WAS=$(cat "$YAMA")
	echo 3 >"$YAMA" || skip "cannot write $YAMA"
	dry_as_real --membind=0 -p "$BG"
	[[ $REAL == *"Yama ptrace_scope is 3"* ]]
}

# ---- frozen cgroups ----------------------------------------------------------

thaw() {
	if [ -e "$1/cgroup.freeze" ]; then
		echo 0 >"$1/cgroup.freeze" 2>/dev/null || true
	else
		echo THAWED >"$1/freezer.state" 2>/dev/null || true
	fi
}

# frozen_threads_start V2ROOT|V1ROOT: pmp-threads with 20 threads in a new
# child cgroup of the root given, frozen; FROZEN_CG, FROZEN_PIDS,
# THREADS_PID.
frozen_threads_start() {
	FROZEN_CG=$1/pmp-frozen-$$-$BATS_TEST_NUMBER
	mkdir "$FROZEN_CG" || skip "cannot create a cgroup under $1"
	local dir=$BATS_TEST_TMPDIR/threads line
	mkdir -p "$dir"
	mkfifo "$dir/in"
	exec {THREADS_W}<>"$dir/in"
	"$PMP_THREADS" 20 <"$dir/in" >"$dir/out" 3>&- &
	THREADS_PID=$!
	FROZEN_PIDS=("$THREADS_PID")
	for _ in $(seq 200); do
		read -r line <"$dir/out" 2>/dev/null && [ -n "$line" ] && break
		sleep 0.05
	done
	[ "$line" = "ready $THREADS_PID" ]
	echo "$THREADS_PID" >"$FROZEN_CG/cgroup.procs"
	if [ -e "$FROZEN_CG/cgroup.freeze" ]; then
		echo 1 >"$FROZEN_CG/cgroup.freeze"
		for _ in $(seq 100); do grep -qx 'frozen 1' "$FROZEN_CG/cgroup.events" && return 0; sleep 0.05; done
	else
		echo FROZEN >"$FROZEN_CG/freezer.state"
		for _ in $(seq 100); do grep -qx FROZEN "$FROZEN_CG/freezer.state" && return 0; sleep 0.05; done
	fi
	return 1
}

# frozen_refused HINT: a real run on the frozen process, bounded, and a dry
# run: one line each, naming the cgroup; nothing changed, nothing traced.
frozen_refused() {
	local line="pidmempolicy: failed to set pid $THREADS_PID (pmp-threads): pid $THREADS_PID is in the frozen cgroup $FROZEN_CG; thaw it first ($1)"
	local start=$SECONDS
	run --separate-stderr timeout 20 "$PMP" --backend=ptrace -a --membind=0 -p "$THREADS_PID"
	echo "status=$status stderr=[$stderr] in $((SECONDS - start)) s"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$line" ]
	[ $((SECONDS - start)) -lt 5 ]
	run --separate-stderr "$PMP" --backend=ptrace -n -a --membind=0 -p "$THREADS_PID"
	[ "$status" -eq 1 ]
	[ "${stderr//would fail to set/failed to set}" = "$line" ]
	run --separate-stderr "$PMP" --backend=ptrace --json -a --membind=0 -p "$THREADS_PID"
	[ "$(jq '[.threads[] | select(.result == "failed")] | length' <<<"$output")" -eq 21 ]
	thaw "$FROZEN_CG"
	sleep 0.2
	local t
	for t in $(ls "/proc/$THREADS_PID/task"); do
		[ "$(task_policy "$THREADS_PID" "$t")" = default ]
		[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$THREADS_PID/task/$t/status")" = 0 ]
	done
}

@test "a process in a frozen cgroup v2 is refused up front, in one line naming the cgroup" {
	local root
	root=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
	[ -n "$root" ] || skip "no cgroup2 mounted"
	[ -w "$root" ] || skip "$root is not writable"
	frozen_threads_start "$root"
	[ -e "$FROZEN_CG/cgroup.freeze" ] || skip "no cgroup.freeze in $FROZEN_CG"
	frozen_refused "echo 0 > $FROZEN_CG/cgroup.freeze"
}

@test "a process in a frozen cgroup v1 freezer is refused up front" {
	local root=/sys/fs/cgroup/freezer
	[ -e "$root/freezer.state" ] || [ -e "$root/cgroup.procs" ] || skip "no cgroup v1 freezer at $root"
	[ -w "$root" ] || skip "$root is not writable"
	frozen_threads_start "$root"
	frozen_refused "echo THAWED > $FROZEN_CG/freezer.state"
}
