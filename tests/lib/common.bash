# SPDX-License-Identifier: GPL-2.0-or-later
# common.bash - helpers shared by the host suites (tests/host/helpers.bash)
# and the guest suites (tests/guest/lib.bash).  Both load it with
# `load ../lib/common`: in the source tree from tests/host or tests/guest,
# in the QEMU guest from /opt/pmp/tests (mkinitramfs.sh puts this file in
# /opt/pmp/lib).
#
# Facts of the machine a test needs:
#   require_fact REASON PROBE [ARGS...]
#       Run PROBE: status 0, the fact holds and the test goes on; status 1,
#       it does not: on a host the test is skipped with REASON (in TAP), in
#       the QEMU guest (PMP_GUEST=1, exported by its /init), whose kernel
#       and userland the rig chose so that every such fact holds, the test
#       fails.  Any other status is a broken probe: the test fails.
#   Probes: execs_32bit PROG, ptraces_non_child HOLD, is_kthreadd PID,
#   stock_kernel, mounts_hidepid_proc, and probed STATUS (a probe's status
#   saved earlier, e.g. in setup_file).
#
# Processes:
#   task_policy PID [TID]   the task policy of a thread as numa_maps shows it
#   thread_state PID TID    its state letter (R, S, T, t, Z, ...)
#   tids_of PID             its thread ids, sorted
#   wait_untraced PID       until no thread of PID is traced (5 s at most)
#   wait_settled PID        until none is stopped or fully blocked (1 s)
#   kill_tool PID           SIGKILL the tool, its tracing processes noted
#   wait_tracers_done       until those have exited (10 s at most)
#   fifo_spawn DIR CMD...   CMD in the background on fifos (see below)

in_guest() { [ "${PMP_GUEST:-0}" = 1 ]; }

require_fact() {
	local reason=$1 rc=0
	shift
	"$@" || rc=$?
	[ "$rc" -ne 0 ] || return 0
	if [ "$rc" -ne 1 ]; then
		printf 'common.bash: probe "%s" broke (status %s)\n' "$*" "$rc" >&2
		return 1
	fi
	if in_guest; then
		printf 'common.bash: the guest must provide this, but: %s\n' "$reason" >&2
		return 1
	fi
	skip "$reason"
}

probed() { return "$1"; }

# execs_32bit PROG: the kernel runs PROG, a static 32-bit program that exits
# at once given --probe.  A kernel without IA32 emulation (arm64: without
# COMPAT) refuses to exec it with ENOEXEC, which bash reports as "Exec
# format error".
execs_32bit() {
	local err
	err=$("$1" --probe 2>&1 >/dev/null) && return 0
	case $err in
	*"Exec format error"*) return 1 ;;
	esac
	printf '%s --probe: %s\n' "$1" "$err" >&2
	return 2
}

# ptraces_non_child HOLD: this process's user may PTRACE_SEIZE a process it
# did not start (what the ptrace backend does to its targets), shown by
# HOLD (tests/helpers/pmp-hold) on a sleeping child of this shell.  Yama's
# ptrace_scope 1 or 2 without CAP_SYS_PTRACE, or 3, forbid it (EPERM).
ptraces_non_child() {
	local hold=$1 out=${BATS_FILE_TMPDIR:-${TMPDIR:-/tmp}}/ptrace-probe.$$ victim holder rc=1
	sleep 30 3>&- &
	victim=$!
	"$hold" "$victim" >"$out" 2>&1 3>&- &
	holder=$!
	for _ in $(seq 200); do
		grep -q '^holding ' "$out" && { rc=0; break; }
		kill -0 "$holder" 2>/dev/null || break
		sleep 0.05
	done
	grep -q '^holding ' "$out" && rc=0
	kill -KILL "$holder" "$victim" 2>/dev/null || true
	wait "$holder" "$victim" 2>/dev/null || true
	if [ "$rc" -ne 0 ] && ! grep -q 'Operation not permitted' "$out"; then
		cat "$out" >&2
		rc=2
	fi
	rm -f "$out"
	return "$rc"
}

# why_no_ptrace: the reason for a skip when ptraces_non_child says no
why_no_ptrace() {
	local scope
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)
	echo "ptrace of a non-child process is not permitted here (Yama ptrace_scope=$scope, uid $(id -u))"
}

