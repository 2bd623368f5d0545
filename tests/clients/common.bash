# SPDX-License-Identifier: GPL-2.0-or-later
# common.bash - what the client suites (tests/clients/*.bats) share.
#
# Each suite starts a real service in a temporary directory, in a cgroup v2
# of its own where the host has one (so that everything it forks is found
# and killed), loads it, runs flip.sh over it meanwhile, and keeps what it
# measured in files: setup_file does the whole run, the tests judge it.  A
# host without the service's binary skips the suite with the reason (bats
# 1.8 cannot skip from setup_file: it exports CLIENT_SKIP, and setup()
# skips each test).
#
# The harness (make check-clients) exports PIDMEMPOLICY, PMP_BUILDDIR and
# PMP_SRCDIR; run by hand (bats tests/clients/redis.bats) they default to
# the in-tree _build.  PMP_CLIENTS_NO_CGROUP=1 acts as if the host had no
# cgroup2 (PostgreSQL is then flipped by its PIDs).

bats_require_minimum_version 1.5.0

PMP_SRCDIR=${PMP_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
PMP_BUILDDIR=${PMP_BUILDDIR:-$PMP_SRCDIR/_build}
PMP=${PIDMEMPOLICY:-$PMP_BUILDDIR/src/pidmempolicy}
export PIDMEMPOLICY=$PMP
FLIP=$BATS_TEST_DIRNAME/flip.sh
# what the suites leave in the build tree: latency rows, flip logs
CLIENTS_OUT=$PMP_BUILDDIR/tests/clients

setup() {
	[ -z "${CLIENT_SKIP:-}" ] || skip "$CLIENT_SKIP"
}

# client_skip REASON: skip every test of this file (from setup_file).
client_skip() {
	export CLIENT_SKIP=$1
}

# need_commands PACKAGE CMD...: client_skip unless every CMD is found.
need_commands() {
	local pkg=$1 c
	shift
	# (no "&& continue" here: bats 1.8 takes its status for a failure)
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1 && [ ! -x "$c" ]; then
			client_skip "no $c on this host (Debian package $pkg)"
			return 1
		fi
	done
	[ -x "$PMP" ] || { client_skip "no pidmempolicy binary at $PMP (build it first)"; return 1; }
	case $(uname -m) in
	x86_64 | aarch64) ;;
	*) client_skip "the ptrace backend is x86_64 and aarch64 only"; return 1 ;;
	esac
	[ "$(id -u)" -eq 0 ] || { client_skip "needs root (services run as nobody, and ptrace)"; return 1; }
}

# cgroup2_root: where a cgroup2 file system is mounted (/sys/fs/cgroup,
# or /sys/fs/cgroup/unified in systemd's hybrid layout); fails if nowhere.
cgroup2_root() {
	[ "${PMP_CLIENTS_NO_CGROUP:-0}" != 1 ] || return 1
	awk '$3 == "cgroup2" { print $2; found = 1; exit } END { exit !found }' /proc/self/mounts
}

# client_cgroup NAME: make a cgroup of its own for the client, print its
# path; fails (printing nothing) where the host has no cgroup2.
client_cgroup() {
	local root cg
	root=$(cgroup2_root) || return 1
	cg=$root/pmp-clients-$1-$$
	mkdir "$cg" || return 1
	echo "$cg"
}

# in_cgroup CG CMD...: run CMD (a program or a function) in cgroup CG
# (none: here).
in_cgroup() {
	local cg=$1
	shift
	(
		[ -z "$cg" ] || echo "$BASHPID" >"$cg/cgroup.procs" || exit 99
		"$@"
	)
}

# bg_in_cgroup CG PROG ARGS...: start PROG in the background in cgroup CG
# (none: here), its descriptor 3 (bats's) closed; BG_PID is its PID.
bg_in_cgroup() {
	local cg=$1
	shift
	(
		[ -z "$cg" ] || echo "$BASHPID" >"$cg/cgroup.procs" || exit 99
		exec "$@" 3>&-
	) &
	BG_PID=$!
}

# kill_cgroup CG: kill every process in CG and remove it.
kill_cgroup() {
	local cg=$1 i
	[ -n "$cg" ] && [ -d "$cg" ] || return 0
	if [ -e "$cg/cgroup.kill" ]; then
		echo 1 >"$cg/cgroup.kill" 2>/dev/null || true
	else
		xargs -r kill -KILL <"$cg/cgroup.procs" 2>/dev/null || true
	fi
	i=0
	while [ -s "$cg/cgroup.procs" ] && [ "$i" -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	rmdir "$cg" 2>/dev/null || true
}

# free_port: a TCP port of 127.0.0.1 in 25000-26000 that nothing listens on.
free_port() {
	python3 - <<'EOF'
import random, socket, sys
ports = list(range(25000, 26001))
random.shuffle(ports)
for p in ports:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    sys.exit(0)
sys.exit(1)
EOF
}

# status_to FILE CMD...: run CMD, write its exit status to FILE, return 0
# (setup_file runs under errexit; the tests judge the status).
status_to() {
	local file=$1 rc=0
	shift
	"$@" || rc=$?
	echo "$rc" >"$file"
}

# wait_for SECONDS CMD...: until CMD succeeds, polling every 0.1 s.
wait_for() {
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# summary_value FILE KEY: the value of KEY=VALUE in FILE (flip.sh's summary).
summary_value() {
	sed -n "s/^$2=//p" "$1"
}

# flips_ok DIR: what every client suite asserts of flip.sh's run in DIR:
# at least 20 flips, each exit 0 with JSON totals that agree with it and
# with numa_maps of every thread.  Prints the summary for the log.
flips_ok() {
	local s=$1/flips.summary
	cat "$s"
	[ -s "$s" ]
	[ "$(summary_value "$s" flips)" -ge 20 ]
	[ "$(summary_value "$s" bad_flips)" -eq 0 ] || { head -n 40 "$1/flips.bad"; false; }
	[ "$(summary_value "$s" checked)" -gt 0 ]
}

# latency_row FILE CLIENT METRIC QUIET FLIPS INRUN: one row of the latency
# table (tests/clients/latency.sh puts the rows together): the quiet
# stretch, the stretch of the flips, the requests in flight while the
# tool ran.
latency_row() {
	printf '| %s | %s | %s | %s | %s |\n' "$2" "$3" "$4" "$5" "$6" >>"$1"
}

# stats: n, mean, p50, p99 and max of the numbers on stdin (one a line),
# as "n mean p50 p99 max"; "0 - - - -" for none.
stats() {
	sort -g | awk '
		{ v[NR] = $1; sum += $1 }
		END {
			if (NR == 0) { print "0 - - - -"; exit }
			i50 = int(NR * 0.50 + 0.999999); i99 = int(NR * 0.99 + 0.999999)
			printf "%d %.3f %.3f %.3f %.3f\n", NR, sum / NR, v[i50], v[i99], v[NR]
		}'
}
