#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The signal engine (src/sigengine.h) on stock kernels, where it is the
# default path for -a: stock 6.1 and 6.12 (x86_64) and Debian's stock arm64
# 6.1.  One thread of a process of futex waiters is stopped to put the
# handler in; every other one sets its own policy in the handler.  The
# tool runs under a seccomp filter that kills it on 451 and 463 (the
# numbers pidfd_set_mempolicy has had), and numa_maps proves each thread's
# policy.  No jq: the arm64 guest has none.

load lib
bats_require_minimum_version 1.5.0

setup() {
	only_on stock
}

# count WORD: how many times WORD is in $output
count() {
	grep -o -- "$1" <<<"$output" | wc -l
}

@test "stock: the signal engine sets 40 futex waiters by signal, 1 by ptrace; 451 and 463 never called" {
	guard_kills_raw_call 451
	target_stop
	target_start --exec=pmp-threads --arg=--wait=futex --arg=40
	sigcgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$TARGET_PID/status")
	run --separate-stderr pmp-seccomp --deny=451,463 -- "$PMP" --json -a --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status stderr=[$stderr]"
	echo "$output" | head -c 2000
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ $output == *'"backend":"ptrace"'* ]]
	[[ $output == *'"totals":{"done":41,"failed":0,'* ]]
	[ "$(count '"path":"signal"')" -eq 40 ]
	[ "$(count '"path":"ptrace","path_why":"the signal handler was put in through it"')" -eq 1 ]
	[ "$(count '"interrupted_call":false')" -eq 40 ]
	local t n=0
	for t in $(tids_of "$TARGET_PID"); do
		[ "$(task_policy "$TARGET_PID" "$t")" = interleave:0-3 ]
		n=$((n + 1))
	done
	[ "$n" -eq 41 ]
	# nothing of the engine stays: no region, the handlers as before, untraced
	! grep -q 'memfd:pidmempolicy' "/proc/$TARGET_PID/maps" || false
	[ "$(awk '/^SigCgt:/ { print $2 }' "/proc/$TARGET_PID/status")" = "$sigcgt" ]
	! grep -qE '^TracerPid:[[:space:]]*[1-9]' /proc/"$TARGET_PID"/task/*/status
}

@test "stock: --no-signal sets the same 41 threads each by ptrace, under the same filter" {
	target_start --exec=pmp-threads --arg=--wait=futex --arg=40
	run --separate-stderr pmp-seccomp --deny=451,463 -- "$PMP" --json --no-signal -a --membind=2 -p "$TARGET_PID"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ $output == *'"totals":{"done":41,"failed":0,'* ]]
	[ "$(count '"path":"signal"')" -eq 0 ]
	[ "$(count '"path":"ptrace"')" -eq 41 ]
	local t
	for t in $(tids_of "$TARGET_PID"); do
		[ "$(task_policy "$TARGET_PID" "$t")" = bind:2 ]
	done
}
