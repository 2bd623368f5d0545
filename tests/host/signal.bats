#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The signal engine (src/sigengine.h): with -a and the ptrace backend, one
# thread is stopped to put a handler in, every other thread is sent a
# real-time signal and sets its own policy in its handler.  Each test
# checks what numa_maps shows per thread, which path --json says each
# thread took, and that nothing of the engine stays in the target (the
# memfd region in its maps, the handler in SigCgt), against targets that
# use signals themselves (tests/helpers/pmp-signals.c).

load helpers

PMP_THREADS=$PMP_HELPER_DIR/pmp-threads
PMP_SIGNALS=$PMP_HELPER_DIR/pmp-signals

case $(uname -m) in
aarch64) NR_SET_MEMPOLICY=237 ;;
*) NR_SET_MEMPOLICY=238 ;;
esac

setup() {
	need_ptrace_arch
}

teardown() {
	[ -z "${TOOL_PID:-}" ] || kill -KILL "$TOOL_PID" 2>/dev/null || true
	[ -z "${T_PID:-}" ] || kill -KILL "$T_PID" 2>/dev/null || true
	[ -z "${T_W:-}" ] || eval "exec $T_W>&- $T_R>&-"
	wait 2>/dev/null || true
}

# target_start CMD...: a helper that prints "ready PID" and then answers
# lines on stdin; T_PID, T_W (its stdin), T_R (its stdout).
target_start() {
	local dir=$BATS_TEST_TMPDIR/target line
	mkdir -p "$dir"
	mkfifo "$dir/in" "$dir/out"
	exec {T_W}<>"$dir/in" {T_R}<>"$dir/out"
	"$@" <"$dir/in" >"$dir/out" 3>&- &
	T_PID=$!
	IFS= read -r -t 30 -u "$T_R" line || { echo "no ready line from $*"; return 1; }
	echo "$* -> $line"
	[ "$line" = "ready $T_PID" ]
	SIGCGT_BEFORE=$(awk '/^SigCgt:/ { print $2 }' "/proc/$T_PID/status")
}

# ask LINE: one request to the target; its answer in REPLY_LINE.
ask() {
	printf '%s\n' "$1" >&"$T_W"
	IFS= read -r -t 30 -u "$T_R" REPLY_LINE || { echo "no reply to $1"; return 1; }
	echo "$1 -> $REPLY_LINE"
}

field() {
	local re="(^| )$1=([^ ]*)"
	[[ $2 =~ $re ]] && printf '%s\n' "${BASH_REMATCH[2]}"
}

