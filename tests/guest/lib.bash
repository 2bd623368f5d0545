# SPDX-License-Identifier: GPL-2.0-or-later
# lib.bash - helpers for the pidmempolicy guest tests (bats).
#
# Load it from a test file with `load lib` (mkinitramfs.sh puts it beside the
# test files in /opt/pmp/tests). It defines a default teardown() that calls
# pmp_teardown; a test file that defines its own teardown() must call
# pmp_teardown from it.
#
# Environment (exported by the guest /init):
#   PMP_KERNEL_VARIANT  patched | stock
#   PMP_KERNEL_VERSION  6.1 | 6.12 (run-guest.sh --version; "unknown" if the
#                       rig did not say)
#   PMP_KERNEL_RELEASE  uname -r
#   PMP_TOOL            the tool under test (/opt/pmp/bin/pidmempolicy)
#   PMP_HELPERS         directory of the helper programs (/opt/pmp/bin)
#   PMP_CMD_TIMEOUT     seconds target_cmd waits for a reply (default 20;
#                       TCG is slow: a 64 MiB alloc takes a second or two)
#
# Targets (tests/helpers/pmp-target.c; see its header for the commands):
#   target_start [--name=NAME] [--threads=N] [--exec=PROG [--arg=ARG]...] [-- WRAPPER ARGS...]
#       Start pmp-target (or PROG with the ARGs, another helper that prints
#       "ready PID" and reads its stdin; --threads is pmp-target's) in the background
#       (optionally through a wrapper
#       such as `pmp-runas --uid=1000 --` or `pmp-seccomp --deny=... --`,
#       which must exec its command so that the PID stays the same), with
#       stdin and stdout connected to fifos in $BATS_TEST_TMPDIR, wait for its
#       "ready PID" line and set TARGET_PID (and TARGET_PID_<NAME> when
#       --name is given). The default name is "target". Several targets can
#       run at once under different names.
#   target_cmd [--name=NAME] "COMMAND ARGS"
#       Send one command, wait (bounded by PMP_CMD_TIMEOUT) for the one-line
#       reply and print it. Returns 1 on timeout or if the reply starts with
#       "error " (the reply is still printed). A transcript of every target is
#       kept in $BATS_TEST_TMPDIR/NAME.log (target_log prints it).
#   target_stop [--name=NAME]
#       Send "exit", wait briefly, then SIGKILL; reap it. Idempotent.
#   target_log [--name=NAME]    print the transcript and the target's stderr
#
# NUMA inspection:
#   numa_nodes_of PID ADDR
#       Print the page counts per node "N0 N1 N2 N3" (one number per node
#       in /sys/devices/system/node, 0 for nodes that do not appear) of the
#       /proc/PID/numa_maps line whose start address is ADDR (hex, as
#       pmp-target's alloc prints it; a 0x prefix is accepted). Fails if
#       there is no such line.
#   numa_policy_of PID ADDR
#       Print the policy field (second column) of that numa_maps line.
#   anon_huge_kb PID ADDR
#       Print the AnonHugePages (kB) of the /proc/PID/smaps mapping that
#       starts at ADDR: how much of it transparent huge pages hold.
#   vmstat FIELD            print /proc/vmstat's FIELD (0 if absent)
#   within_share A B C D
#       Succeed if each of the four page counts is within 5% of a quarter
#       of the 16384 pages of a 64 MiB allocation (prints them).
#   spread_in_huge_pages PID ADDR
#       Succeed if the 64 MiB of huge pages at ADDR lie on the 4 nodes in
#       whole huge pages (512 pages each), within 5% of 4096 pages a node,
#       still all in huge pages.
#   task_policy PID [TID], thread_state PID TID, tids_of PID
#       from tests/lib/common.bash, which this file loads
#   node_count              number of NUMA nodes in /sys/devices/system/node
#   cap_eff PID             CapEff of PID as a hex string
#   cap_eff_has PID BIT     succeed if bit BIT (e.g. 23 = CAP_SYS_NICE) is set
#   wait_until SECS CMD...  retry CMD every 0.1 s until it succeeds or SECS pass
#
# The kernel a file is for, in its setup():
#   only_on VARIANT [VERSION]   fail unless the guest runs the VARIANT
#                               (patched, stock) kernel [of Linux VERSION]
#
# Assertions shared by the suites of several kernels (each runs the tool,
# or what is given, with `run --separate-stderr`):
#   NOT_PROVIDED                the tool's refusal on a kernel without
#                               pidfd_set_mempolicy (stock 6.1 and 6.12)
#   not_provided CMD...         CMD exits 2 with $NOT_PROVIDED, and the
#                               target ($TARGET_PID) keeps the default policy
#   refused PID MSG CMD...      CMD exits 1 with the one line
#                               "pidmempolicy: failed to set pid PID
#                               (pmp-target): MSG"
#   guard_kills_raw_call NR     the positive control of "NR is never called":
#                               a raw call of NR on a new target under
#                               `pmp-seccomp --deny=NR` is killed (status 159)
#   target_threads_have POLICY  every thread of pmp-target has POLICY
#   evenly_on_4_nodes ADDR      the 64 MiB the target allocated at ADDR lie
#                               on the four nodes, 4000 to 4200 pages each
#
# Syscall numbers:
#   pmp_syscall_nr          the number the patched kernel of this rig gives
#                           pidfd_set_mempolicy: 451 on 6.1 (v2 patch), 463
#                           on 6.12 (tests/kernel/patches/linux-6.12; 463 is
#                           setxattrat from 6.13 on). By uname -r.
#   slab_objects NAME       active objects of slab cache NAME in /proc/slabinfo

