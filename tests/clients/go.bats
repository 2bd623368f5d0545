#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# A Go program (SIGURG preemption on every thread, goroutine stacks, a
# runtime that owns its signal handlers): alloc.go, built here, with
# GOMAXPROCS=2: 16 goroutines allocating and checking their data, 8 that
# hold an OS thread each, and one every 20 ms that ends its thread.
# flip.sh sets every thread (-a) at least 24 times while it runs; it must
# exit 0 with its check passed.

load common

setup_file() {
	need_commands golang-go go jq || return 0
	export OUT=$CLIENTS_OUT/go
	rm -rf "$OUT"
	mkdir -p "$OUT"
	GO_TMP=$(mktemp -d /tmp/pmp-clients-go.XXXXXX)
	GO_CG=$(client_cgroup go) || GO_CG=
	export GO_TMP GO_CG
	cp "$BATS_TEST_DIRNAME/alloc.go" "$GO_TMP/"
	(cd "$GO_TMP" && HOME=$GO_TMP GOPATH=$GO_TMP/gopath GOCACHE=$GO_TMP/cache GOFLAGS="" GO111MODULE=off GOPROXY=off \
		go build -o alloc alloc.go) >"$OUT/build.out" 2>&1 || { cat "$OUT/build.out"; return 1; }
	go version >"$OUT/go.version"
	GOMAXPROCS=2 bg_in_cgroup "$GO_CG" "$GO_TMP/alloc" -goroutines 16 -locked 8 -seconds 120 \
		-stop "$GO_TMP/stop" >"$OUT/alloc.out" 2>"$OUT/alloc.err"
	export GO_PID=$BG_PID
	wait_for 30 grep -q '^ready$' "$OUT/alloc.out" || { cat "$OUT/alloc.out" "$OUT/alloc.err"; return 1; }
	sleep 0.5
	status_to "$OUT/flip.status" "$FLIP" --out="$OUT/flips" --count=24 --pause=0.2 --pid="$GO_PID" 3>&-
	touch "$GO_TMP/stop"
	status_to "$OUT/alloc.status" wait "$GO_PID"
}

teardown_file() {
	[ -n "${GO_TMP:-}" ] || return 0
	kill -KILL "${GO_PID:-}" 2>/dev/null || true
	kill_cgroup "${GO_CG:-}"
	rm -rf "$GO_TMP"
}

@test "go: >= 20 flips of every thread of the Go program, each exit 0, its JSON totals as numa_maps of every thread show" {
	flips_ok "$OUT/flips"
	[ "$(cat "$OUT/flip.status")" -eq 0 ]
	# more threads than GOMAXPROCS: the locked ones, the runtime's
	[ "$(jq '[.threads[] | select(.result == "set")] | length' "$OUT/flips/flip-0.json")" -ge 10 ]
}

@test "go: the program checked its data, exited 0, and the runtime reported nothing" {
	cat "$OUT/alloc.out" "$OUT/alloc.err"
	[ "$(cat "$OUT/alloc.status")" -eq 0 ]
	grep -Eq '^ok rounds=[1-9][0-9]* checked=[1-9][0-9]* threads=[1-9][0-9]*$' "$OUT/alloc.out"
	! grep -q MISMATCH "$OUT/alloc.out" || false
	[ ! -s "$OUT/alloc.err" ]
}
