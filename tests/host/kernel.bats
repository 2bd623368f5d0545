#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# On this stock kernel pidfd_set_mempolicy does not exist, and syscall 451 is
# cachestat (Linux >= 6.5).  With --backend=syscall the tool must say so,
# exit 2, and never issue an unverified number: seccomp would kill it
# (status 159) if it did.  (By default it sets through ptrace:
# output.bats, which valgrind does not follow, tests that.)

load helpers

NOT_PROVIDED="pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): /proc/kallsyms names no sys_pidfd_set_mempolicy (--backend=ptrace works without it)"

setup() {
	require_fact "host kernel provides pidfd_set_mempolicy: these are the stock-kernel tests" stock_kernel
}

@test "the seccomp guard really kills a process that calls 451 (positive control)" {
	run "$PMP_SECCOMP" --deny=451 -- python3 -c 'import ctypes; ctypes.CDLL(None).syscall(451, -1, 0, 0, 0, 1)'
	[ "$status" -eq 159 ]
}

@test "stock kernel: exit 2 with the reason, and 451 never called" {
	run --separate-stderr "$PMP_SECCOMP" --deny=451 -- "$PMP" --backend=syscall --interleave=0 -p $$
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "$NOT_PROVIDED" ]
}

@test "stock kernel: the run-time override to 451 is refused the same way" {
	PIDMEMPOLICY_SYSCALL_NR=451 run --separate-stderr "$PMP_SECCOMP" --deny=451 -- "$PMP" --backend=syscall -a --membind=0 -p $$
	[ "$status" -eq 2 ]
	[ "$stderr" = "$NOT_PROVIDED" ]
}

@test "stock kernel: every number in the new-syscall range is refused without a call" {
	for nr in 435 440 449 450 451 452 462 463 470; do
		PIDMEMPOLICY_SYSCALL_NR=$nr run --separate-stderr "$PMP_SECCOMP" --deny="$nr" -- "$PMP" --backend=syscall -l -p $$
		echo "nr=$nr status=$status stderr=$stderr"
		[ "$status" -eq 2 ]
		[ "$stderr" = "$NOT_PROVIDED" ]
	done
}

@test "strace sees no call of 451 (cachestat) nor of any unknown number" {
	command -v strace >/dev/null
	# LeakSanitizer (in a sanitizer build) cannot stop the world under a tracer
	ASAN_OPTIONS=detect_leaks=0 run strace -f -qq -o "$BATS_TEST_TMPDIR/trace" "$PMP" --backend=syscall --interleave=0 -p $$
	[ "$status" -eq 2 ]
	grep -q 'kallsyms' "$BATS_TEST_TMPDIR/trace"
	! grep -E 'cachestat|syscall_0x|pidfd_open' "$BATS_TEST_TMPDIR/trace"
}

@test "a number older than pidfd_open is refused before anything" {
	PIDMEMPOLICY_SYSCALL_NR=60 run --separate-stderr "$PMP_SECCOMP" --deny=60 -- "$PMP" --backend=syscall -l -p $$
	[ "$status" -eq 2 ]
	[ "$stderr" = "pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): syscall 60 (from PIDMEMPOLICY_SYSCALL_NR) is older than pidfd_open and cannot be it (--backend=ptrace works without it)" ]
}

@test "a malformed override is refused" {
	PIDMEMPOLICY_SYSCALL_NR=45x run --separate-stderr "$PMP" --backend=syscall -l -p $$
	[ "$status" -eq 2 ]
	[ "$stderr" = "pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): PIDMEMPOLICY_SYSCALL_NR='45x' is not a syscall number (--backend=ptrace works without it)" ]
}

@test "usage errors still win over the missing syscall (exit 1, not 2)" {
	run --separate-stderr "$PMP" -i 0 -m 0 -p $$
	[ "$status" -eq 1 ]
}

@test "the target is untouched: its numa_maps still show the default policy" {
	sleep 60 &
	pid=$!
	run "$PMP" --backend=syscall --interleave=0 -p "$pid"
	[ "$status" -eq 2 ]
	! grep -v '^[0-9a-f]* default' "/proc/$pid/numa_maps" || false
	kill "$pid"
}

