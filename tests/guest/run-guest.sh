#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-guest.sh - boot the pidmempolicy test kernel in QEMU and run guest tests.
#
# Usage:
#   run-guest.sh [--arch=x86_64|arm64] [--version=6.1|6.12]
#                [--variant=patched|stock] [--binary=PATH] [--helpers-dir=DIR]
#                [--timeout=SECS] [--keep-log=FILE] [--accel=auto|kvm|tcg]
#                [--patch=PATH] [--extra-bin=PATH]... [--verbose] TEST.bats...
#   run-guest.sh [...] --demo=SCRIPT     run SCRIPT (bash) in the guest instead
#                                        of bats, its output shown live
#   run-guest.sh [...] --shell           interactive bash on the guest console
#
# The kernel comes from tests/kernel/build-kernel.sh (cached), the initramfs
# from tests/guest/mkinitramfs.sh. The helpers are those of a build tree
# (`make check TESTS=` builds them): --helpers-dir, by default
# $PMP_BUILDDIR/tests/helpers, else _build/tests/helpers in the source tree
# (tests/bootstrap.sh's build).
#
# The guest is `qemu-system-x86_64 -m 2G -smp 4,sockets=4,cores=1,threads=1`
# with 4 NUMA nodes (-numa node,nodeid=N,cpus=N,memdev=memN, ACPI SRAT):
# 512 MiB and exactly one CPU per node.
# KVM is used only when a quick probe boot works (result cached per host
# boot in ${XDG_CACHE_HOME:-~/.cache}/pidmempolicy/accel-probe), else TCG;
# --accel or PMP_QEMU_ACCEL forces one.
#
# --arch=arm64 boots Debian's STOCK arm64 kernel instead (linux-image-arm64's
# 6.1 image, downloaded and cached by tests/guest/arm64.sh; the variant is
# stock, the version 6.1) on `qemu-system-aarch64 -M virt -cpu cortex-a57`
# (no SVE) with the same CPUs, memory and NUMA nodes (device tree), console
# ttyAMA0, always TCG. --binary and --helpers-dir (required) must then be
# aarch64 programs, e.g. a cross build: tests/guest/arm64.sh build DIR.
# Its labels read [arm64-6.1-stock].
#
# Bats mode prints the TAP stream between the PMP-TAP-BEGIN/END console
# markers with every test description prefixed by the kernel, e.g.
#   ok 3 [6.1-patched] interleave ...
# (or [6.12-patched] / [6.12-stock] with --version=6.12: Linux 6.12 with the
# project's forward port tests/kernel/patches/linux-6.12/, or without it).
# followed by "pmp-guest: N passed, N failed, N skipped", and exits non-zero
# on: any "not ok", missing markers or no output, plan count mismatch, a
# non-zero bats status, a kernel panic/Oops/BUG/WARNING in the serial log, or
# the timeout. The full serial log is kept (and its path printed) on failure,
# or always with --keep-log=FILE.
#
# Exit status: 0 success, 1 failure, 2 usage error.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
	cat <<EOF
Usage: $prog [options] TEST.bats...
       $prog [options] --demo=SCRIPT
       $prog [options] --shell

Options:
  --arch=A           x86_64 (default) or arm64 (Debian's stock kernel, TCG)
  --version=V        kernel version: 6.1 (default) or 6.12
  --variant=V        patched (default; arm64: stock only) or stock kernel
  --binary=PATH      pidmempolicy binary to test (optional)
  --helpers-dir=DIR  built helper programs (default: the build tree's,
                     \$PMP_BUILDDIR/tests/helpers or _build/tests/helpers)
  --timeout=SECS     bound for the whole QEMU run (default 900)
  --keep-log=FILE    keep the serial console log in FILE
  --accel=A          auto (default), kvm or tcg  (env PMP_QEMU_ACCEL)
  --patch=PATH       kernel patch for build-kernel.sh
  --config-extra=F   extra kernel config fragment for build-kernel.sh (e.g.
                     KASAN + lockdep)
  --extra-bin=PATH   extra host program to put in the guest (repeatable)
  --demo=SCRIPT      run SCRIPT in the guest (bash), output live on stdout
  --shell            interactive shell in the guest (Ctrl-A x quits QEMU)
  --verbose          copy the whole serial console to stderr while running
  -h, --help         this help
EOF
}
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }
msg() { printf '%s: %s\n' "$prog" "$*" >&2; }
usage_err() { usage >&2; printf '%s: error: %s\n' "$prog" "$*" >&2; exit 2; }

