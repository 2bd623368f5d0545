#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mkinitramfs.sh - build the gzip'd cpio initramfs for the pidmempolicy
# QEMU test rig.
#
# Usage: mkinitramfs.sh --out=FILE [--arch=x86_64|arm64] [--binary=PATH]
#                       [--helpers-dir=DIR] [--extra-bin=PATH]...
#                       [--script=FILE] [--tests=FILE...] [FILE.bats...]
#
# The image holds:
#   /bin/busybox + applet symlinks   (busybox-static; for arm64 the links are
#                                     made by /init, as the build host cannot
#                                     run that busybox)
#   /bin/bash                        (bash-static)
#   /usr/bin/bats, /usr/lib/bats-core, /usr/libexec/bats-core  (Debian bats)
#   /opt/pmp/bin/pidmempolicy        (--binary; optional)
#   /opt/pmp/bin/<helpers>           (every executable in --helpers-dir)
#   /opt/pmp/bin/<extra>             (--extra-bin, e.g. numactl or strace)
#   /opt/pmp/tests/*.bats, lib.bash  (the test files, beside tests/guest/lib.bash)
#   /opt/pmp/lib/common.bash         (tests/lib/common.bash, which lib.bash and
#                                     tests/host/helpers.bash load as ../lib/common)
#   /opt/pmp/run.sh                  (--script: run instead of bats)
#   shared libraries of all dynamic binaries, at their host paths (via ldd)
#   /init                            (tests/guest/init)
#   /etc/pmp.conf                    (mode and test list for /init)
#
# --arch=arm64 (default x86_64, the host's own programs) takes busybox and
# bash from Debian's arm64 packages and the libraries from the arm64 sysroot
# (both from tests/guest/arm64.sh, cached), found by the ELF interpreter and
# NEEDED entries (aarch64-linux-gnu-readelf) and put at their sysroot paths;
# every binary given must then be an aarch64 one, and --extra-bin a path.
# bats is architecture independent: the host's is used for both.
#
# Without --script, /init runs `bats --tap` on the test files in the order
# given. Environment equivalents: PMP_BINARY, PMP_HELPERS_DIR.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }
usage() {
	cat <<EOF
Usage: $prog --out=FILE [--arch=A] [--binary=PATH] [--helpers-dir=DIR]
       [--extra-bin=PATH]... [--script=FILE] [--tests=FILE...] [FILE.bats...]

Build a gzip'd cpio initramfs that boots into the pidmempolicy guest tests.

  --out=FILE         where to write the image (required)
  --arch=A           x86_64 (default: the host's programs) or arm64 (Debian's
                     arm64 packages, via arm64.sh; the binaries are aarch64)
  --binary=PATH      the pidmempolicy binary under test (optional)
  --helpers-dir=DIR  directory with built helper programs (a build tree's
                     tests/helpers, made by \`make check TESTS=')
  --extra-bin=PATH   another host program to include, with its libraries
  --script=FILE      run this script (with bash) instead of bats
  --tests=FILE...    bats files to run; every following argument up to the
                     next option is a test file as well
EOF
}

out=
arch=x86_64
binary=${PMP_BINARY:-}
helpers=${PMP_HELPERS_DIR:-}
script=
tests=()
extras=()
while [ $# -gt 0 ]; do
	case $1 in
	--out=*) out=${1#*=} ;;
	--arch=*) arch=${1#*=} ;;
	--binary=*) binary=${1#*=} ;;
	--helpers-dir=*) helpers=${1#*=} ;;
	--extra-bin=*) extras+=("${1#*=}") ;;
	--script=*) script=${1#*=} ;;
	--tests=*) tests+=("${1#*=}") ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; die "unknown option: $1" ;;
	*) tests+=("$1") ;;
	esac
	shift
done
[ -n "$out" ] || { usage >&2; die "--out=FILE is required"; }
[ -n "$script" ] || [ "${#tests[@]}" -gt 0 ] || die "no test files given (and no --script)"

case $arch in
x86_64)
	lib_tool=ldd
	busybox=/bin/busybox
	bash_static=/bin/bash-static
	[ -x "$busybox" ] || die "$busybox not found (apt-get install busybox-static)"
	[ -x "$bash_static" ] || die "$bash_static not found (apt-get install bash-static)"
	;;
arm64)
	readelf=aarch64-linux-gnu-readelf
	lib_tool=$readelf
	userland=$("$here/arm64.sh" userland | tail -n1) || die "getting arm64 busybox and bash failed"
	sysroot=$("$here/arm64.sh" sysroot | tail -n1) || die "getting the arm64 sysroot failed"
	busybox=$userland/bin/busybox
	bash_static=$userland/bin/bash-static
	;;
*) usage >&2; die "--arch must be x86_64 or arm64" ;;
esac
for tool in cpio gzip find "$lib_tool"; do
	command -v "$tool" >/dev/null 2>&1 || die "required tool '$tool' not found"
done
[ -x /usr/bin/bats ] && [ -d /usr/lib/bats-core ] && [ -d /usr/libexec/bats-core ] ||
	die "bats not found (apt-get install bats)"
if [ -n "$binary" ]; then
	[ -f "$binary" ] && [ -x "$binary" ] || die "--binary $binary is not an executable file"
fi
if [ -n "$helpers" ]; then
	[ -d "$helpers" ] || die "--helpers-dir $helpers is not a directory"
fi
if [ -n "$script" ]; then
	[ -r "$script" ] || die "--script $script not readable"
fi
for t in "${tests[@]}"; do
	[ -r "$t" ] || die "test file $t not readable"
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/pmp-initramfs.XXXXXX")
tmp_out=
cleanup() {
	rm -rf -- "$stage"
	[ -z "$tmp_out" ] || rm -f -- "$tmp_out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,usr/lib,usr/libexec,dev,proc,sys,tmp,run,root,etc,opt/pmp/bin,opt/pmp/tests}
chmod 1777 "$stage/tmp"

# --- busybox and its applets ---
cp "$busybox" "$stage/bin/busybox"
if [ "$arch" = x86_64 ]; then
	while IFS= read -r applet; do
		applet=${applet#/}
		case $applet in
		'' | bin/busybox | bin/bash | bin/sh) continue ;;
		esac
		mkdir -p "$stage/$(dirname "$applet")"
		[ -e "$stage/$applet" ] || ln -s /bin/busybox "$stage/$applet"
	done < <("$busybox" --list-full)
fi
ln -s busybox "$stage/bin/sh"
cp "$bash_static" "$stage/bin/bash"

# --- bats ---
cp /usr/bin/bats "$stage/usr/bin/bats"
cp -a /usr/lib/bats-core "$stage/usr/lib/"
cp -a /usr/libexec/bats-core "$stage/usr/libexec/"

# --- dynamic binaries with their libraries ---
copy_libs_ldd() {
	local bin=$1 line lib
	local ldd_out
	if ! ldd_out=$(ldd "$bin" 2>&1); then
		case $ldd_out in
		*"not a dynamic executable"* | *"statically linked"*) return 0 ;;
		*) die "ldd $bin failed: $ldd_out" ;;
		esac
	fi
	while IFS= read -r line; do
		case $line in
		*"not found"*) die "$bin needs a library that is not installed: $line" ;;
		*"=> /"*) lib=${line#*=> }; lib=${lib%% (*} ;;
		*/*) lib=${line#"${line%%/*}"}; lib=${lib%% (*} ;;
		*) continue ;;
		esac
		[ -e "$stage$lib" ] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done <<<"$ldd_out"
}
# copy_sysroot_file PATH: copy $sysroot/PATH (symlinks followed) to the image.
copy_sysroot_file() {
	[ -e "$stage$1" ] && return 0
	mkdir -p "$stage$(dirname "$1")"
	cp -L "$sysroot$1" "$stage$1"
}
# The ELF's interpreter and its NEEDED libraries, recursively, from the
# sysroot: the host's ldd cannot run a foreign binary.
copy_libs_sysroot() {
	local bin=$1 hdr interp lib d found
	hdr=$("$readelf" -h "$bin" 2>/dev/null) || die "$bin is not an ELF file"
	if [[ $hdr == *"Machine:"*"ARM"* && $hdr == *"Class:"*"ELF32"* ]] &&
		! "$readelf" -l "$bin" | grep -q 'program interpreter'; then
		return 0	# a static 32-bit Arm program (the compat test target)
	fi
	[[ $hdr == *"Machine:"*"AArch64"* ]] || die "$bin is not an aarch64 binary"
	interp=$("$readelf" -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
	if [ -n "$interp" ]; then
		[ -e "$sysroot$interp" ] || die "$bin wants interpreter $interp, not in the sysroot $sysroot"
		copy_sysroot_file "$interp"
	fi
	while IFS= read -r lib; do
		found=
		for d in /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /lib /usr/lib; do
			if [ -e "$sysroot$d/$lib" ]; then
				found=$d/$lib
				break
			fi
		done
		[ -n "$found" ] || die "$bin needs $lib, which is not in the sysroot $sysroot"
		[ -e "$stage$found" ] && continue
		copy_sysroot_file "$found"
		copy_libs_sysroot "$sysroot$found"
	done < <("$readelf" -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
}
add_bin() {
	local src=$1 name=${2:-$(basename "$1")}
	[ -e "$stage/opt/pmp/bin/$name" ] && die "two binaries named $name"
	cp -L "$src" "$stage/opt/pmp/bin/$name"
	chmod 755 "$stage/opt/pmp/bin/$name"
	if [ "$arch" = x86_64 ]; then copy_libs_ldd "$src"; else copy_libs_sysroot "$src"; fi
}

[ -z "$binary" ] || add_bin "$binary" pidmempolicy
if [ -n "$helpers" ]; then
	found=0
	for h in "$helpers"/*; do
		[ -f "$h" ] && [ -x "$h" ] || continue
		case $h in *.tmp | *.o) continue ;; esac
		add_bin "$h"
		found=1
	done
	[ "$found" = 1 ] || die "no executables in --helpers-dir $helpers"
fi
for x in "${extras[@]}"; do
	if [ "$arch" = x86_64 ]; then
		p=$(command -v "$x" || true)
	else
		p=$x && [ -f "$p" ] || p=
	fi
	[ -n "$p" ] || die "--extra-bin $x not found"
	add_bin "$p"
done

# --- tests, script, init ---
cp "$here/lib.bash" "$stage/opt/pmp/tests/lib.bash"
mkdir -p "$stage/opt/pmp/lib"
cp "$here/../lib/common.bash" "$stage/opt/pmp/lib/common.bash"
names=()
for t in "${tests[@]}"; do
	n=$(basename "$t")
	[ -e "$stage/opt/pmp/tests/$n" ] && die "two test files named $n"
	cp "$t" "$stage/opt/pmp/tests/$n"
	names+=("/opt/pmp/tests/$n")
	# what it loads: the .bash files beside it (tests/host/helpers.bash)
	for lib in "$(dirname "$t")"/*.bash; do
		if [ -f "$lib" ] && [ ! -e "$stage/opt/pmp/tests/${lib##*/}" ]; then
			cp "$lib" "$stage/opt/pmp/tests/"
		fi
	done
done
mode=bats
if [ -n "$script" ]; then
	cp "$script" "$stage/opt/pmp/run.sh"
	chmod 755 "$stage/opt/pmp/run.sh"
	mode=script
fi
{
	echo "# generated by mkinitramfs.sh"
	echo "PMP_MODE=$mode"
	printf 'PMP_TESTS="%s"\n' "${names[*]}"
} >"$stage/etc/pmp.conf"
cp "$here/init" "$stage/init"
chmod 755 "$stage/init"
echo "root:x:0:0:root:/root:/bin/bash" >"$stage/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/false" >>"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"

# The kernel opens /dev/console before running /init; devtmpfs is mounted
# later by /init, so provide the node in the image (needs root; /init
# re-opens the console anyway if this is missing).
mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true

mkdir -p "$(dirname "$out")"
tmp_out=$(mktemp "$(dirname "$out")/.initramfs.XXXXXX")
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$tmp_out"
mv -f "$tmp_out" "$out"
tmp_out=
printf '%s: wrote %s (%s bytes)\n' "$prog" "$out" "$(stat -c %s "$out")" >&2
