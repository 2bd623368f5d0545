#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# What the tool writes, as it reaches a terminal, a JSON reader or a full
# disk: a target's thread names escaped in every line (a failure, -v,
# --show) and carried whole in JSON; write errors reported; and the
# command line as people type it.
#
# The target is tests/helpers/pmp-target, its threads named with --name:
# C1 controls (CSI as the raw byte 0x9b and as U+009B in UTF-8), bidi
# controls, C0 controls, DEL, bytes that are not UTF-8, a backslash, and
# UTF-8 that must be kept.

load helpers

PMP_TARGET=$PMP_HELPER_DIR/pmp-target
case $(uname -m) in		# set_mempolicy(2), for pmp-seccomp
aarch64) NR_SET_MEMPOLICY=237 ;;
*) NR_SET_MEMPOLICY=238 ;;
esac

# The names the threads get (thread 0 is the main thread) and how a
# terminal must be shown them.
NAMES=(
	$'a\x9bb'				# CSI, a raw C1 byte
	$'c\xc2\x9bd'				# CSI as U+009B in UTF-8
	$'e\xe2\x80\xaef'			# U+202E RIGHT-TO-LEFT OVERRIDE
	$'caf\xc3\xa9\x1b[2J'			# UTF-8 kept, ESC escaped
	$'g\xff\\\x7f'				# not UTF-8, backslash, DEL
	$'\xe2\x81\xa6h\xe2\x80\x8f\xd8\x9c'	# U+2066, U+200F, U+061C
)
SHOWN=(
	'a\x9bb'
	'c\xc2\x9bd'
	'e\xe2\x80\xaef'
	$'caf\xc3\xa9\\x1b[2J'
	'g\xff\x5c\x7f'
	'\xe2\x81\xa6h\xe2\x80\x8f\xd8\x9c'
)
# ... and what JSON decodes to: the name itself where it is UTF-8, \xNN
# for each byte that is not (and for a backslash).
JSONED=(
	'a\x9bb'
	"${NAMES[1]}"
	"${NAMES[2]}"
	"${NAMES[3]}"
	$'g\\xff\\x5c\x7f'
	"${NAMES[5]}"
)

teardown() {
	[ -n "${TARGET_PID:-}" ] && kill -KILL "$TARGET_PID" 2>/dev/null
	[ -n "${CHILD_PID:-}" ] && kill -KILL "$CHILD_PID" 2>/dev/null
	stop_threaded
}

