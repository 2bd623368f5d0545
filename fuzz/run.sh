#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz/run.sh - build and run pidmempolicy's libFuzzer targets.
#
#   fuzz/run.sh [--builddir=DIR] [--seconds=N | --runs=N] [options]
#
#   --builddir=DIR   where binaries, the working corpora, artifacts and logs
#                    go (default /tmp/pmp-fuzz); the source tree is only read
#   --seconds=N      fuzz each target for N seconds (default 60)
#   --runs=N         or: fuzz each target for N executions
#   --config-h=FILE  config.h of a configured build (default: configure the
#                    project out of tree into DIR/config with CC)
#   --srcdir=DIR     the project's source tree (default: this script's ..)
#   --targets=LIST   comma list out of procfs,nodes,pids (default: all)
#   --parallel       run the targets at the same time (one core each)
#   --regressions-only  build, then run only fuzz/regressions/
#   CC (environment) the compiler, default clang; it needs libFuzzer
#                    (Debian: clang + libclang-rt-dev / libclang-rt-14-dev)
#
# Each target's seed corpus fuzz/corpus/T/ is COPIED to DIR/corpus/T/, which
# libFuzzer grows; crash, leak and timeout inputs go to DIR/artifacts/T/.
# Before fuzzing, every file of fuzz/regressions/T/ is run once through the
# strict build of T (-DPMP_FUZZ_STRICT); a failing one counts as a crash.
# Prints per target the executions (libFuzzer's stat::number_of_executed_units)
# and at the end "fuzz: N executions in total, M crashes".  Exit status 0 when
# nothing crashed, 1 when something did, 2 on a usage or build error.

set -u

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=/tmp/pmp-fuzz
seconds=60
runs=
config_h=
targets=procfs,nodes,pids
parallel=no
regressions_only=no
CC=${CC:-clang}

for arg in "$@"; do
	case $arg in
	--builddir=*) builddir=${arg#*=} ;;
	--seconds=*) seconds=${arg#*=}; runs= ;;
	--runs=*) runs=${arg#*=} ;;
	--config-h=*) config_h=${arg#*=} ;;
	--srcdir=*) srcdir=${arg#*=} ;;
	--targets=*) targets=${arg#*=} ;;
	--parallel) parallel=yes ;;
	--regressions-only) regressions_only=yes ;;
	-h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
	esac
done
case ${runs:-0}${seconds} in
*[!0-9]*) echo "run.sh: --seconds and --runs take a number" >&2; exit 2 ;;
esac
targets=$(echo "$targets" | tr ',' ' ')
for t in $targets; do
	case $t in procfs|nodes|pids) ;; *) echo "run.sh: unknown target '$t'" >&2; exit 2 ;; esac
done

