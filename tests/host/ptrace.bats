#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The ptrace backend (src/ptrace.c) on the running kernel: every thread of
# a live process is made to call set_mempolicy(2) itself.  The target is
# tests/helpers/pmp-blocker, whose threads sit in the blocking calls an
# injection interrupts and then check that their call still behaved; the
# policy is read back with get_mempolicy(2) INSIDE each thread and from
# /proc/PID/task/TID/numa_maps.  One NUMA node is enough: node 0 and the
# modes bind, interleave, preferred, local and default.
#
# Section 1 drives the engine directly through tests/helpers/pmp-inject.
# Section 2 (at the end) runs the same scenarios through the CLI,
# `pidmempolicy --backend=ptrace`.
#
# What the blocked calls must do after an injection (pmp-blocker's header):
#   nanosleep, clock_nanosleep, poll   return 0 after the requested time,
#                                      not twice it, not EINTR
#   pthread_cond_timedwait             ETIMEDOUT at its deadline
#   pthread_cond_wait, read(pipe)      return when woken / written, with
#                                      the data ("hello")
#   epoll_wait                         0 at its timeout OR -1/EINTR: a
#                                      ptrace stop makes epoll_wait fail
#                                      with EINTR (signal(7)); documented
#   busy register loop                 no register ever changed (bad=0)
#   sigsuspend + SIGUSR1 handler       every return is one handler run

load helpers

PMP_BLOCKER=${PMP_BLOCKER:-$PMP_HELPER_DIR/pmp-blocker}
PMP_INJECT=${PMP_INJECT:-$PMP_HELPER_DIR/pmp-inject}
PMP_RSEQ=${PMP_RSEQ:-$PMP_HELPER_DIR/pmp-rseq}
PMP_HOLD=${PMP_HOLD:-$PMP_HELPER_DIR/pmp-hold}
PMP_HOSTILE=${PMP_HOSTILE:-$PMP_HELPER_DIR/pmp-hostile}
PMP_TARGET=${PMP_TARGET:-$PMP_HELPER_DIR/pmp-target}
PMP_VFORK=${PMP_VFORK:-$PMP_HELPER_DIR/pmp-vfork}
PMP_SLEEP32=${PMP_SLEEP32:-$PMP_HELPER_DIR/pmp-sleep32}
PMP_SECCOMP=${PMP_SECCOMP_BIN:-$PMP_SECCOMP}
MS=2500				# length of a round's blocking calls
case $(uname -m) in		# set_mempolicy(2)
aarch64) NR_SET_MEMPOLICY=237 ;;
*) NR_SET_MEMPOLICY=238 ;;
esac
ROUND=(nanosleep clock_nanosleep poll cond_timedwait cond_wait read epoll busy writer)

# Whether this user may ptrace the targets, probed once for the file:
# 0 yes, 1 no (PTRACE_OK_WHY says why), else the probe broke.
setup_file() {
	PTRACE_OK=0
	[ -x "$PMP_HOLD" ] && ptraces_non_child "$PMP_HOLD" || PTRACE_OK=$?
	PTRACE_OK_WHY=$(why_no_ptrace)
	export PTRACE_OK PTRACE_OK_WHY
}

setup() {
	case $(uname -m) in
	x86_64 | aarch64) ;;
	*) echo "the ptrace backend is x86_64 and aarch64 only" >&2; false ;;
	esac
	[ -x "$PMP_BLOCKER" ] || { echo "pmp-blocker not built ($PMP_BLOCKER)" >&2; false; }
	[ -x "$PMP_INJECT" ] || { echo "pmp-inject not built ($PMP_INJECT)" >&2; false; }
	[ -x "$PMP_HOLD" ] || { echo "pmp-hold not built ($PMP_HOLD)" >&2; false; }
	require_fact "$PTRACE_OK_WHY" probed "$PTRACE_OK"
	BG_PIDS=()
}

teardown() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	blocker_stop
	[ -z "${TARGET2_PID:-}" ] || kill -KILL "$TARGET2_PID" 2>/dev/null || true
	wait 2>/dev/null || true
}

# ---- pmp-blocker driver ----------------------------------------------------

# blocker_start [--] [WRAPPER...] -- [ARGS]: start pmp-blocker (through a
# wrapper that execs it, e.g. pmp-seccomp), connected to fifos; sets
# BLOCKER_PID.
blocker_start() {
	local -a wrapper=() args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && { shift; wrapper=("$@"); }
	BLOCKER_RUNS=$((${BLOCKER_RUNS:-0} + 1))
	local dir=$BATS_TEST_TMPDIR/blocker$BLOCKER_RUNS
	fifo_spawn "$dir" "${wrapper[@]}" "$PMP_BLOCKER" "${args[@]}"
	BLOCKER_PID=$SPAWN_PID BLOCKER_W=$SPAWN_W BLOCKER_R=$SPAWN_R
	local line
	IFS= read -r -t 20 -u "$BLOCKER_R" line || { echo "no ready line" >&2; cat "$dir/stderr" >&2; return 1; }
	[ "$line" = "ready $BLOCKER_PID" ] || { echo "got '$line'" >&2; return 1; }
}

# ask COMMAND: one command, its one-line reply in $REPLY_LINE (and printed).
ask() {
	printf '%s\n' "$*" >&"$BLOCKER_W"
	IFS= read -r -t 60 -u "$BLOCKER_R" REPLY_LINE || { echo "no reply to '$*'" >&2; return 1; }
	echo "$* -> $REPLY_LINE"
	[[ $REPLY_LINE != error* ]]
}

