#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# PID reuse: a process exits and another takes its PID between the moment
# the admin looked and the moment the tool acts.  PID:INODE pins the first
# process; the newcomer must be left untouched.  The newcomer really gets
# the old PID (through /proc/sys/kernel/ns_last_pid), and the tool really
# acts (the ptrace backend, which works on this stock kernel).

load helpers

setup_file() {
	PTRACE_OK=0
	ptraces_non_child "$PMP_HELPER_DIR/pmp-hold" || PTRACE_OK=$?
	PTRACE_OK_WHY=$(why_no_ptrace)
	export PTRACE_OK PTRACE_OK_WHY
}

setup() {
	[ -x "$PMP_HELPER_DIR/pmp-hold" ] || { echo "pmp-hold not built" >&2; false; }
	require_fact "$PTRACE_OK_WHY" probed "$PTRACE_OK"
}

teardown() {
	[ -n "${NEW_PID:-}" ] && kill "$NEW_PID" 2>/dev/null
	wait 2>/dev/null || true
}

# spawn_with_pid PID: start a sleeping process with exactly that PID, or fail
spawn_with_pid() {
	local want=$1 i
	for i in $(seq 50); do
		echo $((want - 1)) > /proc/sys/kernel/ns_last_pid
		sleep 300 &
		if [ "$!" -eq "$want" ]; then
			NEW_PID=$!
			return 0
		fi
		kill "$!"
	done
	return 1
}

@test "PID:INODE of an exited process whose PID was reused: refused, the newcomer untouched" {
	# the file is mode 0666, but a write needs CAP_SYS_ADMIN: ask by writing
	# the value it has, which moves nothing
	require_fact "/proc/sys/kernel/ns_last_pid is not writable here (needs root in this PID namespace)" \
		sh -c 'v=$(cat /proc/sys/kernel/ns_last_pid) && echo "$v" > /proc/sys/kernel/ns_last_pid' 2>/dev/null
	python3 -c 'import os, sys; fd = os.pidfd_open(os.getpid()); print(os.getpid(), os.fstat(fd).st_ino)' > "$BATS_TEST_TMPDIR/old"
	read -r old_pid old_inode < "$BATS_TEST_TMPDIR/old"
	# the first process is gone; a newcomer takes its PID
	spawn_with_pid "$old_pid"
	[ "$NEW_PID" -eq "$old_pid" ]
	run --separate-stderr "$PMP" --backend=ptrace --membind=0 -p "$old_pid:$old_inode"
	echo "$stderr"
	if [ "$(pidfd_inode $$)" = "$(pidfd_inode 1)" ]; then
		# no pidfs (before Linux 6.9): pinning is refused outright
		[[ "$stderr" == *"this kernel cannot pin PID:INODE"* ]]
	else
		[ "$stderr" = "pidmempolicy: failed to set pid $old_pid: pid $old_pid is another process now (its pidfd inode is $(pidfd_inode "$NEW_PID"))" ]
	fi
	[ "$status" -eq 1 ]
	! grep -v '^[0-9a-f]* default' "/proc/$NEW_PID/numa_maps"
}

@test "PID:INODE of the live process itself: acted on" {
	sleep 300 &
	NEW_PID=$!
	run --separate-stderr "$PMP" --backend=ptrace --membind=0 -p "$NEW_PID:$(pidfd_inode "$NEW_PID")"
	[ "$status" -eq 0 ]
	[ "$(head -1 /proc/$NEW_PID/numa_maps | cut -d' ' -f2)" = "bind:0" ]
}