# start_named [WRAPPER... --]: pmp-target with a thread per name of NAMES,
# named so; sets TARGET_PID and TIDS (thread i's TID at index i).
start_named() {
	local -a wrapper=() args=()
	local n line
	if [ $# -gt 0 ]; then
		while [ "$1" != -- ]; do wrapper+=("$1"); shift; done
	fi
	for n in "${NAMES[@]}"; do
		args+=("--name=$(printf '%s' "$n" | od -An -tx1 | tr -d ' \n')")
	done
	mkfifo "$BATS_TEST_TMPDIR/in"
	exec {TARGET_IN}<>"$BATS_TEST_TMPDIR/in"
	"${wrapper[@]}" "$PMP_TARGET" --threads=$((${#NAMES[@]} - 1)) "${args[@]}" \
		<&"$TARGET_IN" >"$BATS_TEST_TMPDIR/target.out" 3>&- &
	TARGET_PID=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$BATS_TEST_TMPDIR/target.out" 2>/dev/null && break
		sleep 0.05
	done
	echo threads >&"$TARGET_IN"
	for _ in $(seq 100); do
		line=$(sed -n 2p "$BATS_TEST_TMPDIR/target.out")
		[ -n "$line" ] && break
		sleep 0.05
	done
	read -ra TIDS <<<"$line"
	[ "${#TIDS[@]}" -eq "${#NAMES[@]}" ]
	[ "${TIDS[0]}" = "$TARGET_PID" ]
}

# The bytes of a line that a terminal acts on: C0 but newline, DEL, C1.
no_control_bytes() {
	! printf '%s' "$1" | od -An -v -tx1 | tr ' ' '\n' | grep -qE '^(0[0-9b-f]|1[0-9a-f]|7f|[89][0-9a-f])$'
}

@test "names: the kernel gives the test the raw names (positive control)" {
	start_named
	for i in "${!NAMES[@]}"; do
		[ "$(cat "/proc/$TARGET_PID/task/${TIDS[$i]}/comm")" = "${NAMES[$i]}" ]
	done
}

@test "names: escaped in the lines of a dry run" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_named
	run --separate-stderr "$PMP" -n -a -l -p "$TARGET_PID"
	want=""
	for i in "${!NAMES[@]}"; do
		want+="would set tid ${TIDS[$i]} (${SHOWN[$i]}) of pid $TARGET_PID to local"$'\n'
	done
	diff <(printf '%s\n' "$output" | od -c) <(printf '%s' "$want" | od -c)
	no_control_bytes "$output"
}

@test "names: escaped in failure lines (a syscall-backend dry run without CAP_SYS_NICE)" {
	start_named
	run --separate-stderr setpriv --bounding-set=-sys_nice -- "$PMP" --backend=syscall -n -a -l -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	want=""
	for i in "${!NAMES[@]}"; do
		want+="pidmempolicy: would fail to set tid ${TIDS[$i]} (${SHOWN[$i]}) of pid $TARGET_PID: needs CAP_SYS_NICE (try sudo)"$'\n'
	done
	got=$(grep -v '^pidmempolicy: note:' <<<"$stderr")
	diff <(printf '%s\n' "$got" | od -c) <(printf '%s' "$want" | od -c)
	no_control_bytes "$stderr"
}

@test "names: escaped in the failure lines of a real run (ptrace, seccomp-filtered target)" {
	need_ptrace_arch
	start_named "$PMP_SECCOMP" --deny=$NR_SET_MEMPOLICY -- --
	run --separate-stderr "$PMP" --backend=ptrace -a --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	want=""
	for i in "${!NAMES[@]}"; do
		want+="pidmempolicy: failed to set tid ${TIDS[$i]} (${SHOWN[$i]}) of pid $TARGET_PID: tid ${TIDS[$i]} runs under a seccomp filter that might kill it on set_mempolicy(2); left alone (--allow-seccomp overrides)"$'\n'
	done
	diff <(printf '%s\n' "$stderr" | od -c) <(printf '%s' "$want" | od -c)
}

@test "names: escaped in -v lines of a real run (ptrace)" {
	need_ptrace_arch
	start_named
	run --separate-stderr "$PMP" --backend=ptrace -v -a --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	want=""
	for i in "${!NAMES[@]}"; do
		want+="set tid ${TIDS[$i]} (${SHOWN[$i]}) of pid $TARGET_PID to bind:0 (was default)"$'\n'
	done
	want+="backend: ptrace (--backend=ptrace)"$'\n'
	want+="${#NAMES[@]} set, 0 failed, 0 exited"$'\n'
	diff <(printf '%s\n' "$output" | od -c) <(printf '%s' "$want" | od -c)
}

@test "names: escaped in the --show table" {
	start_named
	run --separate-stderr "$PMP" --show -a -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq $((${#NAMES[@]} + 1)) ]
	for i in "${!NAMES[@]}"; do
		read -r pid tid comm _ <<<"${lines[$((i + 1))]}"
		[ "$pid $tid" = "$TARGET_PID ${TIDS[$i]}" ]
		[ "$comm" = "${SHOWN[$i]}" ] || { echo "got [$comm] want [${SHOWN[$i]}]"; false; }
	done
	no_control_bytes "$output"
}

@test "json: names read back with jq as the threads have them; bytes not UTF-8 as \\xNN" {
	start_named
	run --separate-stderr "$PMP" --show --json -a -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	no_control_bytes "$output"
	jq -e . <<<"$output" >/dev/null
	for i in "${!NAMES[@]}"; do
		got=$(jq -r --argjson t "${TIDS[$i]}" '.threads[] | select(.tid == $t) | .comm' <<<"$output")
		diff <(printf '%s' "$got" | od -c) <(printf '%s' "${JSONED[$i]}" | od -c)
	done
}

@test "json: a dry run's document carries the names too" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_named
	run --separate-stderr "$PMP" -n --json -a -l -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.threads[0].comm' <<<"$output")" = "${JSONED[0]}" ]
	[ "$(jq -r '.threads[3].comm' <<<"$output")" = "${JSONED[3]}" ]
	[ "$(jq -r '.threads[3].result' <<<"$output")" = would-set ]
}

# ---- write errors -----------------------------------------------------------

# start_child: a sleeping process of the test's own to set.
start_child() {
	sleep 300 3>&- &
	CHILD_PID=$!
}

policy_of() {
	awk 'NR == 1 { print $2 }' "/proc/$1/task/$1/numa_maps"
}

# run_redirected REDIRECTION ARGS...: the tool with its standard output
# redirected so (">/dev/full", ">&-").
run_redirected() {
	local redir=$1; shift
	run --separate-stderr bash -c "exec \"\$@\" $redir" _ "$PMP" "$@"
	echo "status=$status stderr=[$stderr]"
}

# set_redirected REDIRECTION POLICY_OPTION POLICY REASON: a -v run that
# sets the child through ptrace, its output redirected so: the write error
# named, yet status 0 and the policy set.
set_redirected() {
	need_ptrace_arch
	start_child
	run_redirected "$1" --backend=ptrace -v "$2" -p "$CHILD_PID"
	[ "$status" -eq 0 ]
	[ "$stderr" = "pidmempolicy: write error: $4" ]
	[ "$(policy_of "$CHILD_PID")" = "$3" ]
}

@test "write error: a run that set its target on /dev/full says so and keeps status 0" {
	set_redirected '>/dev/full' --membind=0 bind:0 "No space left on device"
}

@test "write error: a run that set its target with stdout closed says so and keeps status 0" {
	set_redirected '>&-' --interleave=0 interleave:0 "Bad file descriptor"
}

@test "write error: --json of a run that set its target keeps its status too" {
	need_ptrace_arch
	start_child
	run_redirected '>/dev/full' --backend=ptrace --json --membind=0 -p "$CHILD_PID"
	[ "$status" -eq 0 ]
	[ "$stderr" = "pidmempolicy: write error: No space left on device" ]
}

@test "write error: a run with nothing to print has no write error" {
	need_ptrace_arch
	start_child
	run_redirected '>&-' --backend=ptrace --membind=0 -p "$CHILD_PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(policy_of "$CHILD_PID")" = bind:0 ]
}

@test "write error: a dry run, which changes nothing, exits 1" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_child
	run_redirected '>/dev/full' -n -l -p "$CHILD_PID"
	[ "$status" -eq 1 ]
	[ "${stderr_lines[-1]}" = "pidmempolicy: write error: No space left on device" ]
	run_redirected '>&-' -n -l -p "$CHILD_PID"
	[ "$status" -eq 1 ]
	[ "${stderr_lines[-1]}" = "pidmempolicy: write error: Bad file descriptor" ]
}

@test "write error: --show exits 1" {
	start_child
	run_redirected '>/dev/full' --show -p "$CHILD_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: write error: No space left on device" ]
	run_redirected '>&-' --show --json -p "$CHILD_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: write error: Bad file descriptor" ]
}

@test "write error: --help and --version on /dev/full exit 1" {
	run_redirected '>/dev/full' --help
	[ "$status" -eq 1 ]
	# the help is longer than stdout's buffer: the write that failed was
	# an earlier one, whose errno stdio does not keep
	[[ $stderr =~ ^"pidmempolicy: write error"(": No space left on device")?$ ]]
	run_redirected '>/dev/full' --version
	[ "$status" -eq 1 ]
}

@test "a reader that went away: the run is not killed midway, nothing reported" {
	need_ptrace_arch
	start_threaded 3
	# a pipe whose read end is closed before the tool starts; SIGPIPE at
	# its default, as a shell leaves it
	run --separate-stderr python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
sys.stderr.write(p.stderr.decode())
sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)' \
		"$PMP" --backend=ptrace -v -a --membind=0 -p "$THREADED_PID"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	for t in /proc/$THREADED_PID/task/*; do
		[ "$(awk 'NR == 1 { print $2 }' "$t/numa_maps")" = bind:0 ]
	done
}