blocker_stop() {
	[ -n "${BLOCKER_PID:-}" ] || return 0
	kill -KILL "$BLOCKER_PID" 2>/dev/null || true
	wait "$BLOCKER_PID" 2>/dev/null || true
	eval "exec $BLOCKER_W>&- $BLOCKER_R>&-"
	BLOCKER_PID=
}

# field NAME LINE: the value of NAME= in a reply line.
field() {
	local re="(^| )$1=([^ ]*)"
	[[ $2 =~ $re ]] && printf '%s\n' "${BASH_REMATCH[2]}"
}

# check_round MODE NODES: wait for the round, then every round thread
# returned correctly, on time, and has the policy (get_mempolicy inside it).
# busy_kept: the busy thread's registers held across the run; its canary
# below the stack pointer too, unless FRAMES is set (the signal engine
# ran: a signal frame lands there, as any signal's does).
busy_kept() {
	[ "$(field bad "$REPLY_LINE")" = 0 ] || return 1
	[ -n "${FRAMES:-}" ] || [ "$(field canary "$REPLY_LINE")" = 0 ]
}

check_round() {
	local mode=$1 nodes=$2 name e
	ask wait
	for name in "${ROUND[@]}"; do
		ask report "$name"
		[ "$name" = busy ] || [ "$(field ok "$REPLY_LINE")" = 1 ]
		[ "$(field mode "$REPLY_LINE")" = "$mode" ]
		[ "$(field nodes "$REPLY_LINE")" = "$nodes" ]
		e=$(field elapsed_ms "$REPLY_LINE")
		case $name in
		busy) busy_kept ;;
		epoll)	# 0 at the timeout, or EINTR when it was stopped
			if [ "$(field rv "$REPLY_LINE")" = 0 ]; then
				[ "$e" -ge $((MS - 10)) ]
			else
				[ "$(field rv "$REPLY_LINE")" = -1 ] && [ "$(field errno "$REPLY_LINE")" = 4 ]
			fi ;;
		*)	# ended on time: not early, not a full second round
			[ "$e" -ge $((MS - 10)) ] && [ "$e" -lt $((MS + MS / 3)) ] ;;
		esac
	done
	ask report read
	[ "$(field data "$REPLY_LINE")" = hello ]
	ask report sigsuspend
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	[ "$(field mode "$REPLY_LINE")" = "$mode" ]
}

# inject ARGS...: run pmp-inject, output in $output, status in $status.
inject() {
	run "$PMP_INJECT" "$@"
	echo "pmp-inject $*: status=$status"
	echo "$output"
}

# every_thread_set: each line of the last pmp-inject output says "set".
every_thread_set() {
	local n
	n=$(grep -c '^[0-9]* set ' <<<"$output")
	[ "$n" -eq "$(grep -c '^[0-9]' <<<"$output")" ]
	[ "$n" -ge 1 ]
}

# =========================================================================
# Section 1: the engine through pmp-inject
# =========================================================================

@test "inject: every thread gets bind:0, both paths run, every blocked call behaves" {
	blocker_start --ms=$MS
	ask start
	sleep 0.7
	local t masks_before masks_after
	# one process, not one per thread: the injection must come while the
	# round's calls still block (emulated aarch64 is slow to start each)
	masks_before=$(grep ^SigBlk: "/proc/$BLOCKER_PID"/task/*/status)
	inject "$BLOCKER_PID" bind 0
	[ "$status" -eq 0 ]
	every_thread_set
	[ "$(grep -c '^[0-9]' <<<"$output")" -eq "$(tids_of "$BLOCKER_PID" | wc -l)" ]
	# signal masks are given back exactly (sigsuspend's temporary one too)
	masks_after=$(grep ^SigBlk: "/proc/$BLOCKER_PID"/task/*/status)
	[ "$masks_before" = "$masks_after" ]
	grep -q 'detail=in syscall' <<<"$output"	# path A: interrupted system calls
	grep -q 'detail=in user code' <<<"$output"	# path B: the busy thread
	for t in $(tids_of "$BLOCKER_PID"); do
		[ "$(task_policy "$BLOCKER_PID" "$t")" = bind:0 ]
		[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$BLOCKER_PID/task/$t/status")" = 0 ]
	done
	check_round 2 0
	ask policy
	[ "$REPLY_LINE" = "mode=2 nodes=0" ]
	# its threads still work: a second round, unchanged policy
	ask start
	check_round 2 0
}

@test "inject: interleave, preferred, local, default, bind+static" {
	blocker_start --ms=$MS
	local spec
	for spec in "interleave 0 3 0 interleave:0" "preferred 0 1 0 prefer:0" "local - 4 none local" \
		    "default - 0 none default" "bind+static 0 2 0 bind=static:0"; do
		set -- $spec
		ask start 1500
		sleep 0.3
		inject "$BLOCKER_PID" "$1" "$2"
		[ "$status" -eq 0 ]
		every_thread_set
		for t in $(tids_of "$BLOCKER_PID"); do
			[ "$(task_policy "$BLOCKER_PID" "$t")" = "$5" ]
		done
		MS=1500 check_round "$3" "$4"
	done
	ask report nanosleep
	[[ $REPLY_LINE == *flags=static* ]]
}

