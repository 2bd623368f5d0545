#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Beyond the setter, on Linux 6.1 + v2: --show, --json, --migrate and
# --cgroup against the real kernel.

load lib
bats_require_minimum_version 1.5.0

CG=/sys/fs/cgroup/pmp-more

setup() {
	only_on patched
}

teardown() {
	pmp_teardown
	[ -d "$CG" ] && rmdir "$CG" 2>/dev/null || true
}

@test "option --show: the policy the kernel reports and the allowed nodes; --show=processes: the pages per node" {
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	target_cmd alloc 16 >/dev/null
	run "$PMP" --interleave=0-3 -p "$TARGET_PID"
	target_cmd alloc 16 >/dev/null
	run --separate-stderr "$PMP" --show -p "$TARGET_PID"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(echo ${lines[0]})" = "PID TID COMMAND POLICY MEMS" ]
	read -r pid tid comm policy mems extra <<<"${lines[1]}"
	[ "$pid $tid $comm $policy $mems" = "$TARGET_PID $TARGET_PID pmp-target interleave:0-3 0-3" ]
	[ -z "$extra" ]
	[ "${#lines[@]}" -eq 2 ]
	run --separate-stderr "$PMP" --show=processes -p "$TARGET_PID"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo ${lines[0]})" = "PID COMMAND POLICY MEMS THREADS SAME DIFFER N0 N1 N2 N3" ]
	read -r pid comm policy mems threads same differ n0 n1 n2 n3 <<<"${lines[1]}"
	[ "$pid $comm $policy $mems $threads $same $differ" = "$TARGET_PID pmp-target interleave:0-3 0-3 1 1 0" ]
	# 16 MiB bound to node 0, then 16 MiB interleaved: node 0 has the most
	[ "$n0" -ge $((4096 + 1000)) ] && [ "$n1" -ge 1000 ] && [ "$n3" -ge 1000 ]
}

@test "option --show -a: one line per thread, each with its own policy (6.1 sets only the leader)" {
	target_start --threads=2
	run "$PMP" --membind=2 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	run --separate-stderr "$PMP" --show -a -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 4 ]
	[ "$(awk 'NR > 1 {print $4}' <<<"$output" | tr '\n' ' ')" = "bind:2 default default " ]
}

@test "option --show=processes: a thread that differs is counted, the pages are the process's once" {
	target_start --threads=3
	run "$PMP" --membind=2 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	run --separate-stderr "$PMP" --show=processes --raw --noheadings -o pid,policy,threads,same,differ -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$output" = "$TARGET_PID bind:2 4 1 3" ]
}

@test "option --show: a mapping's own policy (mbind) is not taken for the task's" {
	target_start
	run "$PMP" --interleave=1-2 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd alloc 4)
	# a JVM with -XX:+UseNUMA binds its heap so; its lowest mapping too
	[ "$(target_cmd "mbind-low 2")" = ok ]
	[ "$(awk 'NR == 1 { print $2 }' "/proc/$TARGET_PID/numa_maps")" = bind:0 ]
	run --separate-stderr "$PMP" --show --raw --noheadings -o policy -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	# bind:0 and interleave:1-2 both appear, none default: it cannot be known
	[ "$output" = unknown ]
	run "$PMP" --default -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	run --separate-stderr "$PMP" --show --raw --noheadings -o policy -p "$TARGET_PID"
	[ "$output" = default ]
}

@test "option --show --json is one document a script can read" {
	target_start
	run "$PMP" --preferred=3 -p "$TARGET_PID"
	addr=$(target_cmd alloc 8)
	run --separate-stderr "$PMP" --show --json -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(jq -r .action <<<"$output")" = show ]
	[ "$(jq -r '.threads[0].policy' <<<"$output")" = "prefer:3" ]
	[ "$(jq -r '.threads[0].comm' <<<"$output")" = pmp-target ]
	[ "$(jq -c '.threads[0].mems_allowed' <<<"$output")" = "[0,1,2,3]" ]
	[ "$(jq -r '.processes[0].pages["3"]' <<<"$output")" -ge 2048 ]
	[ "$(jq -r '.processes[0].policy' <<<"$output")" = "prefer:3" ]
	[ "$(jq -r '.totals.done' <<<"$output")" -eq 1 ]
	[ "$(jq -r '.exit_status' <<<"$output")" -eq 0 ]
}