# ---- the command line as people type it ---------------------------------

@test "a PID named twice is acted on once, in one list or across -p" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	run --separate-stderr "$PMP" -n -l -p "$$,$$" -p "$$"
	[ "$status" -eq 0 ]
	[ "$output" = "would set pid $$ (bash) to local" ]
}

@test "named twice: the places first named are kept, in order" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_child
	run --separate-stderr "$PMP" -n -l -p "$CHILD_PID,$$" -p "$CHILD_PID,$$"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "would set pid $CHILD_PID (sleep) to local" ]
	[ "${lines[1]}" = "would set pid $$ (bash) to local" ]
}

@test "PID then PID:INODE of it: one action, and the pin holds" {
	run --separate-stderr "$PMP" -n -l -p "$$" -p "$$:1"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == *"pidmempolicy: would fail to set pid $$: pid $$ is another process now"* ||
	   "$stderr" == *"this kernel cannot pin PID:INODE"* ]]
	[ "$(grep -c 'would fail' <<<"$stderr")" -eq 1 ]
}

@test "a real run of one PID named three times sets it once" {
	need_ptrace_arch
	start_child
	run --separate-stderr "$PMP" --backend=ptrace -v --membind=0 -p "$CHILD_PID,$CHILD_PID" -p "$CHILD_PID"
	[ "$status" -eq 0 ]
	[ "$output" = "set pid $CHILD_PID (sleep) to bind:0 (was default)"$'\n'"backend: ptrace (--backend=ptrace)"$'\n'"1 set, 0 failed, 0 exited" ]
}