@test "inject: a signal storm during the injection: target survives, no signal lost or doubled" {
	blocker_start --ms=$MS
	local stop=$BATS_TEST_TMPDIR/stop count=$BATS_TEST_TMPDIR/count
	ask start
	( n=0; while [ ! -e "$stop" ] && kill -USR1 "$BLOCKER_PID" 2>/dev/null; do n=$((n + 1)); done; echo "$n" >"$count" ) 3>&- &
	BG_PIDS+=($!)
	sleep 0.2
	for pass in 1 2 3 4 5; do
		inject "$BLOCKER_PID" bind 0
		[ "$status" -eq 0 ]
		every_thread_set
	done
	touch "$stop"
	wait "${BG_PIDS[0]}"
	local sent handled
	sent=$(cat "$count")
	echo "sent=$sent"
	kill -0 "$BLOCKER_PID"
	check_round 2 0
	ask report sigsuspend
	handled=$(field handled "$REPLY_LINE")
	# standard signals coalesce, so handled <= sent (+1 for the SIGUSR2 of
	# the report itself); every sigsuspend return was one handler run
	[ "$sent" -gt 0 ] && [ "$handled" -gt 0 ] && [ "$handled" -le $((sent + 1)) ]
	[ "$(field ok "$REPLY_LINE")" = 1 ]
}

@test "inject: a SIGSTOPped target stays stopped, and works after SIGCONT" {
	blocker_start --ms=$MS
	ask start
	sleep 0.3
	kill -STOP "$BLOCKER_PID"
	for i in $(seq 50); do
		[ "$(thread_state "$BLOCKER_PID" "$BLOCKER_PID")" = T ] && break
		sleep 0.05
	done
	inject "$BLOCKER_PID" bind 0
	[ "$status" -eq 0 ]
	every_thread_set
	sleep 0.3
	for t in $(tids_of "$BLOCKER_PID"); do
		[ "$(thread_state "$BLOCKER_PID" "$t")" = T ]
		[ "$(task_policy "$BLOCKER_PID" "$t")" = bind:0 ]
	done
	kill -CONT "$BLOCKER_PID"
	ask wait
	local name
	for name in "${ROUND[@]}"; do
		ask report "$name"
		[ "$(field ok "$REPLY_LINE")" = 1 ]
		[ "$(field mode "$REPLY_LINE")" = 2 ]
	done
	# SIGCONT's handler ran in the sigsuspend thread, and its sigsuspend
	# returned EINTR, as without us (not made again after the handler)
	ask report sigsuspend
	[ "$(field handled "$REPLY_LINE")" -ge 1 ]
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	ask start 1000
	MS=1000 check_round 2 0
}

@test "inject: thread churn: converges, every thread found is set or has exited, new threads inherit" {
	blocker_start --ms=$MS --idle=20
	ask churn on
	sleep 0.2
	inject "$BLOCKER_PID" interleave 0
	# threads may exit between listing and seizing (or be exiting, a
	# zombie): "exited" is fine, anything else is not
	! grep '^[0-9]' <<<"$output" | grep -Ev '^[0-9]+ (set|exited) ' || false
	grep -q '^summary ' <<<"$output"
	[ "$(field set "$(tail -n 1 <<<"$output")")" -ge 30 ]
	sleep 0.3
	ask report churn
	[ "$(field mode "$REPLY_LINE")" = 3 ]	# a child created after: inherited
	ask churn off
	ask idle-check
	[ "$REPLY_LINE" = "idle n=20 same=20 mode=3 nodes=0" ]
	ask ping
}

