#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Redis 7 (an event loop in epoll_wait, I/O threads, bio and jemalloc
# background threads): redis-server as nobody on 127.0.0.1, io-threads 2
# with io-threads-do-reads, a data set of 50,000 keys loaded first.  Then
# `redis-benchmark -q -n 200000 -c 50 --threads 2` (SET, GET, LPUSH; --csv
# for its percentiles) twice on the same server: a quiet pass, and a pass
# during which flip.sh sets every thread of the server (-a) over and over,
# 20 times at least.  No error reply, every request served, every key of
# the data set reads back with its value, the server alive at the end.

load common

REDIS_KEYS=50000
REDIS_BENCH=(-q --csv -n 200000 -c 50 --threads 2 -t set,get,lpush)

rcli() {
	redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"
}

# info_value SECTION KEY: a field of INFO SECTION.
info_value() {
	rcli info "$1" | tr -d '\r' | sed -n "s/^$2://p"
}

# cmd_calls CMD: how many times the server has run CMD.
cmd_calls() {
	rcli info commandstats | tr -d '\r' | sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p"
}

# The data set's values, in key order, hashed by the server itself: the
# number of keys found and the SHA-1 of their values, a line each.
CHECKSUM_LUA='local t, n = {}, 0
for i = 1, tonumber(ARGV[1]) do
	local v = redis.call("GET", "pmp:" .. i)
	if v then n = n + 1 else v = "(nil)" end
	t[#t + 1] = v .. "\n"
end
return {n, redis.sha1hex(table.concat(t))}'

data_checksum() {
	rcli --no-raw eval "$CHECKSUM_LUA" 0 "$REDIS_KEYS" | sed 's/^[0-9]*) //; s/^(integer) //; s/"//g' | paste -sd' '
}

setup_file() {
	need_commands redis-server/redis-tools redis-server redis-cli redis-benchmark jq setpriv || return 0
	export OUT=$CLIENTS_OUT/redis
	rm -rf "$OUT"
	mkdir -p "$OUT"
	REDIS_TMP=$(mktemp -d /tmp/pmp-clients-redis.XXXXXX)
	REDIS_PORT=$(free_port)
	REDIS_CG=$(client_cgroup redis) || REDIS_CG=
	export REDIS_TMP REDIS_PORT REDIS_CG
	chown nobody:nogroup "$REDIS_TMP"
	cat >"$REDIS_TMP/redis.conf" <<EOF
bind 127.0.0.1
port $REDIS_PORT
dir $REDIS_TMP
logfile $REDIS_TMP/redis.log
io-threads 2
io-threads-do-reads yes
save ""
appendonly no
daemonize no
EOF
	bg_in_cgroup "$REDIS_CG" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		redis-server "$REDIS_TMP/redis.conf" </dev/null >/dev/null 2>&1
	export REDIS_PID=$BG_PID
	wait_for 10 rcli ping || { cat "$REDIS_TMP/redis.log"; return 1; }
	[ "$(info_value server process_id)" = "$REDIS_PID" ]

	# the data set: values of 1 to 200 printable bytes, one per key
	awk -v n="$REDIS_KEYS" 'BEGIN {
		srand(26)
		for (i = 1; i <= n; i++) {
			len = 1 + int(rand() * 200); v = ""
			for (j = 0; j < len; j++) v = v sprintf("%c", 33 + int(rand() * 94))
			print i "\t" v
		}
	}' >"$OUT/data.tsv"
	awk -F'\t' '{ k = "pmp:" $1; printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length($2), $2 }' \
		"$OUT/data.tsv" | rcli --pipe >"$OUT/load.out" 2>&1
	# each value with its newline, as CHECKSUM_LUA hashes them
	echo "$REDIS_KEYS $(cut -f2 "$OUT/data.tsv" | sha1sum | cut -d' ' -f1)" >"$OUT/checksum.expected"
	data_checksum >"$OUT/checksum.before"

	local t
	for t in errors:stats:total_error_replies rejected:stats:rejected_connections \
		 reads:stats:io_threaded_reads_processed; do
		IFS=: read -r name sec key <<<"$t"
		info_value "$sec" "$key" >"$OUT/$name.0"
	done
	status_to "$OUT/quiet.status" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" "${REDIS_BENCH[@]}" \
		>"$OUT/quiet.csv" 2>"$OUT/quiet.err"
	for t in set get lpush; do cmd_calls "$t" >"$OUT/calls-$t.1"; done
	info_value stats io_threaded_reads_processed >"$OUT/reads.1"

	local bench
	redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" "${REDIS_BENCH[@]}" >"$OUT/flips.csv" 2>"$OUT/flips.err" 3>&- &
	bench=$!
	sleep 0.5
	status_to "$OUT/flip.status" "$FLIP" --out="$OUT/flips" --count=20 --while="$bench" --pause=0.25 \
		--pid="$REDIS_PID" 3>&-
	status_to "$OUT/flips.status" wait "$bench"
	date +%s.%N >"$OUT/flips.bench-end"
	for t in set get lpush; do cmd_calls "$t" >"$OUT/calls-$t.2"; done
	info_value stats io_threaded_reads_processed >"$OUT/reads.2"
	info_value stats total_error_replies >"$OUT/errors.2"
	info_value stats rejected_connections >"$OUT/rejected.2"
	data_checksum >"$OUT/checksum.after"
	rcli ping >"$OUT/ping.after" 2>&1
	rcli shutdown nosave >/dev/null 2>&1
	wait_for 10 eval '! kill -0 "$REDIS_PID"'
	cp "$REDIS_TMP/redis.log" "$OUT/redis.log"
	latency
}

