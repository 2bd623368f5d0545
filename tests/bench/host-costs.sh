#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# host-costs.sh BUILDDIR - what the same calls cost on the host's own kernel,
# without emulation, beside the guest's figures (make bench runs both).
#
# pmp-syscost over a 10,000-thread pmp-threads target, 3 runs: pidfd_open
# (PIDFD_THREAD) + close, the tgkill probe, sched_getaffinity and
# sched_setaffinity, one listing of /proc/PID/task; then the wall time of
# `taskset -a -p f` over them (median of 5).  The host kernel has no
# pidfd_set_mempolicy, so that call is not timed.  Needs a host kernel with
# PIDFD_THREAD (Linux 6.9); says so and stops otherwise.
set -euo pipefail
builddir=${1:?usage: host-costs.sh BUILDDIR}
helpers=$builddir/tests/helpers
release=$(uname -r)
if [ "$(printf '%s\n' 6.9 "${release%%-*}" | sort -V | head -1)" != 6.9 ]; then
	echo "host: Linux $release has no PIDFD_THREAD (6.9): per-call costs not measured"
	exit 0
fi
coproc TGT { exec "$helpers/pmp-threads" 9999; }
read -r _ pid <&"${TGT[0]}"
field() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p" <<<"$2"; }
echo "Host, not emulated: Linux $release, $(nproc) CPUs, 10,000 threads (us per thread; listing in ms):"
echo
echo "| run | pidfd_open + close | tgkill probe | sched_getaffinity | sched_setaffinity | listing (ms) | pidfd_open+close / getaffinity |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for run in 1 2 3; do
	line=$("$helpers/pmp-syscost" "$pid" none)
	o=$(field pidfd_open_close_us "$line") g=$(field getaffinity_us "$line")
	printf '| %d | %s | %s | %s | %s | %.1f | %.1f |\n' "$run" "$o" "$(field tgkill_us "$line")" "$g" \
		"$(field setaffinity_us "$line")" "$(awk -v u="$(field listing_us "$line")" 'BEGIN { print u / 1000 }')" \
		"$(awk -v a="$o" -v b="$g" 'BEGIN { print a / b }')"
done
runs=()
for run in 1 2 3 4 5; do
	runs+=("$("$helpers/pmp-measure" taskset -a -p f "$pid" 2>&1 >/dev/null | sed -n 's/^measure: wall_us=\([0-9]*\) user_us=\([0-9]*\).*/\1 \2/p')")
done
echo
printf '%s\n' "${runs[@]}" | sort -n | awk '{ w[NR] = $1; u[NR] = $2 } END {
	printf "taskset -a -p f over the same threads on the host, median of %d: %.1f ms (%.1f ms in user space)\n", NR, w[3] / 1000, u[3] / 1000 }'
tgt=$TGT_PID
eval "exec ${TGT[1]}>&- ${TGT[0]}<&-"
wait "$tgt" || true