@test "--all is --all-threads" {
	require_fact "the caller lacks CAP_SYS_NICE, so a dry run foresees a refusal (run as root)" has_cap 23
	start_threaded 2
	run --separate-stderr "$PMP" -n --all -l -p "$THREADED_PID"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[2]}" == "would set tid "*" (python3) of pid $THREADED_PID to local" ]]
}

# ---- messages that say what is true -------------------------------------

PMP_RUNAS=$PMP_HELPER_DIR/pmp-runas

@test "--show of another user's process, /proc not hidepid: the ptrace check, not hidepid, is named" {
	require_fact "runs the tool as another user: needs CAP_SETUID (run as root)" has_cap 7
	if awk '$5 == "/proc" { p = $0 } END { exit !(p ~ / - proc .*hidepid=([1-9]|noaccess|invisible|ptraceable)/) }' \
		/proc/self/mountinfo; then
		skip "this host's /proc is mounted hidepid"
	fi
	start_child
	run --separate-stderr "$PMP_RUNAS" --uid=1000 -- "$PMP" --show -p "$CHILD_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to read pid $CHILD_PID (sleep): not allowed to read the memory map of pid $CHILD_PID (ptrace access mode check; see PERMISSIONS in pidmempolicy(8))" ]
}

@test "--show with /proc mounted hidepid=2: hidepid is named" {
	require_fact "runs the tool as another user: needs CAP_SETUID (run as root)" has_cap 7
	command -v unshare >/dev/null || skip "no unshare(1)"
	start_child
	run --separate-stderr unshare -m --propagation private sh -c \
		'mount -t proc -o hidepid=2 proc /proc && exec "$@"' sh \
		"$PMP_RUNAS" --uid=1000 -- "$PMP" --show -p "$CHILD_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to read pid $CHILD_PID: /proc hides pid $CHILD_PID from this user (mounted with hidepid?); see PERMISSIONS in pidmempolicy(8)" ]
}

# start_leader_exited: pmp-target whose main thread has exited, two
# workers running.
start_leader_exited() {
	mkfifo "$BATS_TEST_TMPDIR/in"
	exec {TARGET_IN}<>"$BATS_TEST_TMPDIR/in"
	"$PMP_TARGET" --threads=2 --leader-exit <&"$TARGET_IN" >"$BATS_TEST_TMPDIR/target.out" 3>&- &
	TARGET_PID=$!
	for _ in $(seq 100); do
		[ "$(awk '/^State:/ { print $2 }' "/proc/$TARGET_PID/status" 2>/dev/null)" = Z ] && return 0
		sleep 0.05
	done
	false
}

