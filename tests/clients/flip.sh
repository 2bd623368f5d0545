#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# flip.sh - set a live service's policy over and over, and check each time.
#
#   flip.sh --out=DIR [--count=N] [--while=PID] [--max=M] [--pause=SEC]
#           (--cgroup=PATH | --tree=PID | --pid=PID)
#
# Runs `pidmempolicy -a --json POLICY TARGET` (the binary: $PIDMEMPOLICY)
# N times (default 20), and on while PID lives, M times at most (default
# 200), cycling --interleave=0, --preferred=0, --localalloc, --membind=0,
# each with the tool's default engine and, every other cycle, --no-signal
# where the tool has it.  TARGET: every process of cgroup PATH
# (--cgroup), PID and its descendants as they are at each flip (-p with
# their PIDs: the fallback where the host has no cgroup2), or PID.
#
# After each flip, for every thread of every process of the target as it
# is then: the first line of /proc/PID/task/TID/numa_maps (the task
# policy: no service here sets a VMA policy on its executable) must show
# the policy just set.  A thread in the JSON that has gone since is
# counted (vanished), a thread not in it (created since, from a thread
# that had the policy) is counted (new) and must show it too.  The exit
# status must be 0 and agree with the JSON's exit_status; totals.done,
# failed and exited must count the JSON's threads by result; failed must
# be 0 and nothing but "note:" lines may reach stderr.
#
# Writes to DIR: flip-I.json and flip-I.err of each flip; flips.tsv, a line
# a flip; flips.runs, each flip's begin and end (epoch seconds); flips.bad,
# every disagreement found; flips.summary (KEY=VALUE).  Exit 0 when every
# flip agreed, 1 when one did not, 2 on a usage error.
set -uo pipefail

PMP=${PIDMEMPOLICY:?flip.sh: PIDMEMPOLICY names the binary}
out='' count=20 while_pid='' max=200 pause=0.25 mode='' target=''

for a; do
	case $a in
	--out=*) out=${a#*=} ;;
	--count=*) count=${a#*=} ;;
	--while=*) while_pid=${a#*=} ;;
	--max=*) max=${a#*=} ;;
	--pause=*) pause=${a#*=} ;;
	--cgroup=* | --tree=* | --pid=*) mode=${a%%=*}; mode=${mode#--}; target=${a#*=} ;;
	*) echo "flip.sh: unknown argument $a" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] && [ -n "$mode" ] || { echo "flip.sh: --out and a target are needed" >&2; exit 2; }
mkdir -p "$out" || exit 2

POLICY_ARGS=(--interleave=0 --preferred=0 --localalloc --membind=0)
EXPECTED=(interleave:0 prefer:0 local bind:0)
ENGINES=("")
"$PMP" --help | grep -q -- --no-signal && ENGINES+=(--no-signal)

