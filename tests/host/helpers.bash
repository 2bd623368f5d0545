# SPDX-License-Identifier: GPL-2.0-or-later
# helpers.bash - common setup for the host bats suites.
# The harness (make check) exports PIDMEMPOLICY, PMP_BUILDDIR and PMP_SRCDIR;
# run by hand, they default to an in-tree build.  Inside a QEMU guest (the
# arm64 rig runs ptrace.bats there) the guest's /init exports PMP_TOOL and
# PMP_HELPERS instead.

bats_require_minimum_version 1.5.0
load ../lib/common

PMP_SRCDIR=${PMP_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
PMP_BUILDDIR=${PMP_BUILDDIR:-$PMP_SRCDIR}
PMP=${PIDMEMPOLICY:-${PMP_TOOL:-$PMP_BUILDDIR/src/pidmempolicy}}
PMP_HELPER_DIR=${PMP_HELPERS:-$PMP_BUILDDIR/tests/helpers}
PMP_SECCOMP=$PMP_HELPER_DIR/pmp-seccomp
TRY_LINE="Try \`pidmempolicy --help' or \`pidmempolicy --usage' for more information."

# Syscalls that a refused invocation must never reach: pidfd_open (434) and
# the v2 patch's pidfd_set_mempolicy number (451, cachestat on this kernel).
NO_CHANGE_SYSCALLS=434,451

# bad_usage MESSAGE ARGS...: a usage error from argp: exit 1, nothing on
# stdout, MESSAGE and the "Try" line on stderr, and not one pidfd opened.
bad_usage() {
	local msg=$1; shift
	run --separate-stderr "$PMP_SECCOMP" --deny="$NO_CHANGE_SYSCALLS" -- "$PMP" "$@"
	echo "status=$status stdout=[$output] stderr=[$stderr]"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "pidmempolicy: $msg" ]
	[ "${stderr_lines[1]}" = "$TRY_LINE" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
}

# bad_input MESSAGE ARGS...: input refused after parsing (node lists,
# policy rules): exit 1, exactly one line on stderr, nothing called.
bad_input() {
	local msg=$1; shift
	run --separate-stderr "$PMP_SECCOMP" --deny="$NO_CHANGE_SYSCALLS" -- "$PMP" "$@"
	echo "status=$status stdout=[$output] stderr=[$stderr]"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "pidmempolicy: $msg" ]
}

# The ptrace backend exists on x86_64 and aarch64 only.
need_ptrace_arch() {
	case $(uname -m) in
	x86_64 | aarch64) ;;
	*) skip "the ptrace backend is x86_64 and aarch64 only" ;;
	esac
}

# A multi-threaded process to look at: python with N sleeping threads.
start_threaded() {
	local n=$1
	python3 -c '
import sys, threading, time
for _ in range(int(sys.argv[1])):
    threading.Thread(target=time.sleep, args=(120,), daemon=True).start()
print("ready", flush=True)
time.sleep(120)' "$n" > "$BATS_TEST_TMPDIR/threaded.out" &
	THREADED_PID=$!
	for _ in $(seq 100); do
		grep -q ready "$BATS_TEST_TMPDIR/threaded.out" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

stop_threaded() {
	[ -n "${THREADED_PID:-}" ] && kill "$THREADED_PID" 2>/dev/null
	wait 2>/dev/null || true
}

pidfd_inode() {
	python3 -c 'import os, sys; print(os.fstat(os.pidfd_open(int(sys.argv[1]))).st_ino)' "$1"
}