case $builddir in /*) ;; *) builddir=$(pwd)/$builddir ;; esac
case $builddir/ in
"$srcdir"/|"$srcdir"/fuzz/*|"$srcdir"/src/*)
	echo "run.sh: the build directory must not be the source tree or lie in fuzz/ or src/" >&2; exit 2 ;;
esac
mkdir -p "$builddir" || exit 2
builddir=$(cd "$builddir" && pwd)

# ---- config.h -------------------------------------------------------------
if [ -z "$config_h" ]; then
	config_h=$builddir/config/config.h
	if [ ! -f "$config_h" ]; then
		if [ ! -x "$srcdir/configure" ]; then
			echo "run.sh: no $srcdir/configure (run autoreconf -fi) and no --config-h" >&2
			exit 2
		fi
		mkdir -p "$builddir/config"
		echo "fuzz: configuring into $builddir/config"
		(cd "$builddir/config" && CC=$CC "$srcdir/configure" \
			--with-pidfd-set-mempolicy-nr=451 >configure.log 2>&1) || {
			echo "run.sh: configure failed, see $builddir/config/configure.log" >&2; exit 2; }
	fi
fi
[ -f "$config_h" ] || { echo "run.sh: no such config.h: $config_h" >&2; exit 2; }
config_h=$(cd "$(dirname "$config_h")" && pwd)/$(basename "$config_h")

# ---- build -----------------------------------------------------------------
CFLAGS_FUZZ="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
-fno-sanitize-recover=all -Wall -Wextra -include $config_h -I$(dirname "$config_h") \
-I$srcdir/src -I$srcdir/fuzz"
S=$srcdir/src

build() { # target, suffix, extra flags
	t=$1 out=$builddir/bin/fuzz-$1$2
	shift 2
	case $t in
	procfs) set -- "$@" "$srcdir/fuzz/fuzz-procfs.c" "$S/procfs.c" -Wl,--wrap=read ;;
	nodes) set -- "$@" "$srcdir/fuzz/fuzz-nodes.c" "$S/nodes.c" "$S/policy.c" "$S/text.c" -lnuma -ldl ;;
	pids) set -- "$@" "$srcdir/fuzz/fuzz-pids.c" "$S/options.c" "$S/text.c" ;;
	esac
	# shellcheck disable=SC2086
	$CC $CFLAGS_FUZZ "$@" -o "$out" 2>"$builddir/logs/build-$t.log" || {
		cat "$builddir/logs/build-$t.log" >&2
		echo "run.sh: building $out failed" >&2
		exit 2
	}
}

mkdir -p "$builddir/bin" "$builddir/logs"
for t in $targets; do
	echo "fuzz: building fuzz-$t and fuzz-$t-strict in $builddir/bin"
	build "$t" "" || exit 2
	build "$t" -strict -DPMP_FUZZ_STRICT || exit 2
done

total=0
crashes=0

# ---- regressions -------------------------------------------------------------
for t in $targets; do
	dir=$srcdir/fuzz/regressions/$t
	[ -d "$dir" ] || continue
	n=0 bad=0
	mkdir -p "$builddir/artifacts/$t-regressions"
	for f in "$dir"/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		log=$builddir/logs/regression-$t-$(basename "$f").log
		if ! "$builddir/bin/fuzz-$t-strict" -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix="$builddir/artifacts/$t-regressions/" "$f" >"$log" 2>&1; then
			bad=$((bad + 1))
			why=$(grep -m1 -E 'ERROR: |SUMMARY: |timeout after' "$log" | sed 's/^==[0-9]*==//')
			echo "fuzz: $t: regression $(basename "$f") FAILS: $why (log: $log)"
		fi
	done
	echo "fuzz: $t: regressions: $n inputs, $bad failing"
	crashes=$((crashes + bad))
done
if [ "$regressions_only" = yes ]; then
	echo "fuzz: 0 executions in total, $crashes crashes"
	[ "$crashes" -eq 0 ]
	exit $?
fi

# ---- fuzzing ---------------------------------------------------------------------
fuzz_one() { # target
	t=$1
	mkdir -p "$builddir/corpus/$t" "$builddir/artifacts/$t"
	cp -R "$srcdir/fuzz/corpus/$t/." "$builddir/corpus/$t/"
	if [ -n "$runs" ]; then limit=-runs=$runs; else limit=-max_total_time=$seconds; fi
	case $t in procfs) maxlen=8192 ;; *) maxlen=4096 ;; esac
	start=$(date +%s)
	"$builddir/bin/fuzz-$t" "$limit" -print_final_stats=1 -max_len=$maxlen \
		-timeout=10 -rss_limit_mb=2048 -dict="$srcdir/fuzz/$t.dict" \
		-artifact_prefix="$builddir/artifacts/$t/" \
		"$builddir/corpus/$t" >"$builddir/logs/fuzz-$t.log" 2>&1
	echo $? >"$builddir/logs/fuzz-$t.rc"
	echo $(($(date +%s) - start)) >"$builddir/logs/fuzz-$t.time"
}

for t in $targets; do
	if [ -n "$runs" ]; then what="$runs runs"; else what="$seconds s"; fi
	echo "fuzz: $t: fuzzing ($what), log $builddir/logs/fuzz-$t.log"
	if [ "$parallel" = yes ]; then fuzz_one "$t" & else fuzz_one "$t"; fi
done
wait

for t in $targets; do
	log=$builddir/logs/fuzz-$t.log
	rc=$(cat "$builddir/logs/fuzz-$t.rc")
	secs=$(cat "$builddir/logs/fuzz-$t.time")
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	execs=${execs:-0}
	total=$((total + execs))
	if [ "$rc" -ne 0 ]; then
		crashes=$((crashes + 1))
		why=$(grep -m1 -E 'ERROR: |SUMMARY: |timeout after|out-of-memory' "$log" | sed 's/^==[0-9]*==//')
		echo "fuzz: $t: $execs executions in ${secs}s, CRASH (exit $rc): $why"
		ls "$builddir/artifacts/$t/" 2>/dev/null | sed "s|^|fuzz: $t:   artifact $builddir/artifacts/$t/|"
	else
		echo "fuzz: $t: $execs executions in ${secs}s, corpus $(ls "$builddir/corpus/$t" | wc -l) inputs"
	fi
done
echo "fuzz: $total executions in total, $crashes crashes"
[ "$crashes" -eq 0 ]