# descendants PID: PID and every process below it, into the array PROCS:
# by /proc/P/task/T/children where the kernel has it (CONFIG_PROC_CHILDREN),
# else by every process's PPid.  Without a fork (nor do the others here):
# on a loaded host each one costs the flips their pace.
descendants() {
	local p s t kids todo=("$1")
	local -A children=()
	if [ ! -e "/proc/$1/task/$1/children" ]; then
		while IFS= read -r s; do
			p=${s%% *}
			s=${s##*) }		# "S PPID ..."
			s=${s#* }
			children[${s%% *}]+=" $p"
		done < <(cat /proc/[0-9]*/stat 2>/dev/null)
	fi
	PROCS=()
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		PROCS+=("$p")
		if [ ${#children[@]} -eq 0 ]; then
			# shellcheck disable=SC2207
			kids=($(cat /proc/"$p"/task/*/children 2>/dev/null))
			todo+=(${kids[@]+"${kids[@]}"})
		else
			# shellcheck disable=SC2206
			todo+=(${children[$p]:-})
		fi
	done
}

# processes: the target's processes now, into the array PROCS.
shopt -s globstar nullglob
processes() {
	local f p
	case $mode in
	cgroup)
		PROCS=()
		for f in "$target"/**/cgroup.procs; do
			while read -r p; do PROCS+=("$p"); done < <(cat "$f" 2>/dev/null)
		done ;;
	tree) descendants "$target" ;;
	pid) PROCS=("$target") ;;
	esac
}

bad() {
	echo "flip $i (${POLICY_ARGS[p]}${engine:+ $engine}): $*" >>"$out/flips.bad"
	flip_bad=1
}

: >"$out/flips.bad"
: >"$out/flips.runs"
printf 'flip\tpolicy\tengine\tstatus\tdone\tfailed\texited\tchecked\tnew\tvanished\twall_ms\tmax_held_us\tby_signal\tby_ptrace\tnotes\n' >"$out/flips.tsv"
flips=0 bad_flips=0 checked_all=0 new_all=0 vanished_all=0 notes_all=0 signal_all=0 ptrace_all=0
held_max=0 walls=()
i=0
while :; do
	if [ "$i" -ge "$count" ]; then
		[ -n "$while_pid" ] && [ "$i" -lt "$max" ] && kill -0 "$while_pid" 2>/dev/null || break
	fi
	p=$((i % 4))
	engine=${ENGINES[(i / 4) % ${#ENGINES[@]}]}
	expected=${EXPECTED[p]}
	flip_bad=0
	case $mode in
	cgroup) targs=(--cgroup="$target") ;;
	tree) descendants "$target"; printf -v plist '%s,' "${PROCS[@]}"; targs=(-p "${plist%,}") ;;
	pid) targs=(-p "$target") ;;
	esac
	json=$out/flip-$i.json err=$out/flip-$i.err
	t0=$EPOCHREALTIME
	"$PMP" -a --json ${engine:+"$engine"} "${POLICY_ARGS[p]}" "${targs[@]}" >"$json" 2>"$err"
	status=$?
	t1=$EPOCHREALTIME
	echo "$t0 $t1" >>"$out/flips.runs"
	wall_us=$((10#${t1/./} - 10#${t0/./}))
	printf -v wall_ms '%d.%d' $((wall_us / 1000)) $((wall_us % 1000 / 100))
	walls+=("$wall_ms")

	# the JSON: its totals against its threads and the exit status (one
	# jq: the host is loaded, and each flip's checks take their time)
	declare -A in_json=()
	if ! jq -r '([.totals.done, .totals.failed, .totals.exited, .exit_status,
			([.threads[] | select(.result == "set")] | length),
			([.threads[] | select(.result == "failed")] | length),
			([.threads[] | select(.result == "exited")] | length),
			([.threads[] | select(.path == "signal")] | length),
			([.threads[] | select(.path == "ptrace")] | length),
			([.threads[].held_us // 0] | max // 0), .policy] | @tsv),
			(.threads[] | "\(.pid)/\(.tid) \(.result)")' "$json" >"$out/flip.parsed" 2>/dev/null ||
	   ! read -r ndone failed exited js sets fails gones sig ptr held jpolicy <"$out/flip.parsed"; then
		bad "exit $status, stdout is not one JSON document: $(head -c 300 "$json")"
		read -r ndone failed exited js sets fails gones sig ptr held jpolicy <<<"- - - - - - - - - - -"
	else
		{
			read -r _
			while read -r k r; do
				in_json[$k]=$r
			done
		} <"$out/flip.parsed"
		[ "$status" -eq 0 ] || bad "exit status $status"
		[ "$js" = "$status" ] || bad "exit status $status, the JSON says $js"
		[ "$ndone" = "$sets" ] || bad "totals.done $ndone, but $sets threads have result set"
		[ "$failed" = "$fails" ] || bad "totals.failed $failed, but $fails threads have result failed"
		[ "$exited" = "$gones" ] || bad "totals.exited $exited, but $gones threads have result exited"
		[ "$failed" = 0 ] || bad "$failed failed: $(jq -c '[.threads[] | select(.result == "failed")]' "$json")"
		[ "$ndone" -gt 0 ] 2>/dev/null || bad "no thread set"
		[ "$jpolicy" = "$expected" ] || bad "the JSON's policy is $jpolicy, not $expected"
		[ "$held" -le "$held_max" ] || held_max=$held
		signal_all=$((signal_all + sig)) ptrace_all=$((ptrace_all + ptr))
	fi
	notes=0
	while IFS= read -r line; do
		case $line in
		"pidmempolicy: note: "*) notes=$((notes + 1)) ;;
		*) bad "stderr: $line" ;;
		esac
	done <"$err"
	notes_all=$((notes_all + notes))

	# numa_maps of every thread of every process the target has now
	checked=0 new=0 vanished=0
	declare -A seen=()
	processes
	for pid in "${PROCS[@]}"; do
		# (from a pipe: bash's read of a file that vanishes under it
		# keeps what it read ahead for the next read, of any file)
		while IFS= read -r line; do
			t=${line%%/numa_maps:*}
			tid=${t##*/}
			line=${line#*/numa_maps:}
			pol=${line#* }
			pol=${pol%% *}
			seen[$pid/$tid]=1
			checked=$((checked + 1))
			case ${in_json[$pid/$tid]:-} in
			set) ;;
			"") new=$((new + 1)) ;;
			*) bad "tid $tid of pid $pid has result ${in_json[$pid/$tid]} in the JSON" ;;
			esac
			if [ "$pol" != "$expected" ]; then
				comm=$(cat "$t/comm" 2>/dev/null)
				bad "tid $tid ($comm) of pid $pid: numa_maps shows $pol, not $expected$([ -n "${in_json[$pid/$tid]:-}" ] || echo ' (a thread not in the JSON)')"
			fi
		done < <(grep -m1 -H '' /proc/"$pid"/task/*/numa_maps 2>/dev/null)	# a thread gone: no line
	done
	for k in "${!in_json[@]}"; do
		[ -n "${seen[$k]:-}" ] && continue
		# not read above: it exited, or is exiting (its memory gone, so
		# numa_maps reads empty), or its process left the target
		t=/proc/${k%/*}/task/${k#*/}
		if [ "${in_json[$k]}" = set ] && [ "$mode" = pid ] && [ -d "$t" ]; then
			sleep 0.05
			if line=$(grep -m1 '' "$t/numa_maps" 2>/dev/null); then
				pol=${line#* }
				pol=${pol%% *}
				checked=$((checked + 1))
				[ "$pol" = "$expected" ] ||
					bad "tid ${k#*/} of pid ${k%/*}: numa_maps shows $pol, not $expected (read late)"
				continue
			fi
		fi
		vanished=$((vanished + 1))
	done
	unset in_json seen
	[ "$checked" -gt 0 ] || bad "no thread of the target found after the flip"

	printf '%d\t%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%d\n' "$i" "$expected" "${engine:-default}" \
		"$status" "$ndone" "$failed" "$exited" "$checked" "$new" "$vanished" "$wall_ms" "$held" "$sig" "$ptr" \
		"$notes" >>"$out/flips.tsv"
	flips=$((flips + 1)) bad_flips=$((bad_flips + flip_bad))
	checked_all=$((checked_all + checked)) new_all=$((new_all + new)) vanished_all=$((vanished_all + vanished))
	i=$((i + 1))
	[ "$pause" = 0 ] || sleep "$pause"
done

read -r _ _ wall_p50 _ wall_max < <(printf '%s\n' "${walls[@]}" | sort -g | awk '
	{ v[NR] = $1 } END { print NR, 0, v[int(NR * 0.5 + 0.999999)], 0, v[NR] }')
cat >"$out/flips.summary" <<EOF
flips=$flips
bad_flips=$bad_flips
checked=$checked_all
new=$new_all
vanished=$vanished_all
by_signal=$signal_all
by_ptrace=$ptrace_all
notes=$notes_all
wall_ms_p50=$wall_p50
wall_ms_max=$wall_max
held_us_max=$held_max
engines=default${ENGINES[1]:+,${ENGINES[1]}}
EOF
[ "$bad_flips" -eq 0 ]
