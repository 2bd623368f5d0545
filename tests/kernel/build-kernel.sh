#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# build-kernel.sh - build (or look up in the cache) the test kernel for the
# pidmempolicy QEMU rig.
#
# Usage: build-kernel.sh [--version=6.1|6.12] [--variant=patched|stock]
#                        [--patch=PATH] [--config-extra=FILE] [--jobs=N]
#                        [--force]
#
# Prints the absolute path of a bzImage as the LAST line on stdout; all
# progress and diagnostics go to stderr.
#
#   Version --version=6.1 (default) or 6.12. Selects the source tarball,
#           the default patch and the config fragment; 6.1 builds are exactly
#           what they were before --version existed (same cache keys).
#   Source  Debian's linux-source-VERSION tarball ($PMP_KERNEL_SOURCE, default
#           /usr/src/linux-source-VERSION.tar.xz).
#   Patch   --patch=PATH, else for 6.1 $PMP_KERNEL_PATCH, else
#           <repo>/../shared/seeds/001-patch-mm-add-new-syscall-pidfd-set-mempolicy.patch
#           (the shared/ directory beside the repository clone; the v2
#           patch), for 6.12 the project's own forward port
#           tests/kernel/patches/linux-6.12/0001-mm-pidfd_set_mempolicy.patch.
#           Only for --variant=patched (default). Rejects in Documentation/
#           and in non-x86 arch/ files are tolerated; any other reject is fatal.
#   Config  `make tinyconfig`, merged with tests/kernel/linux-VERSION.config
#           (and --config-extra=FILE, e.g. a debug fragment with KASAN and
#           lockdep, if given), then `make olddefconfig`; every option of the
#           fragments is verified.
#   Cache   ${PMP_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pidmempolicy/kernels}/KEY/
#           holding bzImage and info.txt. KEY hashes the tarball, the patch
#           (or "stock"), the config fragment, the compiler version and
#           the script's key_format number (bump it when the build
#           changes), and --config-extra's hash when given. Entries of 6.12
#           (and of --config-extra builds) are named 6.12-VARIANT-KEY
#           (VARIANT-extra-KEY), those of 6.1 VARIANT-KEY. Entries are placed with an atomic rename, so an
#           interrupted build never leaves a broken entry. The build log
#           (CACHE/logs/KEY.log) is kept only when the build fails.
#
# --force rebuilds even when a cache entry exists.
set -euo pipefail

prog=${0##*/}
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/../.." && pwd)

usage() {
	cat <<EOF
Usage: $prog [--version=6.1|6.12] [--variant=patched|stock] [--patch=PATH]
       [--config-extra=FILE] [--jobs=N] [--force]

Build the pidmempolicy test kernel (Linux 6.1 or 6.12, tinyconfig + fragment)
or reuse the cached one, and print the absolute path of its bzImage on stdout.

Options:
  --version=V   6.1 (default) or 6.12
  --variant=V   patched (default: with the pidfd_set_mempolicy patch) or stock
  --patch=PATH  kernel patch (default for 6.1: \$PMP_KERNEL_PATCH, else
                $repo/../shared/seeds/001-patch-mm-add-new-syscall-pidfd-set-mempolicy.patch,
                for 6.12 tests/kernel/patches/linux-6.12/0001-mm-pidfd_set_mempolicy.patch)
  --config-extra=FILE  one more config fragment (e.g. KASAN + lockdep)
  --jobs=N      parallel make jobs (default: nproc)
  --force       rebuild even if a cached kernel exists
  -h, --help    show this help

Environment: PMP_KERNEL_SOURCE, PMP_KERNEL_PATCH, PMP_KERNEL_CACHE, XDG_CACHE_HOME
EOF
}

die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }

# Run from `make check`, the outer make's flags (-w, jobserver) would leak
# into the kernel's make: it builds on its own terms.
unset MAKEFLAGS MFLAGS MAKELEVEL
msg() { printf '%s: %s\n' "$prog" "$*" >&2; }

variant=patched
version=6.1
patch_file=
extra_fragment=
jobs=$(nproc)
force=0

while [ $# -gt 0 ]; do
	case $1 in
	--version=*) version=${1#*=} ;;
	--variant=*) variant=${1#*=} ;;
	--patch=*) patch_file=${1#*=} ;;
	--config-extra=*) extra_fragment=${1#*=} ;;
	--jobs=*) jobs=${1#*=} ;;
	--force) force=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
	shift
done

