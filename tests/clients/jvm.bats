#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# A JVM (OpenJDK 17: GC and JIT threads, safepoints, signal handlers and
# stacks of its own): Alloc.java, compiled here, with 4 allocating worker
# threads that check their own data and a short-lived thread started every
# 20 ms, under G1.  flip.sh sets every thread of the JVM (-a) at least 24
# times while it runs; then `jcmd PID Thread.print` must answer, the
# program must exit 0 with its check passed, and no hs_err file appear.

load common

JAVA_OPTS=(-Xmx256m -XX:+UseG1GC)

setup_file() {
	need_commands openjdk-17-jdk-headless java javac jcmd jq || return 0
	export OUT=$CLIENTS_OUT/jvm
	rm -rf "$OUT"
	mkdir -p "$OUT"
	JVM_TMP=$(mktemp -d /tmp/pmp-clients-jvm.XXXXXX)
	JVM_CG=$(client_cgroup jvm) || JVM_CG=
	export JVM_TMP JVM_CG
	javac -d "$JVM_TMP" "$BATS_TEST_DIRNAME/Alloc.java" >"$OUT/javac.out" 2>&1 || { cat "$OUT/javac.out"; return 1; }
	java -version >"$OUT/java.version" 2>&1
	cd "$JVM_TMP" || return 1
	bg_in_cgroup "$JVM_CG" java "${JAVA_OPTS[@]}" -XX:ErrorFile="$JVM_TMP/hs_err_pid%p.log" -cp "$JVM_TMP" \
		Alloc 4 120 "$JVM_TMP/stop" >"$OUT/alloc.out" 2>"$OUT/alloc.err"
	export JVM_PID=$BG_PID
	cd - >/dev/null || return 1
	wait_for 30 grep -q '^ready$' "$OUT/alloc.out" || { cat "$OUT/alloc.out" "$OUT/alloc.err"; return 1; }
	sleep 1	# the JIT at work, the GC's threads started
	status_to "$OUT/flip.status" "$FLIP" --out="$OUT/flips" --count=24 --pause=0.2 --pid="$JVM_PID" 3>&-
	# the threads now, with their policies (the last flip's)
	local t comm line
	for t in /proc/"$JVM_PID"/task/*; do
		if { IFS= read -r comm <"$t/comm" && IFS= read -r line <"$t/numa_maps"; } 2>/dev/null; then
			read -r _ line _ <<<"$line"
			printf '%s\t%s\t%s\n' "${t##*/}" "$comm" "$line"
		fi
	done >"$OUT/threads.after"
	cd "$JVM_TMP" || return 1
	status_to "$OUT/jcmd.status" timeout 60 jcmd "$JVM_PID" Thread.print >"$OUT/jcmd.out" 2>&1
	cd - >/dev/null || return 1
	touch "$JVM_TMP/stop"
	status_to "$OUT/alloc.status" wait "$JVM_PID"
	find "$JVM_TMP" "$PWD" -maxdepth 1 -name 'hs_err*' >"$OUT/hs_err.found"
}

teardown_file() {
	[ -n "${JVM_TMP:-}" ] || return 0
	kill -KILL "${JVM_PID:-}" 2>/dev/null || true
	kill_cgroup "${JVM_CG:-}"
	rm -rf "$JVM_TMP"
}

@test "jvm: >= 20 flips of every JVM thread, each exit 0, its JSON totals as numa_maps of every thread show" {
	flips_ok "$OUT/flips"
	[ "$(cat "$OUT/flip.status")" -eq 0 ]
}

@test "jvm: the GC, JIT and VM threads were among those set, and every thread has the last policy" {
	local want
	for want in 'VM Thread' 'C2 CompilerThre' 'C1 CompilerThre' 'GC Thread#0' 'G1 Main Marker' \
		    'Signal Dispatch' 'alloc-worker-0' 'alloc-worker-3'; do
		jq -e --arg c "$want" '[.threads[] | select(.comm == $c and .result == "set")] | length == 1' \
			"$OUT/flips/flip-23.json" >/dev/null || { echo "not set: $want"; false; }
	done
	cat "$OUT/threads.after"
	[ "$(wc -l <"$OUT/threads.after")" -ge 15 ]
	# flip 23 set bind:0; threads started since inherit it
	! awk -F'\t' '$3 != "bind:0"' "$OUT/threads.after" | grep . || false
}

@test "jvm: jcmd Thread.print answers after the flips, and shows the workers" {
	cat "$OUT/jcmd.out"
	[ "$(cat "$OUT/jcmd.status")" -eq 0 ]
	grep -q '^"alloc-worker-0"' "$OUT/jcmd.out"
	grep -q '^"VM Thread"' "$OUT/jcmd.out"
}

@test "jvm: Alloc verified its data and exited 0; no hs_err crash file" {
	cat "$OUT/alloc.out" "$OUT/alloc.err"
	[ "$(cat "$OUT/alloc.status")" -eq 0 ]
	grep -Eq '^ok rounds=[1-9][0-9]* checked=[1-9][0-9]* threads=[1-9][0-9]*$' "$OUT/alloc.out"
	! grep -q MISMATCH "$OUT/alloc.out" || false
	[ ! -s "$OUT/alloc.err" ]
	[ ! -s "$OUT/hs_err.found" ]
}