arch=x86_64
variant=
version=6.1
config_extra=
binary=
helpers=
timeout_s=900
keep_log=
accel=${PMP_QEMU_ACCEL:-auto}
patch=
demo=
shell=0
verbose=0
extras=()
tests=()
while [ $# -gt 0 ]; do
	case $1 in
	--arch=*) arch=${1#*=} ;;
	--variant=*) variant=${1#*=} ;;
	--version=*) version=${1#*=} ;;
	--config-extra=*) config_extra=${1#*=} ;;
	--binary=*) binary=${1#*=} ;;
	--helpers-dir=*) helpers=${1#*=} ;;
	--timeout=*) timeout_s=${1#*=} ;;
	--keep-log=*) keep_log=${1#*=} ;;
	--accel=*) accel=${1#*=} ;;
	--patch=*) patch=${1#*=} ;;
	--extra-bin=*) extras+=("--extra-bin=${1#*=}") ;;
	--demo=*) demo=${1#*=} ;;
	--shell) shell=1 ;;
	--verbose) verbose=1 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; tests+=("$@"); break ;;
	-*) usage_err "unknown option: $1" ;;
	*) tests+=("$1") ;;
	esac
	shift
done

case $variant in '' | patched | stock) ;; *) usage_err "--variant must be patched or stock" ;; esac
case $version in 6.1 | 6.12) ;; *) usage_err "--version must be 6.1 or 6.12" ;; esac
case $accel in auto | kvm | tcg) ;; *) usage_err "--accel must be auto, kvm or tcg" ;; esac
case $arch in
x86_64)
	variant=${variant:-patched}
	log_tag=$variant
	qemu_bin=qemu-system-x86_64 qemu_pkg=qemu-system-x86
	;;
arm64)
	variant=${variant:-stock}
	[ "$variant" = stock ] || usage_err "--arch=arm64 boots Debian's stock kernel: no --variant=patched"
	[ "$version" = 6.1 ] || usage_err "--arch=arm64 boots Debian 12's kernel: --version=6.1 only"
	[ -z "$patch$config_extra" ] || usage_err "--arch=arm64 builds no kernel: no --patch or --config-extra"
	[ "$accel" != kvm ] || usage_err "--arch=arm64 runs under TCG only"
	[ -n "$helpers" ] || usage_err "--arch=arm64 needs --helpers-dir with aarch64 helpers (tests/guest/arm64.sh build DIR)"
	accel=tcg
	log_tag=arm64-$variant
	qemu_bin=qemu-system-aarch64 qemu_pkg=qemu-system-arm
	;;