# hold_thread TID: a stand-in debugger (pmp-hold) traces thread TID of the
# blocker; its pid in TRACER.  Returns once the thread is traced.
hold_thread() {
	local i
	"$PMP_HOLD" "$1" >"$BATS_TEST_TMPDIR/hold.out" 3>&- &
	TRACER=$!
	BG_PIDS+=("$TRACER")
	for i in $(seq 100); do
		[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$BLOCKER_PID/task/$1/status")" = "$TRACER" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "inject: a thread already traced is refused with its tracer's pid, the others are set" {
	blocker_start --ms=$MS
	ask tids
	local victim tracer
	victim=$(field nanosleep "$REPLY_LINE")
	hold_thread "$victim"
	tracer=$TRACER
	inject "$BLOCKER_PID" bind 0
	[ "$status" -eq 1 ]
	grep -q "^$victim already-traced err=EPERM tracer=$tracer " <<<"$output"
	[ "$(grep -c ' set ' <<<"$output")" -eq $(( $(tids_of "$BLOCKER_PID" | wc -l) - 1 )) ]
	[ "$(task_policy "$BLOCKER_PID" "$victim")" = default ]
	ask ping
}

@test "inject: a seccomp-filtered target is refused unless --allow-seccomp" {
	[ -x "$PMP_SECCOMP" ] || { echo "pmp-seccomp not built" >&2; false; }
	# a filter that would KILL the process on set_mempolicy: never called
	blocker_start --ms=$MS -- "$PMP_SECCOMP" --deny=$NR_SET_MEMPOLICY --
	ask start 1000
	inject "$BLOCKER_PID" bind 0
	[ "$status" -eq 1 ]
	[ "$(grep -c '^[0-9]' <<<"$output")" -eq "$(grep -c '^[0-9]* seccomp ' <<<"$output")" ]
	MS=1000 check_round 0 none
	blocker_stop

	# a filter that makes set_mempolicy fail with EPERM: allowed, the call
	# runs in every thread and fails there, the target carries on
	blocker_start --ms=$MS -- "$PMP_SECCOMP" --deny=$NR_SET_MEMPOLICY --action=errno:EPERM --
	ask start 1000
	sleep 0.2
	inject --allow-seccomp "$BLOCKER_PID" bind 0
	[ "$status" -eq 1 ]
	[ "$(grep -c '^[0-9]' <<<"$output")" -eq "$(grep -c '^[0-9]* call-failed err=EPERM ' <<<"$output")" ]
	MS=1000 check_round 0 none
	blocker_stop

	# a filter that does not concern set_mempolicy: allowed and set
	blocker_start --ms=$MS -- "$PMP_SECCOMP" --deny=451 --
	ask start 1000
	sleep 0.2
	inject --allow-seccomp "$BLOCKER_PID" bind 0
	[ "$status" -eq 0 ]
	every_thread_set
	MS=1000 check_round 2 0
}

@test "inject: SIGKILLed mid-run, the tool leaves the target running, untraced, answering" {
	blocker_start --ms=$MS --idle=1500
	local out=$BATS_TEST_TMPDIR/inject.out
	"$PMP_INJECT" "$BLOCKER_PID" bind 0 >"$out" 3>&- &
	local inj=$!
	BG_PIDS+=("$inj")
	for i in $(seq 2000); do
		[ "$(grep -c . "$out")" -ge 20 ] && break
		sleep 0.002
	done
	kill -KILL "$inj"
	wait "$inj" || true
	echo "pmp-inject did $(grep -c . "$out") threads before SIGKILL"
	[ "$(grep -c . "$out")" -lt 1500 ]	# it really was cut short
	wait_untraced "$BLOCKER_PID"
	local t blocked_all=0
	for t in $(tids_of "$BLOCKER_PID"); do
		[[ $(thread_state "$BLOCKER_PID" "$t") != [Tt] ]]
		# the tracing process finished the thread in hand: none is left
		# with every signal blocked
		grep -q '^SigBlk:[[:space:]]*fffffffffffbfeff$' "/proc/$BLOCKER_PID/task/$t/status" && blocked_all=$((blocked_all + 1))
	done
	echo "threads left with every signal blocked: $blocked_all"
	[ "$blocked_all" -eq 0 ]
	ask ping
	ask idle-check
	[ "$(field n "$REPLY_LINE")" = 1500 ]
	ask start 1000
	ask wait
	# and a complete run afterwards sets everything
	inject "$BLOCKER_PID" bind 0
	[ "$status" -eq 0 ]
	every_thread_set
}

@test "inject: zombie and vanished thread: refused before any ptrace" {
	[ -x "$PMP_TARGET" ] || { echo "pmp-target not built" >&2; false; }
	local dir=$BATS_TEST_TMPDIR/t2
	fifo_spawn "$dir" "$PMP_TARGET"
	TARGET2_PID=$SPAWN_PID T2W=$SPAWN_W T2R=$SPAWN_R
	read -r -t 10 -u "$T2R" line
	echo zombie >&"$T2W"
	read -r -t 10 -u "$T2R" zpid
	inject "$zpid" bind 0
	[ "$status" -eq 1 ]
	grep -q "^$zpid exited " <<<"$output"
	inject --tid=999999999 "$TARGET2_PID" bind 0
	grep -q "^999999999 exited " <<<"$output"
	eval "exec $T2W>&- $T2R>&-"
}

@test "inject: a handle whose task exited while its TID lives on is refused after the seize, untouched" {
	blocker_start --ms=$MS
	# The blocker's main thread stands for the task that took the TID over;
	# the handle's pidfd names a child that has exited and been reaped.
	local blk
	blk=$(grep '^SigBlk:' "/proc/$BLOCKER_PID/status")
	inject --stale-pidfd --tid="$BLOCKER_PID" "$BLOCKER_PID" bind 0
	[ "$status" -eq 1 ]
	# the detail is the identity check's, which runs only once seized
	grep -q "^$BLOCKER_PID exited err=ESRCH .* detail=exited; its TID names another task now$" <<<"$output"
	[ "$(task_policy "$BLOCKER_PID" "$BLOCKER_PID")" = default ]
	[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$BLOCKER_PID/status")" = 0 ]
	[ "$(grep '^SigBlk:' "/proc/$BLOCKER_PID/status")" = "$blk" ]
	ask ping
	# positive control: the same thread, with no pidfd to contradict it
	inject --tid="$BLOCKER_PID" "$BLOCKER_PID" bind 0
	[ "$status" -eq 0 ]
	[ "$(task_policy "$BLOCKER_PID" "$BLOCKER_PID")" = bind:0 ]
}

@test "inject: a kernel thread: refused before any ptrace" {
	kthreadd=2
	require_fact "pid 2 is not kthreadd here (a PID namespace)" is_kthreadd "$kthreadd"
	inject "$kthreadd" bind 0
	grep -q "^2 kernel-thread " <<<"$output"
}

# rseq_start: pmp-rseq (one thread spinning inside an rseq critical
# section) through the blocker driver; sets BLOCKER_PID and RSEQ_TID, and
# checks that a signal gets the spinner out of its section to report.
rseq_start() {
	local PMP_BLOCKER=$PMP_RSEQ
	blocker_start
	ask tid
	RSEQ_TID=$(field tid "$REPLY_LINE")
	ask report
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	[ "$(field mode "$REPLY_LINE")" = 0 ]
}

@test "inject: a thread stopped inside an rseq critical section resumes at its abort handler" {
	rseq_start
	# the spinner is inside its section nearly all the time, but a loaded
	# machine may preempt it just outside: try again until a stop lands
	# inside (each try sets the same policy)
	local try
	for try in 1 2 3 4 5; do
		inject --tid="$RSEQ_TID" "$BLOCKER_PID" bind 0
		[ "$status" -eq 0 ]
		grep -q "^$RSEQ_TID set .* rseq=abort " <<<"$output" && break
	done
	grep -q "^$RSEQ_TID set .* rseq=abort " <<<"$output"	# it was stopped inside the section
	# the section still aborts on a signal, and the thread runs its own code
	ask report
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	[ "$(field mode "$REPLY_LINE")" = 2 ]
	[ "$(field nodes "$REPLY_LINE")" = 0 ]
	[ "$(task_policy "$BLOCKER_PID" "$RSEQ_TID")" = bind:0 ]
}

@test "inject: the rseq test can fail: without the fixup the thread is stuck in a section that no longer aborts" {
	rseq_start
	inject --no-rseq-fixup --tid="$RSEQ_TID" "$BLOCKER_PID" bind 0
	[ "$status" -eq 0 ]
	grep -q "^$RSEQ_TID set .* rseq=- " <<<"$output"
	ask report
	[ "$(field ok "$REPLY_LINE")" = 0 ]
}

# hostile_start MODE: pmp-hostile MODE on fifos (its threads' stacks in
# memory that is a trap, see the helper); sets HOSTILE_PID and keeps its
# maps as they were before any tool came, or skips the test with the
# helper's reason (no userfaultfd here, say).
hostile_start() {
	[ -x "$PMP_HOSTILE" ] || { echo "pmp-hostile not built" >&2; false; }
	local dir=$BATS_TEST_TMPDIR/hostile line
	mkdir -p "$dir" && mkfifo "$dir/in" "$dir/out"
	exec {HOSTILE_W}<>"$dir/in" {HOSTILE_R}<>"$dir/out"
	(
		eval "exec $HOSTILE_W>&- $HOSTILE_R>&-"
		exec "$PMP_HOSTILE" "$1" <"$dir/in" >"$dir/out" 2>"$dir/stderr" 3>&-
	) &
	HOSTILE_PID=$!
	BG_PIDS+=("$HOSTILE_PID")
	IFS= read -r -t 20 -u "$HOSTILE_R" line || { cat "$dir/stderr" >&2; return 1; }
	[[ $line != skip* ]] || skip "${line#skip }"
	[ "$line" = "ready $HOSTILE_PID" ]
	cat "/proc/$HOSTILE_PID/maps" >"$dir/maps.before"
}

# hostile_check: the hostile target's counters, in REPLY_LINE.
hostile_check() {
	printf 'check\n' >&"$HOSTILE_W"
	IFS= read -r -t 20 -u "$HOSTILE_R" REPLY_LINE
	echo "check -> $REPLY_LINE"
}

# hostile_all_bind0: every thread of the hostile target has bind:0.
hostile_all_bind0() {
	local t
	for t in $(tids_of "$HOSTILE_PID"); do
		[ "$(task_policy "$HOSTILE_PID" "$t")" = bind:0 ] || return 1
	done
}

# shared_heap_intact: the buffer the stacks live in was never seen changed,
# every thread has bind:0, and the target's mappings are what they were
# before the tool came (no scratch page left behind).
shared_heap_intact() {
	hostile_check
	[ "$(field corrupt "$REPLY_LINE")" = 0 ]
	[ "$(field checks "$REPLY_LINE")" -gt 0 ]
	hostile_all_bind0
	diff "$BATS_TEST_TMPDIR/hostile/maps.before" "/proc/$HOSTILE_PID/maps"
}

@test "inject: stacks carved out of another thread's heap: none of it written, no page left behind" {
	hostile_start shared-heap
	for i in 1 2 3 4 5; do
		inject "$HOSTILE_PID" bind 0
		[ "$status" -eq 0 ]
		every_thread_set
	done
	grep -q 'detail=in user code' <<<"$output"
	grep -q 'detail=in syscall' <<<"$output"
	shared_heap_intact
}

# bounded_inject: pmp-inject on HOSTILE_PID, killed after 30 s: a hang
# guard, not a timing.
bounded_inject() {
	SECONDS=0
	run timeout -s KILL 30 "$PMP_INJECT" "$HOSTILE_PID" bind 0
	echo "status=$status after ${SECONDS}s"
	echo "$output"
}

@test "inject: stacks in a userfaultfd region nobody fills: every thread set, in seconds" {
	hostile_start uffd-stack
	bounded_inject
	[ "$status" -eq 0 ]
	every_thread_set
	[ "$SECONDS" -lt 10 ]
}

@test "inject: no vDSO, 8 GiB of untouched executable memory first: bounded, set or refused" {
	hostile_start no-vdso
	bounded_inject	# an unbounded scan took about a minute
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	[ "$(grep -c '^[0-9]' <<<"$output")" -eq 3 ]
	! grep '^[0-9]' <<<"$output" | grep -v ' set .*' | grep -v 'detail=no syscall instruction'
}

@test "inject: cost per thread over 100+ threads" {
	blocker_start --ms=$MS --idle=100
	inject "$BLOCKER_PID" interleave 0
	[ "$status" -eq 0 ]
	every_thread_set
	tail -n 1 <<<"$output" >&3
	ask idle-check
	[ "$REPLY_LINE" = "idle n=100 same=100 mode=3 nodes=0" ]
}

# =========================================================================
# Section 2: the CLI, pidmempolicy --backend=ptrace
# =========================================================================

cli_ready() {
	[ -x "$PMP" ] || { echo "pidmempolicy not built" >&2; false; }
	"$PMP" --help 2>/dev/null | grep -q -- '--backend'
}

# cli_round [ARGS...]: a whole -a run over the blocker in mid-round, then
# every thread has the policy and every call behaved.
cli_round() {
	cli_ready
	blocker_start --ms=$MS
	ask start
	sleep 0.7
	run --separate-stderr "$PMP" --backend=ptrace -a --membind=0 "$@" -p "$BLOCKER_PID"
	echo "status=$status stdout=[$output] stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	for t in $(tids_of "$BLOCKER_PID"); do
		[ "$(task_policy "$BLOCKER_PID" "$t")" = bind:0 ]
	done
	check_round 2 0
}

@test "cli: --backend=ptrace -a sets every thread; blocked calls behave" {
	FRAMES=1 cli_round
}

@test "cli: --backend=ptrace -a --no-signal: the same, and nothing written below any stack pointer" {
	cli_round --no-signal
}

@test "cli: --backend=ptrace -a on stacks carved out of another thread's heap: none of it written, no page left" {
	cli_ready
	hostile_start shared-heap
	for i in 1 2 3; do
		run --separate-stderr "$PMP" --backend=ptrace -a --membind=0 -p "$HOSTILE_PID"
		echo "status=$status stdout=[$output] stderr=[$stderr]"
		[ "$status" -eq 0 ]
	done
	shared_heap_intact
}

@test "cli: --backend=ptrace -a, the target unmaps the scratch page mid-run: a new one is made, every thread set, none left" {
	cli_ready
	hostile_start unmap-scratch
	run --separate-stderr "$PMP" --backend=ptrace -a --membind=0 -p "$HOSTILE_PID"
	echo "status=$status stdout=[$output] stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	hostile_check
	[ "$(field unmapped "$REPLY_LINE")" = 1 ]	# it did take the page away
	[ "$(tids_of "$HOSTILE_PID" | wc -l)" -eq 204 ]
	hostile_all_bind0
	diff "$BATS_TEST_TMPDIR/hostile/maps.before" "/proc/$HOSTILE_PID/maps"
}

@test "cli: --backend=ptrace -a, the target empties the scratch page into a never-filled userfaultfd region: every thread set, in seconds" {
	cli_ready
	hostile_start uffd-scratch
	SECONDS=0
	run --separate-stderr timeout -s KILL 60 "$PMP" --backend=ptrace -a --membind=0 -p "$HOSTILE_PID"
	echo "status=$status after ${SECONDS}s stdout=[$output] stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$SECONDS" -lt 30 ]	# a hang guard: a call reading the mask there never returns
	hostile_check
	[ "$(field unmapped "$REPLY_LINE")" = 1 ]	# it did empty and register the page
	[ "$(tids_of "$HOSTILE_PID" | wc -l)" -eq 204 ]
	hostile_all_bind0
}

@test "cli: --backend=ptrace on stacks in a never-filled userfaultfd region: SIGINT ends it at once" {
	cli_ready
	hostile_start uffd-stack
	local tool i t
	"$PMP" --backend=ptrace -a --membind=0 -p "$HOSTILE_PID" >/dev/null 2>&1 3>&- &
	tool=$!
	BG_PIDS+=("$tool")
	# every read is bounded, so the run ends by itself too (0.4 s here): a
	# test delayed that long finds it gone
	kill -INT "$tool" 2>/dev/null || echo "the tool had ended before its SIGINT"
	for i in $(seq 100); do
		kill -0 "$tool" 2>/dev/null || break
		sleep 0.05
	done
	! kill -0 "$tool" 2>/dev/null || false	# gone within 5 s
	wait "$tool" || true
	sleep 0.1
	for t in $(tids_of "$HOSTILE_PID"); do
		[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$HOSTILE_PID/task/$t/status")" = 0 ]
	done
	# and a run left alone sets every thread
	run timeout -s KILL 30 "$PMP" --backend=ptrace -a --membind=0 -p "$HOSTILE_PID"
	echo "status=$status output=[$output]"
	[ "$status" -eq 0 ]
	for t in $(tids_of "$HOSTILE_PID"); do
		[ "$(task_policy "$HOSTILE_PID" "$t")" = bind:0 ]
	done
}

@test "cli: --backend=ptrace without -a sets the main thread only" {
	cli_ready
	blocker_start --ms=$MS
	run --separate-stderr "$PMP" --backend=ptrace --interleave=0 -p "$BLOCKER_PID"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$BLOCKER_PID" "$BLOCKER_PID")" = interleave:0 ]
	ask tids
	[ "$(task_policy "$BLOCKER_PID" "$(field nanosleep "$REPLY_LINE")")" = default ]
}