load ../lib/common

PMP_HELPERS=${PMP_HELPERS:-/opt/pmp/bin}
PMP_TOOL=${PMP_TOOL:-$PMP_HELPERS/pidmempolicy}
PMP=$PMP_TOOL
PMP_CMD_TIMEOUT=${PMP_CMD_TIMEOUT:-60}

declare -gA _PMP_TPID=() _PMP_TWFD=() _PMP_TRFD=()

_pmp_err() { printf 'lib.bash: %s\n' "$*" >&2; }

target_start() {
	local threads=0 name=target exe=
	local -a wrapper=() prog args=()
	while [ $# -gt 0 ]; do
		case $1 in
		--name=*) name=${1#--name=} ;;
		--threads=*) threads=${1#--threads=} ;;
		--exec=*) exe=${1#--exec=} ;;
		--arg=*) args+=("${1#--arg=}") ;;
		--) shift; wrapper=("$@"); break ;;
		*) _pmp_err "target_start: unknown argument '$1'"; return 2 ;;
		esac
		shift
	done
	[[ $name =~ ^[A-Za-z0-9_]+$ ]] || { _pmp_err "target_start: bad name '$name'"; return 2; }
	if [ -n "${_PMP_TPID[$name]:-}" ]; then
		_pmp_err "target_start: target '$name' is already running (pid ${_PMP_TPID[$name]})"
		return 1
	fi
	if [ -n "$exe" ]; then
		prog=("$PMP_HELPERS/$exe" "${args[@]}")
	else
		prog=("$PMP_HELPERS/pmp-target" --threads="$threads")
	fi
	local dir=${BATS_TEST_TMPDIR:-/tmp}/pmp-$name
	rm -rf -- "$dir"
	local SPAWN_CLOSE=("${_PMP_TWFD[@]}" "${_PMP_TRFD[@]}")
	fifo_spawn "$dir" "${wrapper[@]}" "${prog[@]}"
	local pid=$SPAWN_PID wfd=$SPAWN_W rfd=$SPAWN_R
	_PMP_TPID[$name]=$pid
	_PMP_TWFD[$name]=$wfd
	_PMP_TRFD[$name]=$rfd
	: >"${BATS_TEST_TMPDIR:-/tmp}/$name.log"
	local line
	if ! IFS= read -r -t "$PMP_CMD_TIMEOUT" -u "$rfd" line; then
		_pmp_err "target_start: no 'ready' line from ${prog[0]##*/} within ${PMP_CMD_TIMEOUT}s"
		target_log --name="$name" >&2
		target_stop --name="$name"
		return 1
	fi
	echo "< $line" >>"${BATS_TEST_TMPDIR:-/tmp}/$name.log"
	if [[ $line != "ready $pid" ]]; then
		_pmp_err "target_start: expected 'ready $pid', got '$line'"
		target_stop --name="$name"
		return 1
	fi
	TARGET_PID=$pid
	printf -v "TARGET_PID_$name" '%s' "$pid"
	export TARGET_PID
	return 0
}