# policies: "POLICY COUNT" lines over every thread of the target, from the
# first line of each thread's numa_maps (one awk for all of them).
policies() {
	awk 'FNR == 1 { n[$2]++; nextfile } END { for (p in n) print p, n[p] }' \
		/proc/"$T_PID"/task/*/numa_maps | sort
}

# every_thread POLICY: each thread of the target shows POLICY.
every_thread() {
	local got
	got=$(policies)
	echo "policies: $got"
	[ "$got" = "$1 $(ls /proc/"$T_PID"/task | wc -l)" ]
}

# nothing_left: no region in the target's maps, its handlers as before,
# no thread traced or stopped.
nothing_left() {
	! grep -q 'memfd:pidmempolicy' "/proc/$T_PID/maps" || false
	[ "$(awk '/^SigCgt:/ { print $2 }' "/proc/$T_PID/status")" = "${1:-$SIGCGT_BEFORE}" ]
	! grep -qE '^TracerPid:[[:space:]]*[1-9]' /proc/"$T_PID"/task/*/status || false
	! grep -qE '^State:[[:space:]]*[Tt]' /proc/"$T_PID"/task/*/status || false
}

# paths: "PATH COUNT" lines of a --json run in $output.
paths() {
	jq -r '.threads | group_by(.path) | map("\(.[0].path) \(length)") | .[]' <<<"$output"
}

# set_json ARGS...: a --json run over the target; stderr in $stderr.
set_json() {
	run --separate-stderr "$PMP" --backend=ptrace -a --json "$@" -p "$T_PID"
	echo "status=$status stderr=[$stderr]"
	jq -c '.threads[] | [.tid, .result, .path, .path_why]' <<<"$output" | sort | uniq -c -f2 | head -20
}

@test "40 futex waiters: the handler goes in through one thread, 40 answer the signal, none of it stays" {
	target_start "$PMP_THREADS" --wait=futex 40
	set_json --interleave=0
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(paths)" = "$(printf 'ptrace 1\nsignal 40')" ]
	[ "$(jq -r '.threads[] | select(.path == "ptrace") | .path_why' <<<"$output")" = \
		"the signal handler was put in through it" ]
	[ "$(jq '[.threads[] | select(.path == "signal") | .delay_us >= 0 and .interrupted_call == false] | all' \
		<<<"$output")" = true ]
	[ "$(jq -c '.totals' <<<"$output")" = '{"done":41,"failed":0,"exited":0,"not_reached":0}' ]
	[ "$(jq -c '.notes' <<<"$output")" = '[]' ]
	every_thread interleave:0
	nothing_left
	# and again with another policy: the same
	set_json --membind=0
	[ "$status" -eq 0 ]
	every_thread bind:0
	nothing_left
}

@test "-v says each thread's path; a dry run says the path it would take and changes nothing" {
	target_start "$PMP_THREADS" --wait=futex 12
	run --separate-stderr "$PMP" -n -a --interleave=0 -p "$T_PID"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "would set tid $T_PID (pmp-threads) of pid $T_PID to interleave:0, by ptrace: the signal handler would be put in through it" ]
	[ "$(grep -c ', by signal$' <<<"$output")" -eq 12 ]
	every_thread default
	nothing_left
	run --separate-stderr "$PMP" -v -a --interleave=0 -p "$T_PID"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "set tid $T_PID (pmp-threads) of pid $T_PID to interleave:0 (was default), by ptrace: the signal handler was put in through it" ]
	[ "$(grep -c '^set tid [0-9]* (pmp-threads) of pid [0-9]* to interleave:0 (was default), by signal$' <<<"$output")" -eq 12 ]
	every_thread interleave:0
	nothing_left
}

# show_paths ARGS...: "TID PATH" lines of --show -o TID,PATH over the
# target, and the same of a dry run's --json with the same ARGS; the two
# must be equal.  SHOWN holds them.
show_paths() {
	run --separate-stderr "$PMP" --show --raw --noheadings -o TID,PATH "$@" -p "$T_PID"
	echo "show: status=$status stderr=[$stderr]"
	[ "$status" -eq 0 ]
	SHOWN=$(sort -n <<<"$output")
	run --separate-stderr "$PMP" -n --json --interleave=0 "$@" -p "$T_PID"
	[ "$status" -eq 0 ]
	local would
	would=$(jq -r '.threads[] | "\(.tid) \(.path)"' <<<"$output" | sort -n)
	echo "shown: $(uniq -c -f1 <<<"$SHOWN")"
	[ "$SHOWN" = "$would" ]
}

@test "--show -o PATH foresees each thread's path as a dry run does, and changes nothing" {
	target_start "$PMP_THREADS" --wait=futex 12
	show_paths -a
	[ "$(grep -c ' signal$' <<<"$SHOWN")" -eq 12 ]
	[ "$(grep -c "^$T_PID ptrace\$" <<<"$SHOWN")" -eq 1 ]
	show_paths -a --no-signal
	[ "$(grep -c ' ptrace$' <<<"$SHOWN")" -eq 13 ]
	show_paths
	[ "$SHOWN" = "$T_PID ptrace" ]
	# not in the default columns, nor in the process view
	run --separate-stderr "$PMP" --show -a -p "$T_PID"
	[[ ${lines[0]} != *PATH* ]]
	run --separate-stderr "$PMP" --show=processes -o PATH -p "$T_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: column PATH is not in --show=processes" ]
	every_thread default
	nothing_left
}

@test "--show -o PATH: threads asleep in pause, the dry run's ptrace each" {
	target_start "$PMP_THREADS" --wait=pause 12
	show_paths -a
	[ "$(grep -c ' ptrace$' <<<"$SHOWN")" -eq 13 ]
	every_thread default
	nothing_left
}

@test "--no-signal: every thread through a ptrace stop of its own, no handler put in" {
	target_start "$PMP_THREADS" --wait=futex 12
	set_json --no-signal --interleave=0
	[ "$status" -eq 0 ]
	[ "$(paths)" = "ptrace 13" ]
	[ "$(jq '[.threads[] | has("path_why")] | any' <<<"$output")" = false ]
	every_thread interleave:0
	nothing_left
	run --separate-stderr "$PMP" --backend=syscall --no-signal -a --interleave=0 -p "$T_PID"
	[ "$status" -eq 1 ]
	[ "${stderr%%$'\n'*}" = "pidmempolicy: --no-signal goes with --backend=ptrace or auto" ]
}

@test "threads asleep in pause go by ptrace: a handler would end their calls" {
	target_start "$PMP_THREADS" --wait=pause 12
	set_json --interleave=0
	[ "$status" -eq 0 ]
	[ "$(jq '[.threads[] | select(.path == "signal")] | length' <<<"$output")" -eq 0 ]
	[ "$(jq -r '[.threads[] | .path_why] | unique | .[]' <<<"$output")" = \
		"$(printf '%s\n' "in pause, which a signal handler would end" "the signal handler was put in through it")" ]
	every_thread interleave:0
	nothing_left
}

@test "blockall: every thread blocks every signal, so each goes by ptrace" {
	target_start "$PMP_SIGNALS" blockall
	set_json --interleave=0
	[ "$status" -eq 0 ]
	[ "$(jq '[.threads[] | select(.path == "signal")] | length' <<<"$output")" -eq 0 ]
	[ "$(jq '[.threads[] | select(.path_why | test("^it blocks signal [0-9]+$"))] | length' <<<"$output")" -eq 16 ]
	every_thread interleave:0
	nothing_left
	ask check
	[ "$(field ok "$REPLY_LINE")" = 1 ]
}

@test "race: the target takes the signal over with a handler of its own; every thread set, its handler kept" {
	target_start "$PMP_SIGNALS" race
	set_json --interleave=0
	[ "$status" -eq 0 ]
	every_thread interleave:0
	ask check
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	local took kept
	took=$(field took "$REPLY_LINE")
	kept=$(field kept "$REPLY_LINE")
	# it took the engine's signal (else the race was not run), and what it
	# took is still its own: the end did not put ours or the old one back
	[ "$took" -ge 1 ]
	[ "$kept" -eq "$took" ]
	! grep -q 'memfd:pidmempolicy' "/proc/$T_PID/maps" || false
	! grep -qE '^TracerPid:[[:space:]]*[1-9]' /proc/"$T_PID"/task/*/status
}