@test "option --json of a set run: per-thread results, errno names, totals, exit status" {
	target_start --threads=1
	gone=$(target_cmd zombie)
	run --separate-stderr "$PMP" --json -a --interleave=1-2 -p "$TARGET_PID" -p 4000000
	echo "$output"
	[ "$status" -eq 64 ]
	[ "$(jq -r .policy <<<"$output")" = "interleave:1-2" ]
	[ "$(jq -r '.threads | length' <<<"$output")" -eq 3 ]
	[ "$(jq -r '.threads[0].result' <<<"$output")" = set ]
	[ "$(jq -r '.threads[0].errno' <<<"$output")" = null ]
	[ "$(jq -r '.threads[1].result' <<<"$output")" = failed ]
	[ "$(jq -r '.threads[1].message' <<<"$output")" = "this kernel cannot address single threads (needs PIDFD_THREAD, Linux 6.9)" ]
	[ "$(jq -r '.threads[2].pid' <<<"$output")" -eq 4000000 ]
	[ "$(jq -r '.threads[2].errno' <<<"$output")" = ESRCH ]
	[ "$(jq -c .totals <<<"$output")" = '{"done":1,"failed":2,"exited":0,"not_reached":0}' ]
	[ "$(jq -r .exit_status <<<"$output")" -eq 64 ]
	# the failures still reach stderr, one line each
	[ "$(grep -c '^pidmempolicy: failed to set' <<<"$stderr")" -eq 2 ]
}

@test "option --migrate under bind: pages touched before the call move to the new node" {
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	addr=$(target_cmd alloc 32)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "8192 0 0 0" ]
	run --separate-stderr "$PMP" -v --migrate --membind=2 -p "$TARGET_PID"
	echo "$output $stderr"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "moved the pages of pid $TARGET_PID (pmp-target) to the policy's nodes (0 not moved)" ]
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 0 8192 0" ]
	[ "$(task_policy "$TARGET_PID")" = "bind:2" ]
}

@test "option --migrate under interleave: pages elsewhere move onto the policy's nodes" {
	target_start
	run "$PMP" --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd alloc 32)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 8192 0 0" ]
	run "$PMP" --migrate --interleave=2-3 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	read -r n0 n1 n2 n3 < <(numa_nodes_of "$TARGET_PID" "$addr")
	echo "pages per node: $n0 $n1 $n2 $n3"
	[ $((n0 + n1)) -eq 0 ] && [ $((n2 + n3)) -eq 8192 ]
}

@test "option --migrate-only moves pages and leaves the policy as it was" {
	target_start
	run "$PMP" --membind=1 -p "$TARGET_PID"
	addr=$(target_cmd alloc 16)
	run --separate-stderr "$PMP" --migrate-only --membind=3 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "0 0 0 4096" ]
	[ "$(task_policy "$TARGET_PID")" = "bind:1" ]
}

@test "option --cgroup: every process in the cgroup is set, one outside is untouched" {
	mkdir "$CG"
	target_start --name=in1
	target_start --name=in2
	target_start --name=out
	echo "$TARGET_PID_in1" > "$CG/cgroup.procs"
	echo "$TARGET_PID_in2" > "$CG/cgroup.procs"
	run --separate-stderr "$PMP" -v --cgroup="$CG" --membind=1 
	echo "$output $stderr"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$TARGET_PID_in1")" = "bind:1" ]
	[ "$(task_policy "$TARGET_PID_in2")" = "bind:1" ]
	[ "$(task_policy "$TARGET_PID_out")" = default ]
	[ "${lines[-1]}" = "2 set, 0 failed, 0 exited" ]
	for n in in1 in2 out; do target_stop --name=$n; done
}

@test "option --cgroup on a directory that is no cgroup: refused before anything" {
	run --separate-stderr "$PMP" --cgroup=/tmp --membind=1
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: /tmp is not a cgroup v2 directory (not on a cgroup2 file system)" ]
}

