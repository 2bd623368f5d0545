#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# arm64.sh - everything the arm64 (aarch64) guest rig downloads, and the
# cross build of the tool against it.
#
# Usage:
#   arm64.sh kernel           print the path of Debian's stock arm64 kernel
#                             Image (the linux-image-6.1.0-*-arm64 package that
#                             linux-image-arm64:arm64 depends on; env
#                             PMP_ARM64_KERNEL_PKG picks another, e.g. the
#                             -unsigned one)
#   arm64.sh userland         print a directory with bin/busybox and
#                             bin/bash-static (busybox-static:arm64,
#                             bash-static:arm64)
#   arm64.sh sysroot          print the sysroot: libc6, libgcc-s1, libnuma1,
#                             libnuma-dev, libcap2, libcap-dev, libsmartcols1,
#                             libsmartcols-dev (all :arm64)
#   arm64.sh fetch            all three of the above
#   arm64.sh configure [ARG]...
#                             run the project's configure in the current
#                             directory for --host=aarch64-linux-gnu against
#                             the sysroot (default ARGs:
#                             --with-pidfd-set-mempolicy-nr=451)
#   arm64.sh build DIR [ARG]...
#                             configure in DIR (once) and make the tool and
#                             the portable helpers; print DIR
#
# Packages come from Debian's archive with `apt-get download` (the arm64
# architecture must be added: tests/bootstrap.sh deps does it) and are
# extracted with dpkg-deb -x, never installed. Everything lives in
#   ${XDG_CACHE_HOME:-~/.cache}/pidmempolicy/arm64/{debs,kernel,userland,sysroot}
# and is reused while the archive's candidate versions stay the same.
# Paths are printed on stdout (last line); progress goes to stderr.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/pidmempolicy/arm64
triplet=aarch64-linux-gnu

