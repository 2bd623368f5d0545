#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# PostgreSQL 15 (a process per connection; a postmaster that must not see
# EINTR mishandled): a cluster with data checksums, in a temporary
# directory, run by nobody, in a cgroup v2 of its own.  `pgbench -i`, then
# `pgbench -c 8 -j 2 -T 40 --progress=1` while flip.sh sets every process
# of the cluster (--cgroup; by their PIDs where the host has no cgroup2)
# through interleave, preferred, local and bind at least 20 times, from
# 5 s into the run.  Afterwards pg_amcheck checks every table and index
# (heap against index), and pg_checksums the stopped cluster.

load common

PGBIN=/usr/lib/postgresql/15/bin
PG_SECONDS=40	# long enough for the 20 flips and a quiet stretch after them on a loaded host
PG_QUIET_FIRST=5	# seconds of the run before the flips (the first 2 s warm up)

as_pg() {
	cd "$PG_TMP/run" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env HOME="$PG_TMP/run" PGHOST="$PG_TMP/sock" PGPORT="$PG_PORT" PGUSER=postgres \
		PGDATABASE=postgres "$@"
	local rc=$?
	cd - >/dev/null
	return "$rc"
}

setup_file() {
	need_commands postgresql-15 "$PGBIN/postgres" "$PGBIN/pg_ctl" "$PGBIN/initdb" "$PGBIN/pgbench" \
		"$PGBIN/pg_amcheck" "$PGBIN/pg_checksums" jq setpriv || return 0
	export OUT=$CLIENTS_OUT/postgres
	rm -rf "$OUT"
	mkdir -p "$OUT"
	PG_TMP=$(mktemp -d /tmp/pmp-clients-pg.XXXXXX)
	export PG_TMP PG_PORT
	PG_PORT=$(free_port)
	chmod 755 "$PG_TMP"
	mkdir -m 700 "$PG_TMP/data" && mkdir "$PG_TMP/sock" "$PG_TMP/run"
	chown nobody:nogroup "$PG_TMP/data" "$PG_TMP/sock" "$PG_TMP/run"
	as_pg "$PGBIN/initdb" -D "$PG_TMP/data" --data-checksums -A trust -U postgres --no-sync \
		>"$OUT/initdb.out" 2>&1 || { cat "$OUT/initdb.out"; return 1; }
	cat >>"$PG_TMP/data/postgresql.conf" <<EOF
port = $PG_PORT
listen_addresses = ''
unix_socket_directories = '$PG_TMP/sock'
max_connections = 30
shared_buffers = 128MB
synchronous_commit = off
log_line_prefix = '%m [%p] %b '
log_checkpoints = on
EOF
	if PG_CG=$(client_cgroup postgres); then
		export FLIP_TARGET=--cgroup=$PG_CG
	else
		PG_CG=
	fi
	export PG_CG
	in_cgroup "$PG_CG" as_pg "$PGBIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/run/server.log" -w -t 60 start \
		>"$OUT/pg_ctl.out" 2>&1 3>&- || { cat "$OUT/pg_ctl.out" "$PG_TMP/run/server.log"; return 1; }
	PG_POSTMASTER=$(head -1 "$PG_TMP/data/postmaster.pid")
	export PG_POSTMASTER
	[ -n "$PG_CG" ] || export FLIP_TARGET=--tree=$PG_POSTMASTER

	as_pg "$PGBIN/pgbench" -i -s 10 -q >"$OUT/pgbench-init.out" 2>&1 || { cat "$OUT/pgbench-init.out"; return 1; }

	# the run: a quiet stretch, then the flips, then quiet again
	local bench
	as_pg "$PGBIN/pgbench" -c 8 -j 2 -T "$PG_SECONDS" --progress=1 -l --log-prefix="$PG_TMP/run/tx" \
		>"$OUT/pgbench.out" 2>"$OUT/pgbench.progress" 3>&- &
	bench=$!
	sleep "$PG_QUIET_FIRST"
	status_to "$OUT/flip.status" "$FLIP" --out="$OUT/flips" --count=20 --pause=0 "$FLIP_TARGET" 3>&-
	status_to "$OUT/pgbench.status" wait "$bench"
	cat "$PG_TMP"/run/tx.* >"$OUT/pgbench.txlog" 2>/dev/null

	status_to "$OUT/amcheck.status" as_pg "$PGBIN/pg_amcheck" --install-missing --heapallindexed \
		--parent-check --rootdescend --progress --database=postgres >"$OUT/amcheck.out" 2>&1
	status_to "$OUT/stop.status" as_pg "$PGBIN/pg_ctl" -D "$PG_TMP/data" -w -t 60 -m fast stop \
		>>"$OUT/pg_ctl.out" 2>&1
	status_to "$OUT/checksums.status" as_pg "$PGBIN/pg_checksums" --check -D "$PG_TMP/data" \
		>"$OUT/checksums.out" 2>&1
	cp "$PG_TMP/run/server.log" "$OUT/server.log"
	latency
}