MAIN_EXITED='the main thread of pid %s has exited; its other threads run (use -a)'

@test "a process whose main thread exited is not called exited: set (ptrace), dry run, --show" {
	start_leader_exited
	why=$(printf "$MAIN_EXITED" "$TARGET_PID")
	run --separate-stderr "$PMP" -n -l -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[ "${stderr_lines[-1]}" = "pidmempolicy: would fail to set pid $TARGET_PID (pmp-target): $why" ]
	run --separate-stderr "$PMP" --show -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to read pid $TARGET_PID (pmp-target): $why" ]
	need_ptrace_arch
	run --separate-stderr "$PMP" --backend=ptrace -l -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid $TARGET_PID (pmp-target): $why" ]
}

@test "a process whose main thread exited: -a sets its threads, --show -a counts its pages" {
	need_ptrace_arch
	start_leader_exited
	run --separate-stderr "$PMP" --backend=ptrace -v -a --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "3 set, 0 failed, 1 exited" ]
	run --separate-stderr "$PMP" --show -a -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	read -r _ tid _ _ _ <<<"${lines[2]}"
	[ "$tid" != "$TARGET_PID" ]
	run --separate-stderr "$PMP" --show=processes --raw --noheadings -o threads,n0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	read -r threads pages <<<"$output"
	[ "$threads" -eq 4 ]
	[ "$pages" -gt 0 ] || { echo "no pages: $output"; false; }
}

@test "the tool's own PID is named as the tool itself (ptrace)" {
	need_ptrace_arch
	run --separate-stderr bash -c 'exec "$0" --backend=ptrace -l -p $$' "$PMP"
	[ "$status" -eq 1 ]
	[[ "$stderr" =~ ^pidmempolicy:\ failed\ to\ set\ pid\ ([0-9]+)\ .*:\ pid\ ([0-9]+)\ is\ pidmempolicy\ itself\;\ the\ ptrace\ backend\ cannot\ trace\ it$ ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
}

@test "--json with the ptrace backend: how long each thread was held; a dry run holds none" {
	need_ptrace_arch
	start_threaded 3
	run --separate-stderr "$PMP" --backend=ptrace --json -a --interleave=0 -p "$THREADED_PID"
	[ "$status" -eq 0 ]
	[ "$(jq '[.threads[] | select(.result == "set" and (.held_us | type) == "number" and .held_us >= 0)] | length' <<<"$output")" -eq 4 ]
	run --separate-stderr "$PMP" --backend=ptrace --json -n -a --interleave=0 -p "$THREADED_PID"
	[ "$status" -eq 0 ]
	[ "$(jq '[.threads[] | select(has("held_us"))] | length' <<<"$output")" -eq 0 ]
	[ "$(jq -r .backend <<<"$output")" = ptrace ]
}

@test "the default backend on this kernel: ptrace sets it, -v and --json say so, 451 never called" {
	require_fact "host kernel provides pidfd_set_mempolicy: this test needs a stock kernel" stock_kernel
	require_fact "$(why_no_ptrace)" ptraces_non_child "$PMP_HELPER_DIR/pmp-hold"
	sleep 60 3>&- &
	pid=$!
	run --separate-stderr "$PMP_SECCOMP" --deny=451 -- "$PMP" -v --interleave=0 -p "$pid"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "set pid $pid (sleep) to interleave:0 (was default)" ]
	[ "${lines[1]}" = "backend: ptrace (this kernel does not provide pidfd_set_mempolicy(2): /proc/kallsyms names no sys_pidfd_set_mempolicy)" ]
	[ "$(task_policy "$pid" "$pid")" = interleave:0 ]
	run --separate-stderr "$PMP_SECCOMP" --deny=451 -- "$PMP" --json --membind=0 -p "$pid"
	[ "$status" -eq 0 ]
	[ "$(jq -r .backend <<<"$output")" = ptrace ]
	[ "$(task_policy "$pid" "$pid")" = bind:0 ]
	run --separate-stderr "$PMP" --backend=syscall --json --membind=0 -p "$pid"
	[ "$status" -eq 2 ]
	kill "$pid"
}