@test "option --cgroup takes the subtree: processes in leaf cgroups (a slice's services) are set" {
	mkdir -p "$CG/app.slice/web.service" "$CG/app.slice/db.service" "$CG/idle.slice/none.service"
	target_start --name=web
	target_start --name=db
	target_start --name=out
	echo "$TARGET_PID_web" > "$CG/app.slice/web.service/cgroup.procs"
	echo "$TARGET_PID_db" > "$CG/app.slice/db.service/cgroup.procs"
	run --separate-stderr "$PMP" -v --cgroup="$CG/app.slice" --membind=2
	echo "$output $stderr"
	[ "$status" -eq 0 ]
	[ "$(task_policy "$TARGET_PID_web")" = "bind:2" ]
	[ "$(task_policy "$TARGET_PID_db")" = "bind:2" ]
	[ "$(task_policy "$TARGET_PID_out")" = default ]
	[ "${lines[-1]}" = "2 set, 0 failed, 0 exited" ]
	# a subtree with no process says so
	run --separate-stderr "$PMP" --cgroup="$CG/idle.slice" --membind=2
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: cgroup $CG/idle.slice has no processes (nor has any cgroup below it)" ]
	for n in web db out; do target_stop --name=$n; done
	rmdir "$CG/app.slice/web.service" "$CG/app.slice/db.service" "$CG/app.slice" \
		"$CG/idle.slice/none.service" "$CG/idle.slice" 2>/dev/null || true
}

@test "option --unit: refused while systemd does not run; the unit's cgroup once it does, as systemd lays it out" {
	# this guest boots without systemd
	[ ! -e /run/systemd/system ]
	target_start --name=svc
	target_start --name=out
	run --separate-stderr "$PMP" --unit=pmp-demo --membind=3
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: --unit=pmp-demo: systemd is not running here (no /run/systemd/system); name the cgroup with --cgroup=PATH" ]
	[ "$(task_policy "$TARGET_PID_svc")" = default ]
	# what systemd would have made: the unit in its slice
	mkdir -p /run/systemd/system /sys/fs/cgroup/pmp.slice/pmp-demo.service
	echo "$TARGET_PID_svc" > /sys/fs/cgroup/pmp.slice/pmp-demo.service/cgroup.procs
	run --separate-stderr "$PMP" -v --unit=pmp-demo --membind=3
	echo "$output $stderr"
	status_was=$status
	echo "$TARGET_PID_svc" > /sys/fs/cgroup/cgroup.procs
	rmdir /sys/fs/cgroup/pmp.slice/pmp-demo.service /sys/fs/cgroup/pmp.slice /run/systemd/system /run/systemd
	[ "$status_was" -eq 0 ]
	[ "$(task_policy "$TARGET_PID_svc")" = "bind:3" ]
	[ "$(task_policy "$TARGET_PID_out")" = default ]
	[ "${lines[-1]}" = "1 set, 0 failed, 0 exited" ]
	for n in svc out; do target_stop --name=$n; done
}

# bound_64: a target with 64 MiB on node 0; ADDR.
bound_64() {
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd alloc 64)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "16384 0 0 0" ]
}

@test "option --rate caps the move: 48 MiB at 16M/s take at least 2.5 s, and end spread" {
	bound_64
	t0=$EPOCHREALTIME
	run --separate-stderr "$PMP" --migrate-only --interleave=0-3 --rate=16M/s -p "$TARGET_PID"
	t1=$EPOCHREALTIME
	echo "status=$status err=$stderr took $t0 .. $t1"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# a lower bound, which no speed of the machine can break: 44 MiB of
	# the 48 are paced (the last batch is not waited for)
	took_ms=$(( (${t1/./} - ${t0/./}) / 1000 ))
	[ "$took_ms" -ge 2500 ]
	within_share $(numa_nodes_of "$TARGET_PID" "$addr")
	run "$PMP" --rate=0M/s --migrate-only --interleave=0-3 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	run "$PMP" --rate=16M/s --interleave=0-3 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
}

# The progress line on a terminal is proven in the arm64 guest
# (arm64-smoke.bats): these tinyconfig kernels have no pseudo-terminals.