# The latency of pgbench's transactions (its -l log: latency in us, and
# when each ended) in the quiet stretches (from 2 s into the run, and
# from 0.5 s after the last flip), during the flips (first flip's start to
# last flip's end), and of those in flight while a pidmempolicy ran.
latency() {
	local first last
	first=$(head -1 "$OUT/flips/flips.runs" | cut -d' ' -f1)
	last=$(tail -1 "$OUT/flips/flips.runs" | cut -d' ' -f2)
	awk -v fb="$first" -v fe="$last" -v runs="$OUT/flips/flips.runs" -v out="$OUT" '
		BEGIN { while ((getline ln < runs) > 0) { split(ln, r, " "); b[++n] = r[1]; e[n] = r[2] } }
		{ end = $5 + $6 / 1e6; lat = $3 / 1000; start = end - $3 / 1e6
		  t[NR] = end; l[NR] = lat; s[NR] = start
		  if (NR == 1 || start < t0) t0 = start; if (end > t1) t1 = end }
		END {
			q0 = t0 + 2
			for (i = 1; i <= NR; i++) {
				if ((t[i] >= q0 && t[i] < fb) || t[i] > fe + 0.5) print l[i] > (out "/lat.quiet")
				else if (t[i] >= fb && t[i] <= fe) print l[i] > (out "/lat.flips")
				for (k = 1; k <= n; k++)
					if (s[i] < e[k] && t[i] > b[k]) { print l[i] > (out "/lat.inrun"); break }
			}
			printf "%.3f %.3f\n", (fb - q0) + (t1 - fe - 0.5), fe - fb > (out "/lat.seconds")
		}' "$OUT/pgbench.txlog"
	local qs fs qn qm q50 q99 qx fn fm f50 f99 fx rn rm r50 r99 rx rows=$OUT/latency.rows
	read -r qs fs <"$OUT/lat.seconds"
	read -r qn qm q50 q99 qx < <(stats <"$OUT/lat.quiet")
	read -r fn fm f50 f99 fx < <(stats <"$OUT/lat.flips")
	read -r rn rm r50 r99 rx < <(stats <"$OUT/lat.inrun" 2>/dev/null || stats </dev/null)
	: >"$rows"
	local c="PostgreSQL 15, pgbench -c 8 -j 2 (TPC-B)"
	latency_row "$rows" "$c" "transactions/s" "$(awk -v n="$qn" -v s="$qs" 'BEGIN { printf "%.0f", n / s }')" \
		"$(awk -v n="$fn" -v s="$fs" 'BEGIN { printf "%.0f", n / s }')" "-"
	latency_row "$rows" "$c" "latency mean (ms)" "$qm" "$fm" "$rm"
	latency_row "$rows" "$c" "latency p50 (ms)" "$q50" "$f50" "$r50"
	latency_row "$rows" "$c" "latency p99 (ms)" "$q99" "$f99" "$r99"
	latency_row "$rows" "$c" "latency max (ms)" "$qx" "$fx" "$rx"
	latency_row "$rows" "$c" "transactions counted" "$qn in ${qs} s" "$fn in ${fs} s" "$rn"
}

