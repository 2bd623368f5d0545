#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGINT, SIGTERM and SIGHUP end a run at a thread boundary: every thread
# has the old policy or the new one, none is left traced or stopped, one
# line on stderr says how far the run got, a --json document is closed
# with "interrupted": true, and the tool dies of the signal (128 + N).
#
# The target is pmp-threads with thousands of idle threads; the signal is
# sent once the walk is provably under way (an early thread is set) and
# thousands of threads are still ahead of it.  A shell runs
# background commands with SIGINT ignored, so the tool is started through
# env --default-signal.

load helpers

PMP_THREADS=$PMP_HELPER_DIR/pmp-threads

setup() {
	need_ptrace_arch
	env --default-signal=INT true 2>/dev/null || skip "env has no --default-signal"
}

teardown() {
	[ -z "${TOOL_PID:-}" ] || kill -KILL "$TOOL_PID" 2>/dev/null || true
	[ -z "${THREADS_PID:-}" ] || kill -KILL "$THREADS_PID" 2>/dev/null || true
	[ -z "${THREADS_W:-}" ] || eval "exec $THREADS_W>&-"
	wait 2>/dev/null || true
}

# threads_start N: pmp-threads with N idle threads; THREADS_PID, TIDS.
threads_start() {
	local dir=$BATS_TEST_TMPDIR/threads line
	mkdir -p "$dir"
	mkfifo "$dir/in"
	exec {THREADS_W}<>"$dir/in"
	"$PMP_THREADS" "$1" <"$dir/in" >"$dir/out" 3>&- &
	THREADS_PID=$!
	for _ in $(seq 200); do
		read -r line <"$dir/out" 2>/dev/null && [ -n "$line" ] && break
		sleep 0.05
	done
	[ "$line" = "ready $THREADS_PID" ]
	mapfile -t TIDS < <(ls "/proc/$THREADS_PID/task" | sort -n)
	[ "${#TIDS[@]}" -eq $(($1 + 1)) ]
}

# tool_start ARGS...: the tool in the background, SIGINT at its default,
# stdout and stderr to files; TOOL_PID.
tool_start() {
	env --default-signal=INT "$PMP" "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	TOOL_PID=$!
}

# until_set TID: wait until thread TID of the target has left the default
# policy (the walk is past it), at most 20 s.  The read is a builtin: a
# fork per look lags on a loaded machine, and the walk must still have
# thousands of threads ahead of it when the signal lands.
until_set() {
	local _addr policy
	for _ in $(seq 4000); do
		read -r _addr policy _ <"/proc/$THREADS_PID/task/$1/numa_maps" || return 1
		[ "$policy" != default ] && return 0
		sleep 0.005
	done
	return 1
}

# until_bytes N: wait until the tool has written N bytes to stdout.
until_bytes() {
	for _ in $(seq 4000); do
		[ "$(stat -c %s "$BATS_TEST_TMPDIR/out")" -ge "$1" ] && return 0
		sleep 0.005
	done
	return 1
}

# tool_end: wait for the tool; its status in $status, stderr in $stderr.
tool_end() {
	status=0
	wait "$TOOL_PID" || status=$?
	TOOL_PID=
	stderr=$(cat "$BATS_TEST_TMPDIR/err")
	echo "status=$status stderr=[$stderr]"
}

# every_thread_sound POLICY: each thread has POLICY or default; none is
# traced or stopped; prints how many have POLICY.  One awk for all the
# threads: thousands of forks would take minutes on a loaded machine.
every_thread_sound() {
	local dir=/proc/$THREADS_PID/task
	awk -v want="$1" '
		FILENAME ~ /numa_maps$/ && FNR == 1 {
			if ($2 == want) n++
			else if ($2 != "default") { print FILENAME " has " $2 > "/dev/stderr"; bad = 1 }
			nextfile
		}
		FILENAME ~ /status$/ && /^TracerPid:/ {
			if ($2 != 0) { print FILENAME " traced by " $2 > "/dev/stderr"; bad = 1 }
			nextfile
		}
		FILENAME ~ /stat$/ {
			sub(/^.*\) /, "")
			if ($1 ~ /^[Tt]$/) { print FILENAME " stopped" > "/dev/stderr"; bad = 1 }
			nextfile
		}
		END { if (bad) exit 1; print n + 0 }' "$dir"/*/numa_maps "$dir"/*/status "$dir"/*/stat
}