@test "cli: --backend=ptrace on a stopped target leaves it stopped" {
	cli_ready
	blocker_start --ms=$MS
	kill -STOP "$BLOCKER_PID"
	sleep 0.2
	run --separate-stderr "$PMP" --backend=ptrace -a --membind=0 -p "$BLOCKER_PID"
	[ "$status" -eq 0 ]
	for t in $(tids_of "$BLOCKER_PID"); do
		[ "$(thread_state "$BLOCKER_PID" "$t")" = T ]
	done
	kill -CONT "$BLOCKER_PID"
	ask ping
}

@test "cli: --backend=ptrace names the tracer of a traced thread, sets the rest, exits 64" {
	cli_ready
	blocker_start --ms=$MS
	ask tids
	local victim tracer
	victim=$(field poll "$REPLY_LINE")
	hold_thread "$victim"
	tracer=$TRACER
	run --separate-stderr "$PMP" --backend=ptrace -a --membind=0 -p "$BLOCKER_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"tid $victim "* ]] && [[ $stderr == *"$tracer"* ]]
}

@test "cli: --backend=ptrace refuses a seccomp-filtered target, -a with --allow-seccomp... is the CLI's choice" {
	cli_ready
	[ -x "$PMP_SECCOMP" ] || { echo "pmp-seccomp not built" >&2; false; }
	blocker_start --ms=$MS -- "$PMP_SECCOMP" --deny=$NR_SET_MEMPOLICY --
	run --separate-stderr "$PMP" --backend=ptrace -a --membind=0 -p "$BLOCKER_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 1 ]
	[[ $stderr == *seccomp* ]]
	kill -0 "$BLOCKER_PID"
	ask policy
	[ "$REPLY_LINE" = "mode=0 nodes=none" ]
}