teardown_file() {
	[ -n "${PG_TMP:-}" ] || return 0
	if [ -f "$PG_TMP/data/postmaster.pid" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$PG_TMP/data" -w -t 20 -m immediate stop >/dev/null 2>&1 ||
			kill -KILL "${PG_POSTMASTER:-}" 2>/dev/null
	fi
	kill_cgroup "${PG_CG:-}"
	rm -rf "$PG_TMP"
}

@test "postgres: >= 20 flips of every process of the cluster, each exit 0, its JSON totals as numa_maps of every thread show" {
	flips_ok "$OUT/flips"
	[ "$(cat "$OUT/flip.status")" -eq 0 ]
	# every process: the postmaster, its helpers and the 8 backends
	[ "$(jq '[.threads[].pid] | unique | length' "$OUT/flips/flip-10.json")" -ge 13 ]
	jq -e --argjson pm "$PG_POSTMASTER" '[.threads[] | select(.pid == $pm and .result == "set")] | length == 1' \
		"$OUT/flips/flip-10.json"
	# and 20 of them while pgbench ran (it logs when each transaction ended)
	local last under
	last=$(awk '{ e = $5 + $6 / 1e6; if (e > m) m = e } END { printf "%.6f", m }' "$OUT/pgbench.txlog")
	under=$(awk -v m="$last" '$2 < m' "$OUT/flips/flips.runs" | wc -l)
	echo "flips while pgbench ran: $under"
	[ "$under" -ge 20 ]
}

@test "postgres: pgbench -c 8 -j 2 -T 40 during the flips exits 0 with 0 failed transactions" {
	cat "$OUT/pgbench.out"
	[ "$(cat "$OUT/pgbench.status")" -eq 0 ]
	grep -Eq '^number of transactions actually processed: [1-9][0-9]*$' "$OUT/pgbench.out"
	grep -q '^number of failed transactions: 0 (0.000%)$' "$OUT/pgbench.out"
	# every second of the run made progress, and none reported a failure
	! grep -E '^progress: .* ([1-9][0-9]* failed|0\.0 tps)' "$OUT/pgbench.progress" || false
}

@test "postgres: the server log has no error, fatal, panic, crash or terminated-by-signal line" {
	grep -c . "$OUT/server.log"
	! grep -Ei 'ERROR|FATAL|PANIC|terminated by signal|was terminated|crash|abnormal|EINTR|Interrupted system call' \
		"$OUT/server.log" || false
	grep -q 'database system is shut down' "$OUT/server.log"
}

@test "postgres: pg_amcheck (heap against index, parent check) and pg_checksums of the stopped cluster are clean" {
	cat "$OUT/amcheck.out" "$OUT/checksums.out"
	[ "$(cat "$OUT/amcheck.status")" -eq 0 ]
	# nothing but --progress lines, the last at 100%: no corruption reported
	! grep -Ev '^ *[0-9]+/[0-9]+ relations \([0-9]+%\), *[0-9]+/[0-9]+ pages \([0-9]+%\)$' "$OUT/amcheck.out" || false
	tail -n 1 "$OUT/amcheck.out" | grep -Eq '^ *([0-9]+)/\1 relations \(100%\), *([0-9]+)/\2 pages \(100%\)$'
	[ "$(cat "$OUT/stop.status")" -eq 0 ]
	[ "$(cat "$OUT/checksums.status")" -eq 0 ]
	grep -q '^Bad checksums: *0$' "$OUT/checksums.out"
	grep -q '^Data checksum version: *1$' "$OUT/checksums.out"
}