die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }
msg() { printf '%s: %s\n' "$prog" "$*" >&2; }
usage() { sed -n '5,24s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

sysroot_pkgs=(libc6 libgcc-s1 libnuma1 libnuma-dev libcap2 libcap-dev libsmartcols1 libsmartcols-dev)
userland_pkgs=(busybox-static bash-static)
# What `make` builds for arm64: the other helpers are x86-only for now.
build_targets=(src/pidmempolicy tests/helpers/pmp-target tests/helpers/pmp-threads
	tests/helpers/pmp-runas tests/helpers/pmp-seccomp tests/helpers/pmp-blocker
	tests/helpers/pmp-inject tests/helpers/pmp-rseq tests/helpers/pmp-hold
	tests/helpers/pmp-sleep32 tests/helpers/pmp-rawcall tests/helpers/pmp-hostile
	tests/helpers/pmp-vfork tests/helpers/pmp-pty
	# the unit tests, run in the guest: a non-x86 build is tested, not only built
	tests/unit/test-failure tests/unit/test-policy tests/unit/test-procfs
	tests/unit/test-targets tests/unit/test-report tests/unit/test-sys tests/unit/test-text
	tests/unit/test-spread)

# deb_path PKG VERSION: where the .deb of PKG:arm64 VERSION is cached
# (apt-get download writes the epoch's colon as %3a).
deb_path() { echo "$cache/debs/${1}_${2//:/%3a}_arm64.deb"; }

# download PKG=VERSION...: fetch those not cached yet, in one apt-get call.
download() {
	local want=() pv
	for pv in "$@"; do
		[ -s "$(deb_path "${pv%%=*}" "${pv#*=}")" ] || want+=("${pv%%=*}:arm64=${pv#*=}")
	done
	[ ${#want[@]} -gt 0 ] || return 0
	mkdir -p "$cache/debs"
	msg "downloading ${want[*]}"
	local sandbox=()
	[ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
	(cd "$cache/debs" && apt-get -q "${sandbox[@]}" download "${want[@]}") >&2 ||
		die "apt-get download ${want[*]} failed"
	for pv in "$@"; do
		[ -s "$(deb_path "${pv%%=*}" "${pv#*=}")" ] || die "apt-get download gave no .deb for $pv"
	done
}

# unpack DIR [--only=MEMBER] PKG...: extract the packages' current versions
# (only MEMBER, e.g. ./boot, if given) into DIR, unless DIR already holds
# exactly those (DIR/.debs lists them).
unpack() {
	local dir=$1 only='' debs=() p
	shift
	case ${1:-} in --only=*) only=${1#*=}; shift ;; esac
	# the candidate versions, in one (slow) apt-cache call
	local versions ver pvs=()
	versions=$(apt-cache show --no-all-versions "${@/%/:arm64}" 2>/dev/null |
		awk '/^Package: / { p = $2 } /^Version: / { print p, $2 }') || true
	for p in "$@"; do
		ver=$(awk -v p="$p" '$1 == p { print $2; exit }' <<<"$versions")
		[ -n "$ver" ] || die "$p:arm64 is unknown to apt (dpkg --add-architecture arm64 && apt-get update)"
		pvs+=("$p=$ver")
		debs+=("$(deb_path "$p" "$ver")")
	done
	download "${pvs[@]}"
	local want
	want=$(printf '%s\n' "${debs[@]##*/}")
	if [ -f "$dir/.debs" ] && [ "$(cat "$dir/.debs")" = "$want" ]; then
		return 0
	fi
	msg "extracting ${*} into $dir"
	rm -rf -- "$dir.new"
	mkdir -p "$dir.new"
	for p in "${debs[@]}"; do
		if [ -n "$only" ]; then
			dpkg-deb --fsys-tarfile "$p" | tar -x -C "$dir.new" "$only"
		else
			dpkg-deb -x "$p" "$dir.new"
		fi
	done
	# Absolute symlinks (libfoo.so -> /lib/...) would point into the host:
	# make them relative to the tree.
	local link target rel
	while IFS= read -r link; do
		target=$(readlink "$link")
		[[ $target == /* ]] || continue
		rel=$(realpath -m --relative-to="$(dirname "$link")" "$dir.new$target")
		ln -sfn "$rel" "$link"
	done < <(find "$dir.new" -type l)
	printf '%s\n' "$want" >"$dir.new/.debs"
	rm -rf -- "$dir"
	mv "$dir.new" "$dir"
}

do_kernel() {
	local pkg=${PMP_ARM64_KERNEL_PKG:-}
	if [ -z "$pkg" ]; then
		pkg=$(apt-cache show --no-all-versions linux-image-arm64:arm64 2>/dev/null |
			sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -n1)
		[ -n "$pkg" ] || die "cannot resolve linux-image-arm64:arm64 (dpkg --add-architecture arm64 && apt-get update)"
	fi
	local dir=$cache/kernel/$pkg
	unpack "$dir" --only=./boot "$pkg"	# the modules are not needed
	local image
	image=$(find "$dir/boot" -maxdepth 1 -name 'vmlinuz-*' | head -n1)
	[ -n "$image" ] || die "$pkg has no /boot/vmlinuz-*"
	# Debian's 6.1 arm64 vmlinuz is a plain Image ("ARMd" at offset 56),
	# which -kernel boots as is; a gzip'd one is unpacked once beside it.
	case $(od -A n -t x1 -j 56 -N 4 "$image" | tr -d ' \n'):$(od -A n -t x1 -N 2 "$image" | tr -d ' \n') in
	41524d64:*) echo "$image" ;;
	*:1f8b)
		[ -s "$image.Image" ] || { gzip -dc "$image" >"$image.Image.tmp" && mv "$image.Image.tmp" "$image.Image"; }
		echo "$image.Image" ;;
	*) die "$image is neither an arm64 Image nor gzip'd (an EFI zboot image?)" ;;
	esac
}

do_userland() {
	local dir=$cache/userland
	unpack "$dir" "${userland_pkgs[@]}"
	[ -x "$dir/bin/busybox" ] && [ -x "$dir/bin/bash-static" ] ||
		die "$dir lacks bin/busybox or bin/bash-static"
	echo "$dir"
}

do_sysroot() {
	local dir=$cache/sysroot
	unpack "$dir" "${sysroot_pkgs[@]}"
	echo "$dir"
}

do_configure() {
	command -v "$triplet-gcc" >/dev/null 2>&1 || die "$triplet-gcc not found (apt-get install gcc-aarch64-linux-gnu)"
	[ -x "$srcdir/configure" ] || die "$srcdir/configure missing (run autoreconf -fi there)"
	local sysroot libdir
	sysroot=$(do_sysroot | tail -n1)
	libdir=$sysroot/usr/lib/$triplet
	[ $# -gt 0 ] || set -- --with-pidfd-set-mempolicy-nr=451
	# The cross compiler brings its own libc (libc6-dev-arm64-cross); the
	# sysroot adds libnuma and libcap: headers via CPPFLAGS, libcap.pc via
	# pkg-config, the libraries and their own dependencies via -L/-rpath-link.
	# (configure records all but PKG_CONFIG_SYSROOT_DIR for re-runs; without
	# it pkg-config's -L is wrong, but LDFLAGS has the right one.)
	PKG_CONFIG_SYSROOT_DIR=$sysroot "$srcdir/configure" --host="$triplet" \
		PKG_CONFIG=pkg-config \
		PKG_CONFIG_LIBDIR="$libdir/pkgconfig:$sysroot/usr/share/pkgconfig" \
		CPPFLAGS="-I$sysroot/usr/include -I$sysroot/usr/include/$triplet" \
		LDFLAGS="-L$libdir -L$sysroot/lib/$triplet -Wl,-rpath-link,$libdir:$sysroot/lib/$triplet" \
		"$@"
}

do_build() {
	[ $# -ge 1 ] || die "usage: $prog build DIR [CONFIGURE-ARG]..."
	local dir=$1
	shift
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [ ! -f "$dir/Makefile" ]; then
		(cd "$dir" && do_configure "$@") >&2 || die "configure for $triplet failed (see $dir/config.log)"
	fi
	make -C "$dir" -j"$(nproc)" "${build_targets[@]}" >&2 || die "cross build in $dir failed"
	echo "$dir"
}

case ${1:-} in
kernel) do_kernel ;;
userland) do_userland ;;
sysroot) do_sysroot ;;
fetch) do_kernel && do_userland && do_sysroot ;;
configure) shift; do_configure "$@" ;;
build) shift; do_build "$@" ;;
-h | --help) usage ;;
*) usage >&2; exit 2 ;;
esac
