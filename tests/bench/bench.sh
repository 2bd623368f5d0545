#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench.sh BUILDDIR [VERSION] - boot the patched test kernel in QEMU and run
# bench-guest.sh there: pidmempolicy against taskset on targets with 1 to
# 10,000 threads, as ratios within the same run.  `make bench` runs it.
# VERSION is the kernel (6.1 by default; 6.12 for the port, where -a
# reaches every thread).  Timings under TCG emulation are slow in absolute
# terms; the ratios are what to read.  A second boot runs migrate-guest.sh:
# --migrate against numactl's migratepages.  Then host-costs.sh times the same
# calls on the host's kernel, without emulation, and host-ptrace.sh the
# ptrace backend there against taskset (make bench-host runs that alone).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
builddir=${1:?usage: bench.sh BUILDDIR [VERSION]}
version=${2:-${PMP_BENCH_KERNEL:-6.1}}
args=()
[ "$version" = 6.1 ] || args+=(--version="$version")
# the guest script, with the syscall number of the kernel's patch when it
# is not the configured one (PMP_BENCH_SYSCALL_NR)
script=$(mktemp)
trap 'rm -f "$script"' EXIT
{
	echo "#!/bin/bash"
	[ -n "${PMP_BENCH_SYSCALL_NR:-}" ] && echo "export PIDMEMPOLICY_SYSCALL_NR=$PMP_BENCH_SYSCALL_NR"
	[ -n "${BENCH_SIZES:-}" ] && echo "export BENCH_SIZES='$BENCH_SIZES'"
	[ -n "${BENCH_RUNS:-}" ] && echo "export BENCH_RUNS='$BENCH_RUNS'"
	cat "$here/bench-guest.sh"
} > "$script"
"$here/../guest/run-guest.sh" --variant=patched "${args[@]}" --timeout=3000 \
	--binary="$builddir/src/pidmempolicy" --helpers-dir="$builddir/tests/helpers" \
	--extra-bin=taskset --extra-bin=strace --extra-bin=bc \
	--demo="$script"
# migration: --migrate against numactl's migratepages on the same pages
echo
"$here/../guest/run-guest.sh" --variant=patched "${args[@]}" --timeout=1500 \
	--binary="$builddir/src/pidmempolicy" --helpers-dir="$builddir/tests/helpers" \
	--extra-bin=migratepages --demo="$here/migrate-guest.sh"
# the same calls on the host's kernel, not emulated, for comparison
echo
"$here/host-costs.sh" "$builddir"
# and the ptrace backend there, the default on stock kernels
echo
"$here/host-ptrace.sh" "$builddir"