case $variant in
patched | stock) ;;
*) die "--variant must be 'patched' or 'stock', not '$variant'" ;;
esac
case $version in
# PMP_KERNEL_PATCH names the v2 patch, which is for 6.1
6.1) default_patch=${PMP_KERNEL_PATCH:-$repo/../shared/seeds/001-patch-mm-add-new-syscall-pidfd-set-mempolicy.patch} ;;
6.12) default_patch=$script_dir/patches/linux-6.12/0001-mm-pidfd_set_mempolicy.patch ;;
*) die "--version must be '6.1' or '6.12', not '$version'" ;;
esac
patch_file=${patch_file:-$default_patch}
source_tar=${PMP_KERNEL_SOURCE:-/usr/src/linux-source-$version.tar.xz}
fragment=$script_dir/linux-$version.config
if [ -n "$extra_fragment" ]; then
	[ -r "$extra_fragment" ] || die "--config-extra $extra_fragment not readable"
	extra_fragment=$(cd "$(dirname "$extra_fragment")" && pwd)/$(basename "$extra_fragment")
fi
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive integer"
[ -r "$source_tar" ] || die "kernel source $source_tar not found (apt-get install linux-source-$version)"
[ -r "$fragment" ] || die "config fragment $fragment not found"
if [ "$variant" = patched ]; then
	[ -r "$patch_file" ] || die "patch $patch_file not found (use --patch or PMP_KERNEL_PATCH)"
	patch_file=$(cd "$(dirname "$patch_file")" && pwd)/$(basename "$patch_file")
fi
for tool in make gcc flex bison bc patch tar xz sha256sum; do
	command -v "$tool" >/dev/null 2>&1 || die "required tool '$tool' not found"
done

cache=${PMP_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/pidmempolicy/kernels}
mkdir -p "$cache" "$cache/logs"
cache=$(cd "$cache" && pwd)

# ---- cache key ----
# Bump key_format when a change to this script changes what gets built.
key_format=1
hash() { sha256sum | cut -c1-64; }
# A file's hash without its licence line, which changes nothing built.
content_hash() { sed '/^# SPDX-License-Identifier: /d' "$1" | hash; }
src_hash=$(sha256sum <"$source_tar" | cut -c1-64)
if [ "$variant" = patched ]; then
	patch_hash=$(content_hash "$patch_file")
else
	patch_hash=stock
fi
key=$(
	{
		echo "format $key_format"
		echo "source $src_hash"
		echo "patch $patch_hash"
		echo "fragment $(content_hash "$fragment")"
		echo "cc $(gcc --version | head -n1)"
		# Only when given, so that the keys of plain builds do not change.
		[ -z "$extra_fragment" ] || echo "extra $(content_hash "$extra_fragment")"
	} | hash | cut -c1-16
)
if [ -n "$extra_fragment" ]; then
	key="$variant-extra-$key"
else
	key="$variant-$key"
fi
[ "$version" = 6.1 ] || key="$version-$key"
entry=$cache/$key

if [ "$force" = 0 ] && [ -s "$entry/bzImage" ]; then
	msg "using cached $variant kernel $entry"
	echo "$entry/bzImage"
	exit 0
fi

# One build per key at a time: a second caller waits and then uses the result.
if command -v flock >/dev/null 2>&1; then
	exec {lock_fd}>"$cache/.lock-$key"
	if ! flock -n "$lock_fd"; then
		msg "another build of $key is running; waiting for it"
		flock "$lock_fd"
		if [ -s "$entry/bzImage" ]; then
			msg "using cached $variant kernel $entry"
			echo "$entry/bzImage"
			exit 0
		fi
	fi
fi

# ---- build ----
work=$(mktemp -d "$cache/.work-$key.XXXXXX")
stage=
make_pid=
cleanup() {
	# An interrupted compile runs in its own process group: stop all of it.
	[ -z "$make_pid" ] || kill -TERM -- "-$make_pid" 2>/dev/null || true
	[ -z "$make_pid" ] || wait "$make_pid" 2>/dev/null || true
	rm -rf -- "$work"
	[ -z "$stage" ] || rm -rf -- "$stage"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

log=$cache/logs/$key.log
: >"$log"
start=$(date +%s)
fail() {
	msg "error: $*"
	if [ -s "$log" ]; then
		msg "last lines of $log:"
		tail -n 40 "$log" >&2
	fi
	msg "full build log: $log"
	exit 1
}

msg "building $variant kernel (key $key); log: $log"
msg "extracting $source_tar"
tar -xJf "$source_tar" -C "$work" || fail "cannot extract $source_tar"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)
[ -n "$src" ] && [ -f "$src/Makefile" ] || fail "no kernel tree found in $source_tar"

