#!/bin/bash
# build.sh - compile the rig's guest helper programs (pmp-target, pmp-runas,
# pmp-rawcall, pmp-seccomp, pmp-stress) into a directory outside the source
# tree.
#
# Usage: build.sh --out=DIR [--cc=CC]
#
# Prints DIR (absolute) on stdout. Needs a C compiler and libcap-dev
# (pmp-runas). Uses $CC/$CFLAGS/$LDFLAGS if set. Rebuilds only helpers whose
# source is newer than the binary.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }
usage() { echo "Usage: $prog --out=DIR [--cc=CC]"; }

out=
cc=${CC:-cc}
while [ $# -gt 0 ]; do
	case $1 in
	--out=*) out=${1#*=} ;;
	--cc=*) cc=${1#*=} ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
	shift
done
[ -n "$out" ] || { usage >&2; die "--out=DIR is required"; }
command -v "$cc" >/dev/null 2>&1 || die "C compiler '$cc' not found"
mkdir -p "$out"
out=$(cd "$out" && pwd)

cflags=${CFLAGS:--O2 -g}
# shellcheck disable=SC2206
flags=(-std=gnu11 -Wall -Wextra -Werror=implicit-function-declaration $cflags)
# shellcheck disable=SC2206
ldflags=(${LDFLAGS:-})

build() {
	local name=$1
	shift
	local src=$here/$name.c
	if [ -x "$out/$name" ] && [ "$out/$name" -nt "$src" ] && [ "$out/$name" -nt "${BASH_SOURCE[0]}" ]; then
		return 0
	fi
	printf '%s: CC %s\n' "$prog" "$name" >&2
	"$cc" "${flags[@]}" -o "$out/$name.tmp" "$src" "${ldflags[@]}" "$@" ||
		{ rm -f "$out/$name.tmp"; die "compiling $name failed"; }
	mv -f "$out/$name.tmp" "$out/$name"
}

# The rig's own helpers. (Other sources here, e.g. ones that need the
# autotools config.h, are built by the project's build system.)
build pmp-target -pthread
build pmp-rawcall
build pmp-seccomp
build pmp-stress
printf '#include <sys/capability.h>\n' | "$cc" -E - >/dev/null 2>&1 ||
	die "sys/capability.h not found (apt-get install libcap-dev)"
build pmp-runas -lcap
echo "$out"