@test "option --migrate: mlocked pages move; pages the kernel cannot move are counted and named (EBUSY)" {
	bound_64
	[ "$(target_cmd "mlock $addr")" = ok ]
	reply=$(target_cmd "pin $addr 1024")
	[[ $reply =~ ^"ok "([0-9]+)$ ]]
	pinned=${BASH_REMATCH[1]}
	[ "$pinned" -ge 16 ]
	run --separate-stderr "$PMP" --json --migrate-only --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 0 ]
	stayed=$(jq -r '.threads[0].migration.not_moved' <<<"$output")
	busy=$(jq -r '.threads[0].migration.not_moved_by.EBUSY // 0' <<<"$output")
	echo "pinned $pinned, not moved $stayed, EBUSY $busy"
	[ "$stayed" -gt 0 ] && [ "$busy" -eq "$stayed" ]
	[ "$stderr" = "pidmempolicy: pid $TARGET_PID (pmp-target): $stayed pages could not be moved (EBUSY $busy)" ]
	# the pinned pages are still on node 0; the mlocked rest moved
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "pages per node: ${n[*]}"
	[ "$((n[0] + n[1] + n[2] + n[3]))" -eq 16384 ]
	[ "${n[1]}" -ge 3000 ] && [ "${n[2]}" -ge 3000 ] && [ "${n[3]}" -ge 3000 ]
	grep -q "^VmLck:.* 65536 kB" "/proc/$TARGET_PID/status"
}

@test "option --migrate while the target allocates and frees: exit 0, consistent, only the churning pages not moved" {
	bound_64
	# two threads map, touch and unmap 1 MiB in a loop during the move
	[[ $(target_cmd "faulters 2 1") == "ok "* ]]
	run --separate-stderr "$PMP" --json --migrate-only --interleave=0-3 -p "$TARGET_PID"
	loops=$(target_cmd "faulters 0 1")
	echo "status=$status err=$stderr faulters: $loops"
	[ "$status" -eq 0 ]
	[[ $loops =~ ^"ok "([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
	# Only the faulters' pages may stay: gone before the move (ENOENT,
	# EFAULT), or caught mid-fault or replaced by a new page (EBUSY).
	# They held at most 2 x 256 pages when the maps were read, and a
	# page is planned at most once in each of the three passes.
	jq -r '.threads[0].migration.not_moved_by | keys[]' <<<"$output" | while read -r why; do
		[ "$why" = ENOENT ] || [ "$why" = EFAULT ] || [ "$why" = EBUSY ] ||
			{ echo "not moved for $why"; false; }
	done
	[ "$(jq -r '.threads[0].migration.not_moved' <<<"$output")" -le $((3 * 512)) ]
	[ "$(jq -r '.threads[0].migration.errno' <<<"$output")" = null ]
	# the shares were counted with the faulters' pages, which then went:
	# each node has its part of the 64 MiB, give or take theirs
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "pages per node: ${n[*]}"
	[ "$((n[0] + n[1] + n[2] + n[3]))" -eq 16384 ]
	for i in 0 1 2 3; do [ "${n[i]}" -ge 3000 ]; done
	[ "$(target_cmd ping)" = pong ]
}

# SIGTERM: a background job of this shell starts with SIGINT ignored, and
# the tool keeps an ignored signal ignored (nohup); host tests send SIGINT.
@test "option --migrate: SIGTERM between batches: 143, how far it got, the pages all still there" {
	bound_64
	"$PMP" --migrate-only --interleave=0-3 --rate=8M/s -p "$TARGET_PID" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	tool=$!
	sleep 2
	kill -TERM "$tool"
	status=0
	wait "$tool" || status=$?
	cat "$BATS_TEST_TMPDIR/err"
	[ "$status" -eq 143 ]
	line=$(grep "interrupted while moving" "$BATS_TEST_TMPDIR/err")
	[[ $line =~ ^"pidmempolicy: interrupted while moving the pages of pid $TARGET_PID (pmp-target): "([0-9]+)" of "([0-9]+)" moved"$ ]]
	moved=${BASH_REMATCH[1]}
	[ "$moved" -gt 0 ] && [ "$moved" -lt "${BASH_REMATCH[2]}" ]
	# the 64 MiB are all there, part of them moved (the count also has
	# the heap's and stacks' pages)
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	[ "$((n[0] + n[1] + n[2] + n[3]))" -eq 16384 ]
	[ "$((16384 - n[0]))" -le "$moved" ] && [ "${n[0]}" -gt 4096 ]
	tail -1 "$BATS_TEST_TMPDIR/err" | grep -q "^pidmempolicy: interrupted: "
}

@test "the default picks the verified syscall here: never a ptrace(2) call (seccomp), -v and --json say so" {
	# the process only: without PIDFD_THREAD (6.9) the syscall cannot
	# address the other threads (tool-612.bats does -a)
	target_start
	# ptrace(2) is 101 on x86_64: the filter kills the tool if it calls it
	# (LeakSanitizer's check at exit would call it too: off)
	export ASAN_OPTIONS=detect_leaks=0
	# (the positive control: its tracing process dies of it, before any change)
	run --separate-stderr pmp-seccomp --deny=101 -- "$PMP" --backend=ptrace --membind=2 -p "$TARGET_PID"
	[ "$status" -eq 1 ]
	[[ $stderr == *": ptrace injection failed: the tracing process ended before the thread was changed" ]]
	[ "$(task_policy "$TARGET_PID")" = default ]
	run --separate-stderr pmp-seccomp --deny=101 -- "$PMP" -v --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[-2]} == "backend: syscall (the kernel provides pidfd_set_mempolicy(2) as syscall 451 "* ]]
	[ "${lines[-1]}" = "1 set, 0 failed, 0 exited" ]
	[ "$(task_policy "$TARGET_PID")" = interleave:0-3 ]
	run --separate-stderr pmp-seccomp --deny=101 -- "$PMP" --json --membind=1 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	[ "$(jq -r .backend <<<"$output")" = syscall ]
	[ "$(task_policy "$TARGET_PID")" = bind:1 ]
}

# spread.h: private anonymous memory is the process's own; shared and file
# pages move only when asked.
@test "option --migrate-shared: a re-spread moves shared memory too; without it, shared pages stay" {
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd "alloc-shared 16")
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "4096 0 0 0" ]
	run --separate-stderr "$PMP" --json --migrate-only --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 0 ]
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "4096 0 0 0" ]
	private=$(jq -r '.threads[0].migration.pages' <<<"$output")
	run --separate-stderr "$PMP" --json --migrate-only --migrate-shared --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status err=$stderr"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.threads[0].migration.not_moved' <<<"$output")" -eq 0 ]
	# the shared pages and the files' pages (the program, its libraries)
	# are counted now, and the shared ones re-spread
	all=$(jq -r '.threads[0].migration.pages' <<<"$output")
	echo "pages counted: $private private, $all with shared and file pages"
	[ "$all" -ge $((private + 4096)) ]
	read -r -a n <<<"$(numa_nodes_of "$TARGET_PID" "$addr")"
	echo "the shared mapping's pages per node: ${n[*]}"
	[ $((n[0] + n[1] + n[2] + n[3])) -eq 4096 ]
	for i in 0 1 2 3; do
		[ "${n[i]}" -ge 512 ]
	done
}

