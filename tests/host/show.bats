#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# --show as util-linux tools show tables: libsmartcols columns (-o,
# --noheadings, --raw), a row per thread or per process, the task policy
# that numa_maps proves (not a mapping's own), JSON with numbers as numbers,
# and -v's "(was ...)".
#
# The target is tests/helpers/pmp-target, driven through a fifo; its
# "mbind-low" and "mbind-anon" commands give mappings a policy of their own.

load helpers

PMP_TARGET=$PMP_HELPER_DIR/pmp-target

teardown() {
	[ -z "${TARGET_PID:-}" ] || kill -KILL "$TARGET_PID" 2>/dev/null || true
	[ -z "${TARGET_IN:-}" ] || eval "exec $TARGET_IN>&-"
	wait 2>/dev/null || true
}

# tgt_start [ARGS...]: pmp-target ARGS; TARGET_PID.
tgt_start() {
	mkfifo "$BATS_TEST_TMPDIR/in"
	exec {TARGET_IN}<>"$BATS_TEST_TMPDIR/in"
	"$PMP_TARGET" "$@" <&"$TARGET_IN" >"$BATS_TEST_TMPDIR/target.out" 3>&- &
	TARGET_PID=$!
	REPLIES=1
	for _ in $(seq 100); do
		grep -q '^ready' "$BATS_TEST_TMPDIR/target.out" 2>/dev/null && return 0
		sleep 0.05
	done
	false
}

# tgt_cmd COMMAND: send it, print the target's one-line reply.
tgt_cmd() {
	echo "$1" >&"$TARGET_IN"
	REPLIES=$((REPLIES + 1))
	for _ in $(seq 200); do
		[ "$(wc -l <"$BATS_TEST_TMPDIR/target.out")" -ge "$REPLIES" ] && break
		sleep 0.05
	done
	sed -n "${REPLIES}p" "$BATS_TEST_TMPDIR/target.out"
}

# The policy on each line of the thread's numa_maps, counted.
policies_of() {
	awk '{ print $2 }' "/proc/$1/task/${2:-$1}/numa_maps" | sort | uniq -c
}

need_ptrace() {
	need_ptrace_arch
	require_fact "$(why_no_ptrace)" ptraces_non_child "$PMP_HELPER_DIR/pmp-hold"
}

@test "--show: a row per thread, the thread view's columns, no pages" {
	tgt_start --threads=2
	run --separate-stderr "$PMP" --show -a -p "$TARGET_PID"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(echo ${lines[0]})" = "PID TID COMMAND POLICY MEMS" ]
	[ "${#lines[@]}" -eq 4 ]
	read -r pid tid comm policy mems extra <<<"${lines[1]}"
	[ "$pid $tid $comm $policy" = "$TARGET_PID $TARGET_PID pmp-target default" ]
	[ "$mems" = "$(awk '/^Mems_allowed_list/ { print $2 }' "/proc/$TARGET_PID/status")" ]
	[ -z "$extra" ]
}

@test "--show=processes: a row per process, the main thread's policy, how many share it, pages once" {
	need_ptrace
	tgt_start --threads=3
	addr=$(tgt_cmd "alloc 8")
	# the main thread only
	run "$PMP" --backend=ptrace --interleave=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	sleep 300 3>&- &
	other=$!
	run --separate-stderr "$PMP" --show=processes -p "$TARGET_PID,$other"
	kill "$other"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $(echo ${lines[0]}) == "PID COMMAND POLICY MEMS THREADS SAME DIFFER N0"* ]]
	[ "${#lines[@]}" -eq 3 ]
	read -r pid comm policy mems threads same differ n0 _ <<<"${lines[1]}"
	[ "$pid $comm $policy $threads $same $differ" = "$TARGET_PID pmp-target interleave:0 4 1 3" ]
	# the 8 MiB touched, on node 0 or spread; their sum is the process's
	total=0
	for n in $(echo "${lines[1]}" | cut -d' ' -f1- | awk '{ for (i = 8; i <= NF; i++) print $i }'); do
		total=$((total + n))
	done
	[ "$total" -ge 2048 ]
	read -r pid comm policy _ threads same differ _ <<<"${lines[2]}"
	[ "$pid $comm $policy $threads $same $differ" = "$other sleep default 1 1 0" ]
}

@test "-o, --noheadings, --raw: the columns asked for, in that order" {
	tgt_start --threads=1
	run --separate-stderr "$PMP" --show -a -o policy,TID,pid --noheadings --raw -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	tids=($(ls "/proc/$TARGET_PID/task" | sort -n))
	[ "$output" = "default ${tids[0]} $TARGET_PID"$'\n'"default ${tids[1]} $TARGET_PID" ]
	run --separate-stderr "$PMP" --show=processes -o THREADS,n0 --raw -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "THREADS N0" ]
	read -r threads pages <<<"${lines[1]}"
	[ "$threads" -eq 2 ] && [ "$pages" -gt 0 ]
}

@test "--raw: a policy with a blank in its name is one field" {
	need_ptrace
	tgt_start
	run --separate-stderr "$PMP" --backend=ptrace --weighted-interleave=0 -p "$TARGET_PID"
	[[ $stderr != *"needs Linux 6.9"* ]] || skip "this kernel has no weighted interleave (Linux 6.9)"
	[ "$status" -eq 0 ]
	[ "$(awk 'NR == 1 { print $2, $3 }' "/proc/$TARGET_PID/numa_maps")" = "weighted interleave:0" ]
	run --separate-stderr "$PMP" --show --raw --noheadings -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	read -r pid tid comm policy mems extra <<<"$output"
	[ "$policy" = 'weighted\x20interleave:0' ]
	[ "$pid $tid $comm" = "$TARGET_PID $TARGET_PID pmp-target" ] && [ -z "$extra" ]
}