@test "cli: --backend=ptrace killed mid-run leaves the target running and untraced" {
	cli_ready
	blocker_start --ms=$MS --idle=400
	"$PMP" --backend=ptrace -a --membind=0 -p "$BLOCKER_PID" >/dev/null 2>&1 3>&- &
	local tool=$!
	sleep 0.03
	kill_tool "$tool"
	wait "$tool" || true
	wait_tracers_done
	wait_untraced "$BLOCKER_PID"
	wait_settled "$BLOCKER_PID"
	ask ping
	ask idle-check
}

# ptrace-tracer.h: the tool's requests come from a process of its own that
# finishes the thread in hand when the tool is SIGKILLed, then exits.  So
# no kill, wherever it lands, leaves a thread traced, stopped, with every
# signal blocked, or running on injected registers (the busy thread checks
# its registers; a call resumed wrongly fails its check).
@test "cli: --backend=ptrace SIGKILLed at 20 random moments: nothing left behind, every call behaves" {
	local FRAMES=1	# the signal engine's frames on the busy thread's stack
	cli_ready
	blocker_start --ms=$MS --idle=300
	ask start 4000
	local i d st tool cut=0 tracers=0 name t0 span
	# the moments are drawn from the length of a whole run, here and now:
	# the shortest of three (EPOCHREALTIME: busybox's date has no %N);
	# a kill that comes after its run ended shrinks the span, since runs
	# get quicker once the busy round is over
	local ms
	span=
	for i in 1 2 3; do
		t0=${EPOCHREALTIME//[!0-9]/}
		"$PMP" --backend=ptrace -a --interleave=0 -p "$BLOCKER_PID" >/dev/null 2>&1 3>&-
		ms=$(((${EPOCHREALTIME//[!0-9]/} - t0) / 1000 + 1))
		[ -n "$span" ] && [ "$span" -le "$ms" ] || span=$ms
	done
	echo "the shortest whole run: $span ms"
	for i in $(seq 20); do
		"$PMP" --backend=ptrace -a --membind=0 -p "$BLOCKER_PID" >/dev/null 2>&1 3>&- &
		tool=$!
		d=$((RANDOM % span))
		sleep "$((d / 1000)).$(printf '%03d' $((d % 1000)))"
		kill_tool "$tool"
		st=0
		wait "$tool" || st=$?
		if [ "$st" -eq 137 ]; then
			cut=$((cut + 1))
		elif [ "$span" -gt 4 ]; then
			span=$((span * 2 / 3))
		fi
		[ -z "$TOOL_TRACERS" ] || tracers=$((tracers + 1))
		wait_tracers_done
		wait_untraced "$BLOCKER_PID"
		# no thread stopped, none with every signal blocked: one grep over
		# all of them (a shell loop over 300 threads took minutes on the
		# emulated aarch64 guest)
		wait_settled "$BLOCKER_PID" || { echo "kill $i left them"; false; }
	done
	echo "the span at the end: $span ms"
	echo "kills that cut a run short: $cut of 20; with a tracing process made: $tracers"
	[ "$cut" -ge 5 ]
	ask ping
	ask wait
	for name in "${ROUND[@]}"; do
		ask report "$name"
		[ "$name" = busy ] || [ "$(field ok "$REPLY_LINE")" = 1 ]
	done
	ask report busy
	busy_kept
	ask report sigsuspend
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	# and a whole run afterwards sets every thread
	ask start
	sleep 0.3
	run "$PMP" --backend=ptrace -a --membind=0 -p "$BLOCKER_PID"
	[ "$status" -eq 0 ]
	check_round 2 0
	ask idle-check
	[ "$(field n "$REPLY_LINE")" = 300 ] && [ "$(field same "$REPLY_LINE")" = 300 ]
}

# vfork_start K N: a pmp-vfork process (K threads parked in vfork, N idle)
# on fifos; sets VFORK_PID.
vfork_start() {
	[ -x "$PMP_VFORK" ] || { echo "pmp-vfork not built ($PMP_VFORK)" >&2; false; }
	fifo_spawn "$BATS_TEST_TMPDIR/vfork-$1-$2" "$PMP_VFORK" "$1" "$2"
	BG_PIDS+=("$SPAWN_PID")
	local line
	IFS= read -r -t 60 -u "$SPAWN_R" line || {
		echo "pmp-vfork did not start: $(cat "$BATS_TEST_TMPDIR/vfork-$1-$2/stderr")" >&2
		return 1
	}
	VFORK_PID=${line#ready }
}

# traced_count PID: how many threads of PID are traced.
traced_count() {
	grep -l '^TracerPid:[[:space:]]*[1-9]' /proc/"$1"/task/*/status 2>/dev/null | wc -l
}

# ptrace-ahead.h: a thread that does not stop is waited for alongside the
# others, and once one has not, every thread left is interrupted at once.
@test "cli: --backend=ptrace -a, 20 threads that never stop (vfork parents): each named, waited for together, none left traced" {
	cli_ready
	vfork_start 20 50
	local vp=$VFORK_PID t0 ms t
	t0=${EPOCHREALTIME//[!0-9]/}
	run --separate-stderr "$PMP" --backend=ptrace -a --interleave=0 -p "$vp"
	ms=$(((${EPOCHREALTIME//[!0-9]/} - t0) / 1000))
	echo "status=$status in $ms ms"
	echo "$stderr"
	[ "$status" -eq 64 ]
	[ "$(grep -c ": did not stop for ptrace within 2 s (uninterruptible sleep? a vfork parent?); left unchanged$" <<<"$stderr")" -eq 20 ]
	[ "$(grep -c . <<<"$stderr")" -eq 20 ]
	# one after another they would take 20 x 2 s
	[ "$ms" -lt 20000 ]
	for t in $(tids_of "$vp"); do
		[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$vp/task/$t/status")" = 0 ]
		if [ "$(thread_state "$vp" "$t")" = D ]; then
			[ "$(task_policy "$vp" "$t")" = default ]
			grep -q "^pidmempolicy: failed to set tid $t (pmp-vfork) of pid $vp: did not stop" <<<"$stderr"
		else
			[ "$(task_policy "$vp" "$t")" = interleave:0 ]
		fi
	done
	[ "$(grep -l '^State:[[:space:]]*D' /proc/"$vp"/task/*/status | wc -l)" -eq 20 ]
}

# ptrace-tracer.h: the session's tracer ends with the process, so what
# never stopped is let go when the tool moves on, not when it exits.
@test "cli: --backend=ptrace, threads that never stopped are let go before the next process" {
	cli_ready
	vfork_start 5 20
	local first=$VFORK_PID second tool i seen=0
	vfork_start 1 20
	second=$VFORK_PID
	"$PMP" --backend=ptrace -a --interleave=0 -p "$first,$second" >/dev/null 2>&1 3>&- &
	tool=$!
	BG_PIDS+=("$tool")
	# while the tool waits for the second process's parked thread ...
	for i in $(seq 1000); do
		[ "$(traced_count "$second")" -gt 0 ] && { seen=1; break; }
		sleep 0.01
	done
	[ "$seen" = 1 ]
	# ... the first process has nothing traced any more
	traced_count "$first"
	[ "$(traced_count "$first")" -eq 0 ]
	wait "$tool" || true
	[ "$(traced_count "$second")" -eq 0 ]
}

@test "cli: --backend=ptrace with /proc mounted hidepid=2: another user's process is named hidden, not exited" {
	cli_ready
	require_fact "needs root and a mount of /proc with hidepid=2 in a new mount namespace" mounts_hidepid_proc
	local runas=$PMP_HELPER_DIR/pmp-runas
	sleep 300 3>&- &
	local victim=$!
	BG_PIDS+=("$victim")
	run --separate-stderr unshare -m --propagation private sh -c \
		'mount -t proc -o hidepid=2 proc /proc && exec "$@"' sh \
		"$runas" --uid=1000 -- "$PMP" --backend=ptrace --membind=0 -p "$victim"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid $victim: /proc hides pid $victim from this user (mounted with hidepid?); see PERMISSIONS in pidmempolicy(8)" ]
	! grep -v '^[0-9a-f]* default' "/proc/$victim/numa_maps"
}

@test "cli: --backend=ptrace -a on a thread inside an rseq critical section: set, and its section still aborts" {
	cli_ready
	rseq_start
	run --separate-stderr "$PMP" --backend=ptrace -a --interleave=0 -p "$BLOCKER_PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	ask report
	[ "$(field ok "$REPLY_LINE")" = 1 ]
	[ "$(field mode "$REPLY_LINE")" = 3 ]
	[ "$(task_policy "$BLOCKER_PID" "$RSEQ_TID")" = interleave:0 ]
}

@test "cli: --backend=ptrace refuses a 32-bit (compat) process by name, unchanged" {
	cli_ready
	require_fact "no 32-bit compiler (configure: CC32=false)" test "${PMP_CC32:-}" != false
	[ -x "$PMP_SLEEP32" ] || { echo "pmp-sleep32 not built ($PMP_SLEEP32)" >&2; false; }
	require_fact "host kernel runs no 32-bit programs" execs_32bit "$PMP_SLEEP32"
	local PMP_BLOCKER=$PMP_SLEEP32
	[ "$(od -An -j4 -N1 -tu1 "$PMP_BLOCKER" | tr -d " ")" = 1 ]	# ELFCLASS32
	blocker_start
	run --separate-stderr "$PMP" --backend=ptrace --membind=0 -p "$BLOCKER_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid $BLOCKER_PID (pmp-sleep32): tid $BLOCKER_PID is a 32-bit task; the ptrace backend does not inject into it" ]
	[ "$(task_policy "$BLOCKER_PID" "$BLOCKER_PID")" = default ]
	[ "$(thread_state "$BLOCKER_PID" "$BLOCKER_PID")" = S ]
}