latency() {
	local rows=$OUT/latency.rows t q f
	: >"$rows"
	local c="Redis 7, redis-benchmark -n 200000 -c 50 --threads 2, io-threads 2"
	for t in SET GET LPUSH; do
		q=$(grep "^\"$t\"," "$OUT/quiet.csv" | tr -d '"')
		f=$(grep "^\"$t\"," "$OUT/flips.csv" | tr -d '"')
		latency_row "$rows" "$c" "$t requests/s" "$(cut -d, -f2 <<<"$q" | cut -d. -f1)" \
			"$(cut -d, -f2 <<<"$f" | cut -d. -f1)" "-"
		latency_row "$rows" "$c" "$t latency p50 / p99 / max (ms)" "$(awk -F, '{ print $5 " / " $7 " / " $8 }' <<<"$q")" \
			"$(awk -F, '{ print $5 " / " $7 " / " $8 }' <<<"$f")" "-"
	done
}

teardown_file() {
	[ -n "${REDIS_TMP:-}" ] || return 0
	kill -KILL "${REDIS_PID:-}" 2>/dev/null || true
	kill_cgroup "${REDIS_CG:-}"
	rm -rf "$REDIS_TMP"
}

@test "redis: >= 20 flips of every thread of redis-server during the benchmark, each exit 0, its JSON totals as numa_maps show" {
	flips_ok "$OUT/flips"
	[ "$(cat "$OUT/flip.status")" -eq 0 ]
	# the event loop, the I/O thread, bio and jemalloc threads: all set
	jq -e '[.threads[] | select(.result == "set")] | length >= 5' "$OUT/flips/flip-0.json"
	local under
	under=$(awk -v m="$(cat "$OUT/flips.bench-end")" '$2 < m' "$OUT/flips/flips.runs" | wc -l)
	echo "flips while the benchmark ran: $under"
	[ "$under" -ge 20 ]
}

@test "redis: redis-benchmark -q -n 200000 -c 50 --threads 2: no error, every request served, the I/O threads at work" {
	cat "$OUT/quiet.csv" "$OUT/flips.csv" "$OUT/quiet.err" "$OUT/flips.err"
	[ "$(cat "$OUT/quiet.status")" -eq 0 ]
	[ "$(cat "$OUT/flips.status")" -eq 0 ]
	[ ! -s "$OUT/flips.err" ]
	[ "$(grep -c '^"\(SET\|GET\|LPUSH\)",' "$OUT/flips.csv")" -eq 3 ]
	[ "$(cat "$OUT/errors.0")" -eq 0 ] && [ "$(cat "$OUT/errors.2")" -eq 0 ]
	[ "$(cat "$OUT/rejected.2")" -eq 0 ]
	local t
	for t in set get lpush; do
		echo "$t: $(cat "$OUT/calls-$t.1") -> $(cat "$OUT/calls-$t.2")"
		[ $(($(cat "$OUT/calls-$t.2") - $(cat "$OUT/calls-$t.1"))) -eq 200000 ]
	done
	echo "I/O-threaded reads during the flip pass: $(($(cat "$OUT/reads.2") - $(cat "$OUT/reads.1")))"
	[ "$(cat "$OUT/reads.2")" -gt "$(cat "$OUT/reads.1")" ]
}

@test "redis: every key of the data set reads back with its value (checksum before and after)" {
	cat "$OUT/load.out"
	grep -q "errors: 0, replies: $REDIS_KEYS" "$OUT/load.out"
	cat "$OUT/checksum.expected" "$OUT/checksum.before" "$OUT/checksum.after"
	[ "$(cat "$OUT/checksum.before")" = "$(cat "$OUT/checksum.expected")" ]
	[ "$(cat "$OUT/checksum.after")" = "$(cat "$OUT/checksum.expected")" ]
}

@test "redis: the server answered after the flips, exited cleanly, and logged no crash" {
	[ "$(cat "$OUT/ping.after")" = PONG ]
	grep -q 'Redis is now ready to exit, bye bye' "$OUT/redis.log"
	! grep -Ei 'crashed by signal|BUG REPORT|Guru Meditation|Segmentation|assert|Interrupted system call' "$OUT/redis.log" || false
}
