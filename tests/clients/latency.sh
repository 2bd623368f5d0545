#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# latency.sh DIR - the table of make check-clients: the rows each client
# suite left in DIR/CLIENT/latency.rows and its flips in
# DIR/CLIENT/flips/flips.summary, as markdown in DIR/latency.md and on
# stdout.  Measured, never judged: it fails only when no suite left rows.
set -u

dir=${1:?usage: latency.sh DIR}
md=$dir/latency.md
clients=(postgres redis jvm go)

value() {
	sed -n "s/^$2=//p" "$1"
}

{
	echo "Latency of the clients while pidmempolicy -a flips their policy"
	echo "(make check-clients, $(date -u +%Y-%m-%d), Linux $(uname -r), $(nproc) CPUs, $(uname -m))"
	echo
	echo "| client | metric | quiet | during the flips | in flight during a tool run |"
	echo "|---|---|---|---|---|"
	for c in "${clients[@]}"; do
		[ -s "$dir/$c/latency.rows" ] && cat "$dir/$c/latency.rows"
	done
	echo
	echo "Quiet: PostgreSQL, from 2 s into pgbench's run to the first flip and from"
	echo "0.5 s after the last; Redis, a pass of the same benchmark just before, on"
	echo "the same server.  During the flips: first flip's start to last flip's end"
	echo "(PostgreSQL, per transaction from pgbench -l), the pass with the flips"
	echo "(Redis, redis-benchmark's percentiles).  In flight during a tool run: the"
	echo "transactions that ran while a pidmempolicy process did.  The flipper's"
	echo "own checks (jq, numa_maps of every thread) share the host's CPUs."
	echo
	echo "| client | flips | threads checked (new since the run, gone) | set by signal / by ptrace | tool run p50 / max (ms) | longest hold of one thread (us) |"
	echo "|---|---|---|---|---|---|"
	for c in "${clients[@]}"; do
		s=$dir/$c/flips/flips.summary
		[ -s "$s" ] || continue
		printf '| %s | %s | %s (%s, %s) | %s / %s | %s / %s | %s |\n' "$c" "$(value "$s" flips)" \
			"$(value "$s" checked)" "$(value "$s" new)" "$(value "$s" vanished)" \
			"$(value "$s" by_signal)" "$(value "$s" by_ptrace)" \
			"$(value "$s" wall_ms_p50)" "$(value "$s" wall_ms_max)" "$(value "$s" held_us_max)"
	done
} >"$md"
cat "$md"
ls "$dir"/*/latency.rows >/dev/null 2>&1