@test "altstack: the frame lands on each thread's 4 KiB sigaltstack, nothing below its stack pointer" {
	target_start "$PMP_SIGNALS" altstack
	set_json --interleave=0
	[ "$status" -eq 0 ]
	[ "$(jq '[.threads[] | select(.path == "signal")] | length' <<<"$output")" -eq 16 ]
	every_thread interleave:0
	nothing_left
	ask check
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	[ "$(field frames "$REPLY_LINE")" -eq 16 ]
	[ "$(field canary "$REPLY_LINE")" -eq 0 ]
}

@test "sealafter: threads that block every signal after their handler are not proven out of its code, so its memory stays (noted), the disposition does not" {
	target_start "$PMP_SIGNALS" sealafter
	# traced, to count the threads held: only the one that put the handler
	# in takes it out (no other thread could prove the region unused)
	# (LeakSanitizer cannot run under ptrace: a sanitizer build's leak
	# check is off for this run only)
	run --separate-stderr env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace=ptrace -e signal=none -o "$BATS_TEST_TMPDIR/trace" \
		"$PMP" --backend=ptrace -a --json --interleave=0 -p "$T_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ "$(sed -n 's/.*ptrace(PTRACE_SEIZE, \([0-9]*\),.*/\1/p' "$BATS_TEST_TMPDIR/trace" | sort -u | wc -l)" -eq 1 ]
	[ "$(jq '[.threads[] | select(.path == "signal")] | length' <<<"$output")" -eq 16 ]
	every_thread interleave:0
	[[ "$stderr" == *"handler's memory (/memfd:pidmempolicy) is left mapped in pid $T_PID (a thread may still be inside the handler's code after 200 ms)"* ]]
	grep -q 'memfd:pidmempolicy' "/proc/$T_PID/maps"
	[ "$(awk '/^SigCgt:/ { print $2 }' "/proc/$T_PID/status")" = "$SIGCGT_BEFORE" ]
	[ "$(grep -c '^SigBlk:[[:space:]]*fffffffffffbfeff' /proc/"$T_PID"/task/*/status | awk -F: '{ n += $2 } END { print n }')" -eq 16 ]
	ask check
	[ "$(field ok "$REPLY_LINE")" = 1 ]
}