@test "columns: an unknown one, one of the other view, a node this machine lacks: one line, exit 1" {
	bad_input "unknown column 'FOO' (see --help)" --show -o pid,FOO -p 1
	bad_input "column TID is not in --show=processes" --show=processes -o TID -p 1
	bad_input "column THREADS is not in the thread view" --show -o threads -p 1
	max=$(ls -d /sys/devices/system/node/node[0-9]* | sed 's/.*node//' | sort -n | tail -1)
	bad_input "no column N999: this machine's nodes are 0-$max" --show=processes -o N999 -p 1
	bad_input "empty column name in --output" --show -o pid,,tid -p 1
	bad_usage "--output, --noheadings and --raw shape the --show table (not --json's document)" \
		--show --json --raw -p 1
	bad_usage "--output, --noheadings and --raw shape the --show table (not --json's document)" \
		-o pid --interleave=0 -p 1
	bad_usage "unknown --show view 'tree' (threads or processes)" --show=tree -p 1
}

@test "--help lists every column" {
	run --separate-stderr "$PMP" --help
	[ "$status" -eq 0 ]
	for c in PID TID COMMAND POLICY MEMS THREADS SAME DIFFER 'N<n>'; do
		grep -q "^  $c " <<<"$output" || { echo "no $c"; false; }
	done
}

@test "a target that mbinds its lowest mapping does not fool --show" {
	tgt_start
	[ "$(tgt_cmd "mbind-low 2")" = ok ]
	# positive control: the first numa_maps line is the mapping's policy
	[ "$(awk 'NR == 1 { print $2 }' "/proc/$TARGET_PID/numa_maps")" = bind:0 ]
	run --separate-stderr "$PMP" --show --raw --noheadings -o policy -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$output" = default ]
}

@test "a target that mbinds most of its mappings does not fool --show" {
	tgt_start
	for _ in $(seq 30); do tgt_cmd "alloc 1" >/dev/null; done
	reply=$(tgt_cmd "mbind-anon 3")
	[[ $reply == "ok "* ]]
	policies_of "$TARGET_PID"
	n=$(wc -l <"/proc/$TARGET_PID/numa_maps")
	bound=$(awk '$2 == "interleave:0"' "/proc/$TARGET_PID/numa_maps" | wc -l)
	[ "$bound" -gt $((n / 2)) ]
	run --separate-stderr "$PMP" --show --json -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.threads[0].policy' <<<"$output")" = default ]
}

@test "mappings that differ and none default: unknown, not a guess" {
	need_ptrace
	tgt_start --threads=1
	run "$PMP" --backend=ptrace -a --interleave=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(tgt_cmd "mbind-low 2")" = ok ]
	policies_of "$TARGET_PID"
	run --separate-stderr "$PMP" --show -a --raw --noheadings -o policy -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$output" = unknown$'\n'unknown ]
	run --separate-stderr "$PMP" --show=processes --json -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.threads[].policy, .processes[0].policy]' <<<"$output")" = '[null,null,null]' ]
}

@test "--show --json: mems_allowed as numbers, pages once per process, the same keys as any run" {
	tgt_start --threads=2
	run --separate-stderr "$PMP" --show --json -a -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	want=$(awk '/^Mems_allowed_list/ { print $2 }' "/proc/$TARGET_PID/status")
	[ "$(jq -r '.threads[0].mems_allowed | map(tostring) | join(",")' <<<"$output")" = \
		"$(python3 -c 'import sys
out = []
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-")
    out += [str(n) for n in range(int(a), int(b or a) + 1)]
print(",".join(out))' "$want")" ]
	[ "$(jq '.threads | length' <<<"$output")" -eq 3 ]
	[ "$(jq '[.threads[] | has("pages")] | any' <<<"$output")" = false ]
	[ "$(jq '.processes | length' <<<"$output")" -eq 1 ]
	[ "$(jq '.processes[0] | .threads, .same, .differ' <<<"$output" | tr '\n' ' ')" = "3 3 0 " ]
	[ "$(jq '.processes[0].pages["0"] > 0' <<<"$output")" = true ]
	[ "$(jq -c 'keys' <<<"$output")" = \
		'["action","backend","exit_status","interrupted","notes","policy","processes","schema","signal","threads","totals"]' ]
	run --separate-stderr "$PMP" -n --json --interleave=0 -p "$TARGET_PID"
	[ "$(jq -c 'keys' <<<"$output")" = \
		'["action","backend","exit_status","interrupted","notes","policy","processes","schema","signal","threads","totals"]' ]
	[ "$(jq '.processes' <<<"$output")" = null ]
}

@test "-v says what each thread had before (was ...); --json carries it as policy_before" {
	need_ptrace
	tgt_start --threads=1
	run --separate-stderr "$PMP" --backend=ptrace -a --json --interleave=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.threads[].policy_before]' <<<"$output")" = '["default","default"]' ]
	run --separate-stderr "$PMP" --backend=ptrace -v -a --localalloc -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	tids=($(ls "/proc/$TARGET_PID/task" | sort -n))
	echo "$output"
	[ "${lines[0]}" = "set tid $TARGET_PID (pmp-target) of pid $TARGET_PID to local (was interleave:0)" ]
	[ "${lines[1]}" = "set tid ${tids[1]} (pmp-target) of pid $TARGET_PID to local (was interleave:0)" ]
	run --separate-stderr "$PMP" -n --json --default -p "$TARGET_PID"
	[ "$(jq -r '.threads[0].policy_before' <<<"$output")" = local ]
}