target_cmd() {
	local name=target
	if [[ ${1:-} == --name=* ]]; then
		name=${1#--name=}
		shift
	fi
	[ $# -ge 1 ] || { _pmp_err "usage: target_cmd [--name=NAME] COMMAND"; return 2; }
	local cmd="$*"
	local wfd=${_PMP_TWFD[$name]:-} rfd=${_PMP_TRFD[$name]:-}
	[ -n "$wfd" ] || { _pmp_err "target_cmd: target '$name' is not running"; return 1; }
	local log=${BATS_TEST_TMPDIR:-/tmp}/$name.log
	echo "> $cmd" >>"$log"
	printf '%s\n' "$cmd" >&"$wfd" || { _pmp_err "target_cmd: cannot write to target '$name'"; return 1; }
	local line
	if ! IFS= read -r -t "$PMP_CMD_TIMEOUT" -u "$rfd" line; then
		echo "! timeout" >>"$log"
		_pmp_err "target_cmd: no reply to '$cmd' from target '$name' (pid ${_PMP_TPID[$name]}) within ${PMP_CMD_TIMEOUT}s"
		if ! kill -0 "${_PMP_TPID[$name]}" 2>/dev/null; then
			_pmp_err "target_cmd: target '$name' is dead"
		else
			# where it waits, and what each node has free: to tell a
			# slow emulator from a stuck target next time
			_pmp_err "target_cmd: target state $(awk '/^State/ { print $2 }' "/proc/${_PMP_TPID[$name]}/status")," \
				"wchan $(cat "/proc/${_PMP_TPID[$name]}/wchan" 2>/dev/null)," \
				"free: $(grep -h MemFree /sys/devices/system/node/node*/meminfo | awk '{ printf "N%s %s kB ", $2, $4 }')"
		fi
		return 1
	fi
	echo "< $line" >>"$log"
	printf '%s\n' "$line"
	[[ $line != error* ]]
}

target_stop() {
	local name=target
	if [[ ${1:-} == --name=* ]]; then
		name=${1#--name=}
		shift
	fi
	local pid=${_PMP_TPID[$name]:-}
	[ -n "$pid" ] || return 0
	local wfd=${_PMP_TWFD[$name]} rfd=${_PMP_TRFD[$name]}
	if kill -0 "$pid" 2>/dev/null; then
		{ printf 'exit\n' >&"$wfd"; } 2>/dev/null || true
		local i
		for ((i = 0; i < 20; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			# A zombie (exited, not yet reaped) still passes kill -0.
			[[ $(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null) == Z ]] && break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	eval "exec $wfd>&- $rfd>&-"
	unset "_PMP_TPID[$name]" "_PMP_TWFD[$name]" "_PMP_TRFD[$name]"
	if [ "$name" = target ] || [ "${TARGET_PID:-}" = "$pid" ]; then
		unset TARGET_PID
	fi
	return 0
}

target_log() {
	local name=target
	if [[ ${1:-} == --name=* ]]; then
		name=${1#--name=}
		shift
	fi
	local dir=${BATS_TEST_TMPDIR:-/tmp}
	echo "--- transcript of target '$name' ---"
	cat "$dir/$name.log" 2>/dev/null || true
	if [ -s "$dir/pmp-$name/stderr" ]; then
		echo "--- stderr of target '$name' ---"
		cat "$dir/pmp-$name/stderr"
	fi
}

pmp_teardown() {
	local name
	for name in "${!_PMP_TPID[@]}"; do
		target_stop --name="$name"
	done
	return 0
}

teardown() {
	pmp_teardown
}

# Where the init mounts tracefs (kernels with tracing: the 6.12 ones).
TRACEFS=/sys/kernel/tracing

# tracefs_restore: put tracefs back at $TRACEFS, whatever a test mounted
# over it or unmounted
tracefs_restore() {
	while grep -q " $TRACEFS " /proc/mounts && ! grep -q " $TRACEFS tracefs " /proc/mounts; do
		umount "$TRACEFS" || break
	done
	grep -q " $TRACEFS tracefs " /proc/mounts || mount -t tracefs tracefs "$TRACEFS"
}

node_count() {
	local n=0 d
	for d in /sys/devices/system/node/node[0-9]*; do
		[ -d "$d" ] && n=$((n + 1))
	done
	echo "$n"
}

_pmp_maps_line() {
	local pid=$1 addr=${2#0x}
	addr=${addr,,}
	local line
	line=$(grep -m1 "^0*${addr#"${addr%%[!0]*}"} " "/proc/$pid/numa_maps") || {
		_pmp_err "no numa_maps line starting at $2 in /proc/$pid/numa_maps"
		return 1
	}
	printf '%s\n' "$line"
}

numa_nodes_of() {
	[ $# -eq 2 ] || { _pmp_err "usage: numa_nodes_of PID ADDR"; return 2; }
	local line
	line=$(_pmp_maps_line "$1" "$2") || return 1
	local max=$(($(node_count) - 1)) i out=() word
	for ((i = 0; i <= max; i++)); do
		out[i]=0
	done
	for word in $line; do
		if [[ $word =~ ^N([0-9]+)=([0-9]+)$ ]]; then
			out[BASH_REMATCH[1]]=${BASH_REMATCH[2]}
		fi
	done
	echo "${out[*]}"
}

numa_policy_of() {
	[ $# -eq 2 ] || { _pmp_err "usage: numa_policy_of PID ADDR"; return 2; }
	local line
	line=$(_pmp_maps_line "$1" "$2") || return 1
	numa_maps_policy "$line"
}

anon_huge_kb() {
	[ $# -eq 2 ] || { _pmp_err "usage: anon_huge_kb PID ADDR"; return 2; }
	local addr=${2#0x} in=0 key val rest
	addr=${addr,,}
	while read -r key val rest; do
		if [[ $key =~ ^([0-9a-f]+)-[0-9a-f]+$ ]]; then
			[ $((16#${BASH_REMATCH[1]})) -eq $((16#$addr)) ] && in=1 || in=0
		elif [ "$in" = 1 ] && [ "$key" = AnonHugePages: ]; then
			echo "$val"
			return 0
		fi
	done <"/proc/$1/smaps"
	_pmp_err "no smaps mapping starting at $2 in /proc/$1/smaps"
	return 1
}

# (each check ends in "|| return 1": a false test before the last
# command of an && list does not stop a bats test by itself)
within_share() {
	local n
	echo "pages per node: $*"
	for n in "$@"; do
		[ "$n" -ge 3891 ] && [ "$n" -le 4301 ] || return 1
	done
}

spread_in_huge_pages() {
	local n i
	read -r -a n <<<"$(numa_nodes_of "$1" "$2")"
	within_share "${n[@]}" || return 1
	for i in 0 1 2 3; do
		[ $((n[i] % 512)) -eq 0 ] || return 1
	done
	[ "$(anon_huge_kb "$1" "$2")" -eq 65536 ]
}

vmstat() {
	local key val
	while read -r key val; do
		[ "$key" = "$1" ] && { echo "$val"; return 0; }
	done </proc/vmstat
	echo 0
}

cap_eff() {
	local key val
	while read -r key val; do
		[ "$key" = CapEff: ] && { echo "$val"; return 0; }
	done <"/proc/$1/status"
	return 1
}

cap_eff_has() {
	local hex
	hex=$(cap_eff "$1") || return 1
	(((0x$hex >> $2) & 1))
}

wait_until() {
	local secs=$1
	shift
	local end=$((SECONDS + secs))
	while ! "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

PMP_NR_61=451
PMP_NR_612=463

pmp_syscall_nr() {
	case $(uname -r) in
	6.12.*) echo "$PMP_NR_612" ;;
	*) echo "$PMP_NR_61" ;;
	esac
}

slab_objects() {
	local name active rest
	while read -r name active rest; do
		[ "$name" = "$1" ] && { echo "$active"; return 0; }
	done </proc/slabinfo
	_pmp_err "no slab cache '$1' in /proc/slabinfo"
	return 1
}

only_on() {
	[ "$PMP_KERNEL_VARIANT" = "$1" ] || { echo "this file is for the $1 kernel" >&2; return 1; }
	[ -z "${2:-}" ] || [[ $(uname -r) == "$2".* ]] || { echo "this file is for Linux $2" >&2; return 1; }
}

NOT_PROVIDED="pidmempolicy: this kernel does not provide pidfd_set_mempolicy(2): /proc/kallsyms names no sys_pidfd_set_mempolicy (--backend=ptrace works without it)"

not_provided() {
	run --separate-stderr "$@"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 2 ]
	[ "$stderr" = "$NOT_PROVIDED" ]
	[ "$(task_policy "$TARGET_PID")" = default ]
}

refused() {
	local pid=$1 msg=$2
	shift 2
	run --separate-stderr "$@"
	echo "status=$status stderr=[$stderr]"
	[ "$status" -eq 1 ]
	[ "$stderr" = "pidmempolicy: failed to set pid $pid (pmp-target): $msg" ]
}

guard_kills_raw_call() {
	target_start
	run pmp-seccomp --deny="$1" -- pmp-rawcall --nr="$1" --pid="$TARGET_PID" --mode=interleave --nodes=0-3
	[ "$status" -eq 159 ]
}

target_threads_have() {
	local t
	for t in $(target_cmd threads); do
		[ "$(task_policy "$TARGET_PID" "$t")" = "$1" ]
	done
}

evenly_on_4_nodes() {
	local n0 n1 n2 n3 n
	read -r n0 n1 n2 n3 < <(numa_nodes_of "$TARGET_PID" "$1")
	echo "pages per node: $n0 $n1 $n2 $n3"
	for n in $n0 $n1 $n2 $n3; do
		[ "$n" -ge 4000 ] && [ "$n" -le 4200 ]
	done
}