@test "stray: threads run the handler on a signal they sent themselves, then block every signal: no thread is known, so none is proven out; the memory stays (noted)" {
	target_start "$PMP_SIGNALS" stray
	set_json --interleave=0
	[ "$status" -eq 0 ]
	ask check
	# a strayer that did not look while the handler was in made no run
	[ "$(field strays "$REPLY_LINE")" -ge 1 ]
	[ "$(jq '[.threads[] | select(.path == "signal")] | length' <<<"$output")" -eq 16 ]
	every_thread interleave:0
	[[ "$stderr" == *"handler's memory (/memfd:pidmempolicy) is left mapped in pid $T_PID (a thread may still be inside the handler's code after 200 ms)"* ]]
	grep -q 'memfd:pidmempolicy' "/proc/$T_PID/maps"
	[ "$(awk '/^SigCgt:/ { print $2 }' "/proc/$T_PID/status")" = "$SIGCGT_BEFORE" ]
}

@test "allrt: no free real-time signal, so the engine is not used; no signal of the target's is sent" {
	target_start "$PMP_SIGNALS" allrt
	set_json --interleave=0
	[ "$status" -eq 0 ]
	[ "$(paths)" = "ptrace 17" ]
	[ "$(jq -r '[.threads[] | .path_why] | unique | .[]' <<<"$output")" = \
		"no free real-time signal (it catches or ignores every one from 35 to 64)" ]
	every_thread interleave:0
	nothing_left
	ask check
	[ "$(field caught "$REPLY_LINE")" -eq 0 ]
}

@test "unmap: the target takes the region away and ignores the signal; every thread set, its choice kept" {
	target_start "$PMP_SIGNALS" unmap
	set_json --interleave=0
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	every_thread interleave:0
	ask check
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	[ "$(field unmapped "$REPLY_LINE")" -eq 1 ]
	[ "$(field ignored "$REPLY_LINE")" -eq 1 ]
	! grep -q 'memfd:pidmempolicy' "/proc/$T_PID/maps" || false
	# the signal it ignored stays ignored: one bit of SigIgn among 35..64
	[ "$(python3 -c 'import sys; v = int(sys.argv[1], 16); print(bin(v >> 34).count("1"))' \
		"$(awk '/^SigIgn:/ { print $2 }' "/proc/$T_PID/status")")" -eq 1 ]
}

@test "nanoloop: every call the signal ended with EINTR is reported, none more (100 runs over 16 threads)" {
	target_start "$PMP_SIGNALS" nanoloop 16
	local sig=0 told=0 noted=0
	for _ in $(seq 100); do
		run --separate-stderr "$PMP" --backend=ptrace -a --json --interleave=0 -p "$T_PID"
		[ "$status" -eq 0 ]
		sig=$((sig + $(jq '[.threads[] | select(.path == "signal")] | length' <<<"$output")))
		told=$((told + $(jq '[.threads[] | select(.interrupted_call)] | length' <<<"$output")))
		noted=$((noted + $(grep -c '^pidmempolicy: note: tid [0-9]* (pmp-signals) of pid [0-9]*: the signal ended a system call it had just entered (EINTR)$' <<<"$stderr" || true)))
	done
	ask check
	echo "threads by signal: $sig; EINTR reported: $told, noted: $noted"
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	[ "$sig" -gt 0 ]
	[ "$(field eintr "$REPLY_LINE")" -eq "$told" ]
	[ "$noted" -eq "$told" ]
	nothing_left
}

