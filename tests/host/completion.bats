#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Bash completion of pidmempolicy: drives _pidmempolicy_module through
# COMP_WORDS/COMP_CWORD/COMP_LINE/COMP_POINT in a fresh bash and checks
# COMPREPLY.  Words are given as bash splits them with the default
# COMP_WORDBREAKS: "--interleave=0" arrives as "--interleave" "=" "0".

load ../lib/common

setup() {
	SRC=${PMP_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
	COMPLETION=$SRC/completions/pidmempolicy
	BASH_COMPLETION=/usr/share/bash-completion/bash_completion
	WITH_BASH_COMPLETION=1
}

teardown() {
	if [ -n "${SLEEPER:-}" ]; then
		kill "$SLEEPER" 2>/dev/null || true
		wait "$SLEEPER" 2>/dev/null || true
	fi
}

# comp WORD...: complete the last WORD of "pidmempolicy WORD...";
# $lines holds COMPREPLY, one entry per line.
comp() {
	run bash -c '
		if [ "$1" = 1 ] && [ -r "$2" ]; then
			. "$2" >/dev/null 2>&1
		fi
		. "$3" || exit 99
		shift 3
		COMP_WORDS=("$@")
		COMP_CWORD=$(( $# - 1 ))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD-1]}
		_pidmempolicy_module pidmempolicy "$cur" "$prev" || exit 98
		for c in "${COMPREPLY[@]}"; do printf "%s\n" "$c"; done
	' _ "$WITH_BASH_COMPLETION" "$BASH_COMPLETION" "$COMPLETION" pidmempolicy "$@"
}

# has WORD: WORD is one of $lines.
has() {
	local l
	for l in "${lines[@]}"; do
		[ "$l" = "$1" ] && return 0
	done
	return 1
}

# hasnt WORD: WORD is not one of $lines (a plain "! has" would not fail
# a test: errexit ignores negated commands).
hasnt() {
	! has "$1"
}

# The node numbers of this system, as the completion should offer them.
system_nodes() {
	local n
	for n in /sys/devices/system/node/node[0-9]*; do
		[ -d "$n" ] && echo "${n##*/node}"
	done
}

need_nodes() {
	NODES=$(system_nodes)
	require_fact "host kernel shows no NUMA nodes in /sys/devices/system/node" test -n "$NODES"
	FIRST_NODE=$(echo "$NODES" | head -n1)
}

LONG_OPTIONS='--pid --all-threads --all-tasks --all --cgroup --unit --interleave --weighted-interleave
	--membind --preferred --preferred-many --localalloc --default --static
	--relative --balancing --migrate --migrate-only --rate --migrate-shared --backend --no-signal --allow-seccomp --show --json
	--output --noheadings --raw
	--dry-run --verbose --help --usage --version'

@test "the completion script is valid bash" {
	run bash -n "$COMPLETION"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "sourcing registers _pidmempolicy_module for pidmempolicy" {
	run bash -c '. "$1" && complete -p pidmempolicy' _ "$COMPLETION"
	[ "$status" -eq 0 ]
	[[ $output == *"-F _pidmempolicy_module"*" pidmempolicy" ]]
}

@test "--in completes to --interleave only" {
	comp --in
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "${lines[0]}" = "--interleave" ]
}

@test "-- offers every long option and nothing else" {
	comp --
	[ "$status" -eq 0 ]
	for o in $LONG_OPTIONS; do
		has "$o" || { echo "missing $o"; false; }
	done
	[ "${#lines[@]}" -eq "$(echo $LONG_OPTIONS | wc -w)" ]
}

@test "- offers the short options too" {
	comp -
	[ "$status" -eq 0 ]
	for o in -p -a -i -w -m -P -l -b -n -v -h -V '-?'; do
		has "$o" || { echo "missing $o"; false; }
	done
}

@test "-- offers every long option that --help lists" {
	bin=${PIDMEMPOLICY:-${PMP_BUILDDIR:-$SRC}/src/pidmempolicy}
	[ -x "$bin" ] || { echo "no pidmempolicy binary at $bin" >&2; false; }
	comp --
	[ "$status" -eq 0 ]
	help_opts=$("$bin" --help | grep -E '^ +-' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
	[ -n "$help_opts" ]
	for o in $help_opts; do
		has "$o" || { echo "completion lacks $o"; false; }
	done
}

@test "option names in a file in the current directory do not glob into the list" {
	cd "$BATS_TEST_TMPDIR"
	touch -- -x
	comp -
	[ "$status" -eq 0 ]
	has '-?'
	hasnt -x
}

@test "-p offers PIDs, including a known process" {
	sleep 1000 &
	SLEEPER=$!
	comp -p ''
	[ "$status" -eq 0 ]
	has "$SLEEPER"
	has "$$"
	for l in "${lines[@]}"; do
		[[ $l =~ ^[0-9]+$ ]] || { echo "not a PID: $l"; false; }
	done
}

@test "--pid PREFIX offers only matching PIDs" {
	sleep 1000 &
	SLEEPER=$!
	prefix=${SLEEPER:0:${#SLEEPER}-1}
	comp --pid "$prefix"
	[ "$status" -eq 0 ]
	has "$SLEEPER"
	for l in "${lines[@]}"; do
		[[ $l == "$prefix"* ]] || { echo "does not match: $l"; false; }
	done
}

@test "--pid=: PIDs after the '='" {
	sleep 1000 &
	SLEEPER=$!
	comp --pid = ''
	[ "$status" -eq 0 ]
	has "$SLEEPER"
	hasnt "=$SLEEPER"
}

@test "a comma in a PID list: the next PID, keeping the list" {
	sleep 1000 &
	SLEEPER=$!
	comp -p "1,$$,"
	[ "$status" -eq 0 ]
	has "1,$$,$SLEEPER"
	for l in "${lines[@]}"; do
		[[ $l == "1,$$,"[0-9]* ]] || { echo "bad entry: $l"; false; }
	done
}

@test "a comma after PID:INODE (split at ':') completes the next PID" {
	sleep 1000 &
	SLEEPER=$!
	comp -p 1200 : '42,'
	[ "$status" -eq 0 ]
	has "42,$SLEEPER"
}

@test "an inode is not guessed" {
	comp -p 1200 : ''
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 0 ]
	comp -p 1200 : 4
	[ "${#lines[@]}" -eq 0 ]
}

@test "--membind NODES offers the system's nodes and 'all'" {
	need_nodes
	comp --membind ''
	[ "$status" -eq 0 ]
	for n in $NODES; do
		has "$n" || { echo "missing node $n"; false; }
	done
	has all
	[ "${#lines[@]}" -eq "$(( $(echo $NODES | wc -w) + 1 ))" ]
}

@test "--interleave=: node numbers after the '='" {
	need_nodes
	comp --interleave = ''
	[ "$status" -eq 0 ]
	has "$FIRST_NODE"
	has all
	hasnt "=$FIRST_NODE"
}

@test "--interleave=NODE, with '=' not a word break: the whole word" {
	need_nodes
	comp "--interleave=$FIRST_NODE,"
	[ "$status" -eq 0 ]
	has "--interleave=$FIRST_NODE,$FIRST_NODE"
}

@test "a node list: the next node after ',' and after '-'" {
	need_nodes
	comp -i "$FIRST_NODE,"
	[ "$status" -eq 0 ]
	has "$FIRST_NODE,$FIRST_NODE"
	hasnt "$FIRST_NODE,all"
	comp --weighted-interleave = "$FIRST_NODE-"
	has "$FIRST_NODE-$FIRST_NODE"
	comp -P '!'
	has "!$FIRST_NODE"
}

@test "--preferred NODE offers single nodes, not 'all'" {
	need_nodes
	comp --preferred ''
	[ "$status" -eq 0 ]
	has "$FIRST_NODE"
	hasnt all
}

@test "nothing is offered after flags that take no argument" {
	for flag in --localalloc -l --default -a --all-threads --static -n --verbose; do
		comp "$flag" ''
		[ "$status" -eq 0 ]
		[ "${#lines[@]}" -eq 0 ] || { echo "after $flag: ${lines[*]}"; false; }
	done
}

@test "after a policy, '-' offers no second policy" {
	comp --localalloc -p 1 --
	[ "$status" -eq 0 ]
	has --pid
	has --dry-run
	hasnt --interleave
	hasnt --default
	hasnt --localalloc
}

@test "works without bash-completion loaded" {
	WITH_BASH_COMPLETION=0
	comp --in
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "--interleave" ]
	comp -p "$$"
	has "$$"
}

@test "works with bash-completion loaded" {
	[ -r "$BASH_COMPLETION" ] || { echo "bash-completion is not installed" >&2; false; }
	run bash -c '. "$1" >/dev/null 2>&1; declare -F _init_completion' _ "$BASH_COMPLETION"
	[ "$status" -eq 0 ]
	comp --mem
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "--membind" ]
}

@test "--cgroup completes directories, starting at /sys/fs/cgroup" {
	require_fact "no /sys/fs/cgroup on this host" test -d /sys/fs/cgroup
	comp --cgroup ''
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = /sys/fs/cgroup/ ]
	mkdir -p "$BATS_TEST_TMPDIR/cg/child"
	comp --cgroup "$BATS_TEST_TMPDIR/cg/ch"
	[ "${lines[0]}" = "$BATS_TEST_TMPDIR/cg/child/" ]
}

@test "--show excludes the policy options, as a policy does" {
	comp --show -p 1 --
	[ "$status" -eq 0 ]
	has --json
	hasnt --membind
	hasnt --show
}

@test "--backend offers its three values" {
	comp --backend ''
	[ "$status" -eq 0 ]
	[ "$(printf '%s ' "${lines[@]}")" = "syscall ptrace auto " ]
	comp --backend = p
	[ "${lines[0]}" = ptrace ]
	[ "${#lines[@]}" -eq 1 ]
}

@test "-o completes --show's columns, after a comma too; --show= its views" {
	comp --show -o P
	[ "$status" -eq 0 ]
	has PID && has POLICY
	comp --show -o PID,TH
	[ "${lines[*]}" = "PID,THREADS" ]
	comp --show -o PID,PA
	[ "${lines[*]}" = "PID,PATH" ]
	comp --show = p
	[ "${lines[*]}" = "processes" ]
}