@test "option --migrate with --interleave re-spreads the pages the process has: each node its share" {
	target_start
	run "$PMP" --membind=0 -p "$TARGET_PID"
	[ "$status" -eq 0 ]
	addr=$(target_cmd alloc 64)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "16384 0 0 0" ]
	run --separate-stderr "$PMP" -v --migrate --interleave=0-3 -p "$TARGET_PID"
	echo "status=$status out=$output err=$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[1]} == "re-spread the pages of pid $TARGET_PID (pmp-target) over the policy's nodes: "*" moved (0 not moved)" ]]
	# each node's pages before and after, as the moves reported them (the
	# heap's and stacks' pages too, wherever they were)
	[[ ${lines[2]} =~ ^"  pages per node: N0 "([0-9]+)"->"([0-9]+)" N1 "([0-9]+)"->"([0-9]+)" N2 "([0-9]+)"->"([0-9]+)" N3 "([0-9]+)"->"([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -ge 16384 ]
	total=$((BASH_REMATCH[1] + BASH_REMATCH[3] + BASH_REMATCH[5] + BASH_REMATCH[7]))
	for i in 2 4 6 8; do
		d=$((BASH_REMATCH[i] * 4 - total))
		[ "${d#-}" -le $((total / 20)) ] || { echo "node $((i / 2 - 1)): ${BASH_REMATCH[i]} of $total"; false; }
	done
	within_share $(numa_nodes_of "$TARGET_PID" "$addr")
	[ "$(task_policy "$TARGET_PID")" = interleave:0-3 ]
	# and new pages interleave
	addr=$(target_cmd alloc 16)
	[ "$(numa_nodes_of "$TARGET_PID" "$addr")" = "1024 1024 1024 1024" ]
}