if [ "$variant" = patched ]; then
	msg "applying $patch_file"
	set +e
	(cd "$src" && patch -p1 --batch --forward --no-backup-if-mismatch <"$patch_file") >"$work/patch.out" 2>&1
	patch_rc=$?
	set -e
	cat "$work/patch.out" >>"$log"
	# Files patch could not even find are reported as "can't find file".
	if grep -q "can't find file\|No file to patch\|Only garbage\|malformed patch" "$work/patch.out"; then
		fail "patch does not apply (missing files or malformed patch)"
	fi
	bad=()
	while IFS= read -r rej; do
		rel=${rej#"$src"/}
		case $rel in
		Documentation/*) msg "warning: tolerated reject: $rel" ;;
		arch/x86/*) bad+=("$rel") ;;
		arch/*) msg "warning: tolerated reject: $rel" ;;
		*) bad+=("$rel") ;;
		esac
	done < <(find "$src" -name '*.rej' | sort)
	if [ "${#bad[@]}" -gt 0 ]; then
		fail "patch rejected hunks in: ${bad[*]}"
	fi
	if [ "$patch_rc" -ne 0 ] && ! find "$src" -name '*.rej' | grep -q .; then
		fail "patch failed (exit $patch_rc) without reject files"
	fi
	if grep -q 'with fuzz' "$work/patch.out"; then
		msg "warning: patch applied with fuzz:"
		grep 'with fuzz' "$work/patch.out" >&2
	fi
	grep -q 'pidfd_set_mempolicy' "$src/arch/x86/entry/syscalls/syscall_64.tbl" ||
		fail "patched tree has no pidfd_set_mempolicy in syscall_64.tbl"
fi

fragments=("$fragment")
[ -z "$extra_fragment" ] || fragments+=("$extra_fragment")
msg "configuring (tinyconfig + $(basename -a "${fragments[@]}" | tr '\n' ' '| sed 's/ $//'))"
{
	make -C "$src" tinyconfig &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" "${fragments[@]}" &&
		make -C "$src" olddefconfig
} >>"$log" 2>&1 || fail "kernel configuration failed"

missing=()
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF -- "$line" "$src/.config" || missing+=("$line (got: $(grep -E "^(# )?${line%%=*}[= ]" "$src/.config" || echo 'absent'))")
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		if grep -q "^$opt=" "$src/.config"; then
			missing+=("$opt should be unset (got: $(grep "^$opt=" "$src/.config"))")
		fi
		;;
	esac
done < <(
	# The last fragment that names an option wins (as in merge_config.sh).
	cat "${fragments[@]}" | awk '
		/^CONFIG_[A-Za-z0-9_]+=/ { o = $0; sub(/=.*/, "", o) }
		/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { o = $2 }
		o != "" { if (!(o in v)) order[n++] = o; v[o] = $0; o = "" }
		END { for (i = 0; i < n; i++) print v[order[i]] }'
)
if [ "${#missing[@]}" -gt 0 ]; then
	msg "error: these config options did not stick after olddefconfig:"
	printf '  %s\n' "${missing[@]}" >&2
	fail "kernel config does not match $(basename "$fragment")"
fi

msg "compiling bzImage with -j$jobs (this takes a few minutes)"
# In the background (and its own session) so that a TERM/INT sent to this
# script is handled at once and reaches every compiler process.
setsid make -C "$src" -j"$jobs" bzImage >>"$log" 2>&1 &
make_pid=$!
make_rc=0
wait "$make_pid" || make_rc=$?
make_pid=
[ "$make_rc" -eq 0 ] || fail "kernel build failed (make exit $make_rc)"
[ -s "$src/arch/x86/boot/bzImage" ] || fail "build produced no bzImage"

release=$(make -s --no-print-directory -C "$src" kernelrelease 2>>"$log")
if [ "$variant" = patched ]; then
	grep -q 'sys_pidfd_set_mempolicy' "$src/System.map" ||
		fail "patched kernel has no sys_pidfd_set_mempolicy symbol"
fi

stage=$(mktemp -d "$cache/.stage-$key.XXXXXX")
cp "$src/arch/x86/boot/bzImage" "$stage/bzImage"
cp "$src/.config" "$stage/config"
end=$(date +%s)
{
	echo "variant=$variant"
	echo "version=$version"
	echo "key=$key"
	echo "release=$release"
	echo "source=$source_tar sha256=$src_hash"
	if [ "$variant" = patched ]; then
		echo "patch=$patch_file sha256=$patch_hash"
	fi
	echo "fragment=$fragment"
	[ -z "$extra_fragment" ] || echo "config_extra=$extra_fragment"
	echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) seconds=$((end - start)) jobs=$jobs"
} >"$stage/info.txt"
chmod 755 "$stage"

if [ -e "$entry" ]; then
	# --force, or a concurrent build won the race: replace atomically enough.
	old=$(mktemp -d "$cache/.old-$key.XXXXXX")
	mv -T "$entry" "$old/entry" 2>/dev/null || true
	rm -rf -- "$old"
fi
mv -T "$stage" "$entry" || fail "cannot place $entry"
stage=
rm -f -- "$log" # logs are kept for failed builds only
msg "built $variant kernel $release in $((end - start))s: $entry"
echo "$entry/bzImage"