# interrupted_line VERB LEFT: the stderr line's N (of M threads) in SET_N,
# checking M and the rest of its words.
interrupted_line() {
	local re="^pidmempolicy: interrupted: ([0-9]+) of ([0-9]+) threads $1, ([0-9]+) $2\$"
	local last=${stderr##*$'\n'}
	[[ $last =~ $re ]]
	SET_N=${BASH_REMATCH[1]}
	[ "${BASH_REMATCH[2]}" -eq "${#TIDS[@]}" ]
	[ "$((BASH_REMATCH[1] + BASH_REMATCH[3]))" -eq "${#TIDS[@]}" ]
	[ "$SET_N" -gt 0 ] && [ "$SET_N" -lt "${#TIDS[@]}" ]
}

@test "SIGINT mid-run (ptrace, -a): 130, each thread old or new, the line counts them, none traced" {
	threads_start 6000
	tool_start --backend=ptrace -a --interleave=0 -p "$THREADS_PID"
	until_set "${TIDS[100]}"
	kill -INT "$TOOL_PID"
	tool_end
	[ "$status" -eq 130 ]
	interrupted_line set "left unchanged"
	[ "$(every_thread_sound interleave:0)" -eq "$SET_N" ]
	[ "$(grep -c . <<<"$stderr")" -eq 1 ]
}

@test "SIGTERM mid-run (ptrace, -a, --json): 143, the document closed and valid, interrupted true" {
	threads_start 6000
	tool_start --backend=ptrace --json -a --membind=0 -p "$THREADS_PID"
	until_set "${TIDS[100]}"
	kill -TERM "$TOOL_PID"
	tool_end
	[ "$status" -eq 143 ]
	interrupted_line set "left unchanged"
	[ "$(every_thread_sound bind:0)" -eq "$SET_N" ]
	jq -e '.interrupted == true and .signal == "SIGTERM" and .exit_status == 143' "$BATS_TEST_TMPDIR/out"
	[ "$(jq '.totals.done' "$BATS_TEST_TMPDIR/out")" -eq "$SET_N" ]
	[ "$(jq '[.threads[] | select(.result == "set")] | length' "$BATS_TEST_TMPDIR/out")" -eq "$SET_N" ]
	[ "$(jq '.totals.done + .totals.not_reached' "$BATS_TEST_TMPDIR/out")" -eq "${#TIDS[@]}" ]
}

@test "SIGINT mid-run with -v: the last stdout line is whole, the summary follows" {
	threads_start 6000
	tool_start --backend=ptrace -v -a --localalloc -p "$THREADS_PID"
	until_set "${TIDS[100]}"
	kill -INT "$TOOL_PID"
	tool_end
	[ "$status" -eq 130 ]
	interrupted_line set "left unchanged"
	[ "$(tail -c 1 "$BATS_TEST_TMPDIR/out" | od -An -c | tr -d ' ')" = '\n' ]
	[ "$(tail -n 1 "$BATS_TEST_TMPDIR/out")" = "$SET_N set, 0 failed, 0 exited" ]
	[ "$(grep -c '^set tid ' "$BATS_TEST_TMPDIR/out")" -eq "$SET_N" ]
}

@test "SIGHUP during a dry run (--json): 129, a valid document, nothing changed" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	threads_start 6000
	tool_start -n --json -a --interleave=0 -p "$THREADS_PID"
	until_bytes 20000
	kill -HUP "$TOOL_PID"
	tool_end
	[ "$status" -eq 129 ]
	interrupted_line "would be set" "not looked at"
	jq -e '.interrupted == true and .action == "dry-run"' "$BATS_TEST_TMPDIR/out"
	[ "$(every_thread_sound interleave:0)" -eq 0 ]
}

# The table is drawn when its widths are known, at the end; the JSON
# document is written as the threads are read, so it shows the signal
# landing mid-run.
@test "SIGINT during --show: 130, the threads read so far, the line" {
	threads_start 6000
	tool_start --show --json -a -p "$THREADS_PID"
	until_bytes 20000
	kill -INT "$TOOL_PID"
	tool_end
	[ "$status" -eq 130 ]
	interrupted_line shown "not read"
	jq -e '.interrupted == true and .action == "show"' "$BATS_TEST_TMPDIR/out"
	[ "$(jq '.threads | length' "$BATS_TEST_TMPDIR/out")" -eq "$SET_N" ]
	[ "$(jq '.processes[0].threads' "$BATS_TEST_TMPDIR/out")" -eq "$SET_N" ]
}

@test "a signal ignored by the caller's shell stays ignored (nohup)" {
	threads_start 3000
	nohup "$PMP" --backend=ptrace -a --localalloc -p "$THREADS_PID" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	TOOL_PID=$!
	until_set "${TIDS[100]}"
	kill -HUP "$TOOL_PID"
	tool_end
	[ "$status" -eq 0 ]
	[ "$(every_thread_sound local)" -eq "${#TIDS[@]}" ]
}