# is_kthreadd PID: PID is the kernel's kthreadd (2 outside a PID namespace)
# has_cap CAP_NUMBER: the effective set of this shell holds the capability
# (CAP_SYS_NICE is 23, CAP_SETUID 7, CAP_SYS_ADMIN 21).
has_cap() {
	local eff
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status) || return 2
	(( (16#$eff >> $1) & 1 ))
}

is_kthreadd() {
	[ "$(awk '{ print $2 }' "/proc/$1/stat" 2>/dev/null)" = "(kthreadd)" ]
}

# stock_kernel: the running kernel has no pidfd_set_mempolicy(2)
stock_kernel() {
	! grep -q 'sys_pidfd_set_mempolicy$' /proc/kallsyms
}

# mounts_hidepid_proc: root can mount a /proc with hidepid=2 in a mount
# namespace of its own (not in an unprivileged container)
mounts_hidepid_proc() {
	[ "$(id -u)" -eq 0 ] &&
		unshare -m --propagation private sh -c 'mount -t proc -o hidepid=2 proc /proc' 2>/dev/null
}

# task_policy PID [TID]: the task memory policy of thread TID (default PID)
# as numa_maps shows it, e.g. "default", "interleave:0-3", "bind:1",
# "prefer:2", "local", "prefer (many):0-1", "weighted interleave:0-3".  It is
# the FIRST line of /proc/PID/task/TID/numa_maps (the executable's first
# mapping): numa_maps prints the task policy of the thread for every mapping
# that has no VMA policy of its own, and no helper program ever sets a VMA
# policy on its executable.
task_policy() {
	[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: task_policy PID [TID]" >&2; return 2; }
	local pid=$1 tid=${2:-$1} line
	IFS= read -r line <"/proc/$pid/task/$tid/numa_maps" || {
		echo "cannot read /proc/$pid/task/$tid/numa_maps" >&2
		return 1
	}
	numa_maps_policy "$line"
}

# numa_maps_policy LINE: the policy field of a numa_maps line, its second
# column; it has a space only for MPOL_PREFERRED_MANY ("prefer (many):0-1",
# "prefer (many)=static:1") and (6.8+) MPOL_WEIGHTED_INTERLEAVE ("weighted
# interleave:0-3").
numa_maps_policy() {
	local -a w
	read -r -a w <<<"$1"
	if [ "${w[1]:-}" = prefer ] && [[ ${w[2]:-} == "(many)"* ]]; then
		echo "${w[1]} ${w[2]}"
	elif [ "${w[1]:-}" = weighted ] && [[ ${w[2]:-} == interleave* ]]; then
		echo "${w[1]} ${w[2]}"
	else
		echo "${w[1]:-}"
	fi
}

thread_state() {
	awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/task/$2/stat"
}

tids_of() {
	ls "/proc/$1/task" | sort -n
}

# kill_tool PID: SIGKILL the tool, noting first the tracing processes it
# made (its children, src/ptrace-tracer.h), which outlive it to finish the
# thread in hand and take out what the tool put in; TOOL_TRACERS holds
# them.  The tool is stopped for the reading, so that none is made
# between it and the kill.
kill_tool() {
	TOOL_TRACERS=
	kill -STOP "$1" 2>/dev/null || return 0
	TOOL_TRACERS=$(cat /proc/"$1"/task/*/children 2>/dev/null || true)
	kill -KILL "$1" 2>/dev/null || true
}

# wait_tracers_done: wait (10 s at most) until each of TOOL_TRACERS has
# exited (a zombie its new parent has not reaped yet counts).  No thread
# traced at one instant does not say that: a tracing process notices the
# tool's death only within 50 ms, and lets go of each thread before it
# holds the next.
wait_tracers_done() {
	local i p st left
	for i in $(seq 200); do
		left=
		for p in $TOOL_TRACERS; do
			st=$(awk '/^State:/ { print $2 }' "/proc/$p/status" 2>/dev/null || true)
			if [ -n "$st" ] && [ "$st" != Z ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = pidmempolicy ]; then
				left="$left $p"
			fi
		done
		[ -n "$left" ] || return 0
		sleep 0.05
	done
	echo "tracing processes still at work after 10 s:$left" >&2
	return 1
}

# wait_untraced PID: wait (5 s at most) until no thread of PID is traced:
# a SIGKILLed tool's tracing process lets go once it has finished the
# thread in hand (src/ptrace-tracer.h).  Fails naming the threads still
# traced, and by whom.
wait_untraced() {
	local i traced
	for i in $(seq 100); do
		# a thread that ends between the glob and its read makes grep
		# answer 2 whatever it found: the lines found are the answer
		traced=$(grep -H '^TracerPid:[[:space:]]*[1-9]' /proc/"$1"/task/*/status 2>/dev/null || true)
		[ -n "$traced" ] || return 0
		sleep 0.05
	done
	echo "still traced after 5 s: $traced" >&2
	return 1
}

# wait_settled PID: wait (1 s at most) until no thread of PID is in a
# tracing stop and none blocks every signal (SigBlk with all but SIGKILL
# and SIGSTOP, as an injection blocks them).  A thread the kernel let go
# of when its tracer exited shows 't' until it next runs, so a moment's
# look is not the answer; a mask left blocked stays so.  Fails naming
# each such thread: its name, state, masks, tracer and system call.
wait_settled() {
	local i left f
	for i in $(seq 20); do
		left=$(grep -lE '^(State:[[:space:]]*[Tt]|SigBlk:[[:space:]]*fffffffffffbfeff$)' \
			/proc/"$1"/task/*/status 2>/dev/null || true)
		[ -n "$left" ] || return 0
		sleep 0.05
	done
	echo "threads of $1 still stopped or with every signal blocked after 1 s:" >&2
	for f in $left; do
		echo "  ${f%/status}: $(grep -E '^(Name|State|SigBlk|SigPnd|TracerPid):' "$f" 2>/dev/null |
			tr -s '\t\n' '  ') syscall=$(cat "${f%/status}/syscall" 2>/dev/null)" >&2
	done
	return 1
}

# fifo_spawn DIR CMD...: start CMD in the background with its stdin and
# stdout on the fifos DIR/in and DIR/out and its stderr in DIR/stderr.
# Sets SPAWN_PID, and SPAWN_W and SPAWN_R: this shell's descriptors that
# write to its stdin and read its stdout (opening a fifo read-write never
# blocks, so nothing here can hang).  The child closes them, and every
# descriptor named in the array SPAWN_CLOSE (another helper's, say).
fifo_spawn() {
	local dir=$1 fd
	shift
	mkdir -p "$dir"
	mkfifo "$dir/in" "$dir/out"
	exec {SPAWN_W}<>"$dir/in" {SPAWN_R}<>"$dir/out"
	local close=(${SPAWN_CLOSE[@]+"${SPAWN_CLOSE[@]}"} "$SPAWN_W" "$SPAWN_R")
	(
		for fd in "${close[@]}"; do
			eval "exec $fd>&-"
		done
		exec "$@" <"$dir/in" >"$dir/out" 2>"$dir/stderr" 3>&-
	) &
	SPAWN_PID=$!
}