*) usage_err "--arch must be x86_64 or arm64" ;;
esac
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || usage_err "--timeout must be a positive number of seconds"
modes=$((shell + (${#demo} > 0 ? 1 : 0) + (${#tests[@]} > 0 ? 1 : 0)))
[ "$modes" -eq 1 ] || usage_err "give test files, or --demo=SCRIPT, or --shell (exactly one)"
[ -z "$demo" ] || [ -r "$demo" ] || die "demo script $demo not readable"
for t in "${tests[@]}"; do [ -r "$t" ] || die "test file $t not readable"; done
if [ -n "$binary" ]; then
	[ -x "$binary" ] || die "--binary $binary is not executable"
fi
if ! command -v "$qemu_bin" >/dev/null 2>&1; then
	# a suite that cannot boot is skipped with its reason, as TAP says it
	[ ${#tests[@]} -eq 0 ] || { echo "1..0 # SKIP $qemu_bin not installed (apt-get install $qemu_pkg)"; exit 0; }
	die "$qemu_bin not found (apt-get install $qemu_pkg)"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pmp-guest.XXXXXX")
log=
cleanup() {
	local rc=$?
	if [ -n "$log" ] && [ -z "$keep_log" ]; then
		if [ "$rc" -ne 0 ]; then
			local saved
			saved=${TMPDIR:-/tmp}/pmp-guest-$log_tag-$(date +%Y%m%d-%H%M%S)-$$.log
			cp -f "$log" "$saved" 2>/dev/null && msg "serial log kept: $saved"
		fi
	fi
	rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- kernel ---
if [ "$arch" = arm64 ]; then
	kernel=$("$here/arm64.sh" kernel | tail -n1) || die "getting Debian's arm64 kernel failed"
	[ -s "$kernel" ] || die "arm64.sh gave no kernel Image ('$kernel')"
	release=${kernel##*/vmlinuz-}
	release=${release%.Image}
else
	kargs=(--variant="$variant")
	# Only when not the default, so that 6.1 runs call build-kernel.sh as before.
	[ "$version" = 6.1 ] || kargs+=(--version="$version")
	[ -z "$patch" ] || kargs+=(--patch="$patch")
	[ -z "$config_extra" ] || kargs+=(--config-extra="$config_extra")
	kernel=$("$repo/tests/kernel/build-kernel.sh" "${kargs[@]}" | tail -n1) || die "kernel build failed"
	[ -s "$kernel" ] || die "build-kernel.sh gave no bzImage ('$kernel')"
	release=$(sed -n 's/^release=//p' "$(dirname "$kernel")/info.txt" 2>/dev/null || true)
fi
short=$(echo "${release:-$version}" | cut -d. -f1-2)
label="$short-$variant"
[ "$arch" = x86_64 ] || label="$arch-$label"

# --- helpers ---
if [ -z "$helpers" ]; then
	helpers=${PMP_BUILDDIR:-$repo/_build}/tests/helpers
	[ -x "$helpers/pmp-target" ] ||
		die "no helpers in $helpers: build them with \`make check TESTS=' in a build tree, or give --helpers-dir"
fi

# --- initramfs ---
initrd=$work/initramfs.gz
iargs=(--out="$initrd" --helpers-dir="$helpers" "${extras[@]}")
[ "$arch" = x86_64 ] || iargs+=(--arch="$arch")
[ -z "$binary" ] || iargs+=(--binary="$binary")
if [ -n "$demo" ]; then
	iargs+=(--script="$demo")
elif [ "$shell" = 1 ]; then
	printf '#!/bin/bash\necho "pmp guest shell: exit to power off"\ncd /root && exec /bin/bash -i\n' >"$work/shell.sh"
	iargs+=(--script="$work/shell.sh")
else
	iargs+=("${tests[@]}")
fi
"$here/mkinitramfs.sh" "${iargs[@]}" || die "building the initramfs failed"

# --- accelerator ---
probe_kvm() {
	[ -e /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	local cache_dir=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/pidmempolicy
	local boot_id qemu_v key line
	boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	qemu_v=$(qemu-system-x86_64 --version | head -n1)
	key="$boot_id|$(uname -r)|$qemu_v"
	if [ -r "$cache_dir/accel-probe" ]; then
		line=$(grep -F "$key|" "$cache_dir/accel-probe" | tail -n1 || true)
		case $line in
		*"|kvm") msg "KVM probe (cached): works"; return 0 ;;
		*"|tcg") msg "KVM probe (cached): does not work, using TCG"; return 1 ;;
		esac
	fi
	msg "probing KVM (bounded to 15s)"
	local result=tcg prc=0
	timeout -k 5 15 qemu-system-x86_64 -accel kvm -cpu host -nographic -no-reboot -net none \
		-m 256M -smp 1 -kernel "$kernel" -append "console=ttyS0 panic=-1" \
		</dev/null >"$work/kvm-probe.log" 2>&1 || prc=$?
	if [ "$prc" -eq 0 ] && grep -q 'Kernel panic\|VFS: Unable to mount root' "$work/kvm-probe.log"; then
		result=kvm
	else
		msg "KVM probe failed (exit $prc): $(grep -v '^\s*$' "$work/kvm-probe.log" | grep -iv seabios | tail -n1 | tr -d '\r' | cut -c1-160)"
	fi
	mkdir -p "$cache_dir"
	echo "$key|$result" >>"$cache_dir/accel-probe"
	[ "$result" = kvm ]
}
if [ "$accel" = auto ]; then
	if probe_kvm; then accel=kvm; else accel=tcg; fi
fi
msg "booting $label kernel with -accel $accel"

# --- boot ---
log=$work/serial.log
if [ -n "$keep_log" ]; then
	mkdir -p "$(dirname "$keep_log")"
	log=$keep_log
fi
# shellcheck disable=SC2054 # the commas are QEMU's
qemu=("$qemu_bin" -accel "$accel" -nographic -no-reboot -net none
	-m 2G -smp 4,sockets=4,cores=1,threads=1)
for n in 0 1 2 3; do
	qemu+=(-object "memory-backend-ram,id=mem$n,size=512M"
		-numa "node,nodeid=$n,cpus=$n,memdev=mem$n")
done
kcmd="panic=-1 pmp.variant=$variant pmp.version=$version"
if [ "$arch" = arm64 ]; then
	# cortex-a57: ARMv8.0, no SVE or pointer authentication (slow in TCG).
	# Debian's config has THP and NUMA balancing, the rig's x86 configs not:
	# switch them off so that pages stay where the tests put them.
	qemu+=(-M virt -cpu cortex-a57)
	kcmd="console=ttyAMA0 $kcmd transparent_hugepage=never numa_balancing=disable"
else
	kcmd="console=ttyS0 $kcmd"
fi
qemu+=(-kernel "$kernel" -initrd "$initrd" -append "$kcmd")
[ "$accel" = kvm ] && qemu+=(-cpu host)

start=$(date +%s)
qrc=0
if [ "$shell" = 1 ]; then
	timeout --foreground -k 10 "$timeout_s" "${qemu[@]}" || qrc=$?
	exit "$qrc"
elif [ -n "$demo" ]; then
	# Live: show the guest's output between the script markers.
	set +e
	timeout -k 10 "$timeout_s" "${qemu[@]}" </dev/null 2>&1 | tee "$log" |
		awk '/PMP-SCRIPT-END/ { f = 0 } f { sub(/\r$/, ""); print; fflush() } /PMP-SCRIPT-BEGIN/ { f = 1 }'
	qrc=${PIPESTATUS[0]}
	set -e
else
	if [ "$verbose" = 1 ]; then
		set +e
		timeout -k 10 "$timeout_s" "${qemu[@]}" </dev/null 2>&1 | tee "$log" >&2
		qrc=${PIPESTATUS[0]}
		set -e
	else
		timeout -k 10 "$timeout_s" "${qemu[@]}" </dev/null >"$log" 2>&1 || qrc=$?
	fi
fi
elapsed=$(($(date +%s) - start))
msg "guest ran ${elapsed}s (qemu exit $qrc)"

# --- verdict ---
problems=()
[ "$qrc" -ne 124 ] && [ "$qrc" -ne 137 ] || problems+=("timeout after ${timeout_s}s")
[ "$qrc" -eq 0 ] || [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ] || problems+=("qemu exited with status $qrc")
# Kernel messages carry a "[ seconds]" timestamp (CONFIG_PRINTK_TIME).
oops=$(tr -d '\r' <"$log" | grep -E '^\[ *[0-9]+\.[0-9]+\] .*(Kernel panic|Oops|BUG:|general protection fault|WARNING:|Call Trace|hung_task|soft lockup)' | head -n 5 || true)
[ -z "$oops" ] || problems+=("kernel trouble in the serial log: $(echo "$oops" | head -n1)")

if [ -n "$demo" ]; then
	if ! grep -q 'PMP-SCRIPT-BEGIN' "$log"; then
		problems+=("guest never started the script (no PMP-SCRIPT-BEGIN)")
	fi
	src=$(tr -d '\r' <"$log" | sed -n 's/^PMP-SCRIPT-END rc=\([0-9]*\).*/\1/p' | tail -n1)
	if [ -z "$src" ]; then
		problems+=("no PMP-SCRIPT-END marker")
	elif [ "$src" -ne 0 ]; then
		problems+=("demo script exited with status $src")
	fi
	if [ "${#problems[@]}" -gt 0 ]; then
		printf '%s: FAIL [%s]: %s\n' "$prog" "$label" "${problems[@]}" >&2
		exit 1
	fi
	exit 0
fi

tap=$work/tap.txt
tr -d '\r' <"$log" | awk '
	/^PMP-TAP-END rc=/ { f = 0; print "END " $0 }
	f { print }
	/^PMP-TAP-BEGIN$/ { f = 1; print "BEGIN" }
' >"$tap"
if ! grep -q '^BEGIN$' "$tap"; then
	problems+=("no PMP-TAP-BEGIN marker: the guest did not reach the tests")
fi
end_line=$(grep '^END ' "$tap" | tail -n1 || true)
if [ -z "$end_line" ]; then
	problems+=("no PMP-TAP-END marker: the guest did not finish the tests")
	bats_rc=
else
	bats_rc=${end_line##*rc=}
fi

plan=
passed=0 failed=0 skipped=0 count=0
out=()
while IFS= read -r line; do
	case $line in
	BEGIN | "END "*) continue ;;
	esac
	if [[ $line =~ ^1\.\.([0-9]+)$ ]]; then
		plan=${BASH_REMATCH[1]}
		out+=("$line")
	elif [[ $line =~ ^(ok|not\ ok)\ ([0-9]+)(\ -)?\ ?(.*)$ ]]; then
		status=${BASH_REMATCH[1]} num=${BASH_REMATCH[2]} desc=${BASH_REMATCH[4]}
		count=$((count + 1))
		[ "$num" -eq "$count" ] || problems+=("test number $num out of sequence (expected $count)")
		if [ "$status" = ok ]; then
			if [[ $desc == *"# skip"* || $desc == *"# SKIP"* ]]; then
				skipped=$((skipped + 1))
			else
				passed=$((passed + 1))
			fi
		else
			failed=$((failed + 1))
		fi
		out+=("$status $num [$label] $desc")
	elif [[ $line == "#"* ]]; then
		out+=("$line")
	elif [ -n "$line" ]; then
		out+=("# console: $line")
	fi
done <"$tap"

printf '%s\n' "${out[@]}"
if [ -z "$plan" ]; then
	[ "$count" -gt 0 ] || problems+=("no TAP output")
	problems+=("no TAP plan line")
elif [ "$plan" -ne "$count" ]; then
	problems+=("plan says $plan tests, $count reported")
fi
[ "$plan" != 0 ] || problems+=("no tests were run (plan 1..0)")
[ "$failed" -eq 0 ] || problems+=("$failed test(s) failed")
if [ -n "$bats_rc" ] && [ "$bats_rc" != 0 ] && [ "$failed" -eq 0 ]; then
	problems+=("bats exited with status $bats_rc")
fi

echo "pmp-guest: $passed passed, $failed failed, $skipped skipped"
if [ "${#problems[@]}" -gt 0 ]; then
	for p in "${problems[@]}"; do
		printf '%s: FAIL [%s]: %s\n' "$prog" "$label" "$p" >&2
	done
	[ -z "$oops" ] || printf '%s\n' "$oops" >&2
	[ -z "$keep_log" ] || msg "serial log: $keep_log"
	exit 1
fi
msg "PASS [$label]: $passed passed, $skipped skipped in ${elapsed}s"