@test "a filter that answers EPERM to set_mempolicy: with --allow-seccomp each thread is seccomp-refused, unchanged" {
	[ -x "$PMP_SECCOMP" ] || { echo "pmp-seccomp not built" >&2; false; }
	target_start "$PMP_SECCOMP" --deny=$NR_SET_MEMPOLICY --action=errno:EPERM -- "$PMP_THREADS" --wait=futex 12
	set_json --allow-seccomp --interleave=0
	[ "$status" -ne 0 ]
	[ "$(jq '[.threads[] | .errno == "EPERM"] | all' <<<"$output")" = true ]
	[ "$(jq '.totals.failed' <<<"$output")" -eq 13 ]
	[ "$(jq -r '[.threads[] | .path_why] | unique | .[]' <<<"$output")" = "its main thread runs under seccomp" ]
	[[ $stderr == *"pidmempolicy: failed to set tid $T_PID (pmp-threads) of pid $T_PID: its seccomp filter refused set_mempolicy(2) (EPERM); left unchanged"* ]]
	every_thread default
	nothing_left
}

@test "the tool SIGKILLed at 20 moments of an engine run: nothing of the engine stays, every thread old or new" {
	target_start "$PMP_THREADS" --wait=futex 2000
	local i d st cut=0 t0 span
	# kills land within the span of a whole run (its shortest of three)
	for i in 1 2 3; do
		t0=${EPOCHREALTIME//[!0-9]/}
		"$PMP" --backend=ptrace -a --interleave=0 -p "$T_PID" >/dev/null 2>&1 3>&-
		d=$(((${EPOCHREALTIME//[!0-9]/} - t0) / 1000 + 1))
		[ -n "${span:-}" ] && [ "$span" -le "$d" ] || span=$d
	done
	echo "the shortest whole run: $span ms"
	for i in $(seq 20); do
		"$PMP" --backend=ptrace -a --membind=0 -p "$T_PID" >/dev/null 2>&1 3>&- &
		TOOL_PID=$!
		d=$((RANDOM % span))
		sleep "$((d / 1000)).$(printf '%03d' $((d % 1000)))"
		kill_tool "$TOOL_PID"
		st=0
		wait "$TOOL_PID" || st=$?
		TOOL_PID=
		[ "$st" -ne 137 ] || cut=$((cut + 1))
		# its tracing process takes the engine out, then exits
		wait_tracers_done
		nothing_left || { echo "kill $i at ${d} ms left something"; false; }
		policies | awk '$1 != "bind:0" && $1 != "interleave:0" { exit 1 }'
	done
	echo "kills that cut a run short: $cut of 20"
	[ "$cut" -ge 5 ]
	set_json --interleave=0
	[ "$status" -eq 0 ]
	every_thread interleave:0
	nothing_left
}

@test "the tool's whole process group SIGKILLed mid-run: the target lives, untraced; what stays is counted" {
	target_start "$PMP_THREADS" --wait=futex 2000
	local i d left=0
	for i in $(seq 10); do
		setsid "$PMP" --backend=ptrace -a --interleave=0 -p "$T_PID" >/dev/null 2>&1 3>&- &
		TOOL_PID=$!
		d=$((RANDOM % 200))
		sleep "0.$(printf '%03d' "$d")"
		kill -KILL -- "-$TOOL_PID" 2>/dev/null || true
		wait "$TOOL_PID" || true
		TOOL_PID=
		sleep 0.2
		kill -0 "$T_PID"
		! grep -qE '^TracerPid:[[:space:]]*[1-9]' /proc/"$T_PID"/task/*/status || false
		# at most one region (two mappings) per kill
		left=$(grep -c 'memfd:pidmempolicy' "/proc/$T_PID/maps" || true)
		[ "$left" -le $((2 * i)) ]
	done
	echo "region mappings left after 10 group kills: $left"
	# a run after them sets every thread, whatever was left
	set_json --interleave=0
	[ "$status" -eq 0 ]
	every_thread interleave:0
	kill -0 "$T_PID"
}
