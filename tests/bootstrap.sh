#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bootstrap.sh - everything from a fresh Debian 12 to a result.
#
#   bash tests/bootstrap.sh demo    install, build, boot the patched kernel in
#                                   QEMU and show a live process's policy and
#                                   page placement change
#   bash tests/bootstrap.sh check   install, build, run every suite (unit,
#                                   host bats, guest bats in QEMU on the
#                                   patched and the stock kernels, the Debian
#                                   package, distcheck as an ordinary user)
#                                   and end with "N passed, N failed"
#   bash tests/bootstrap.sh deps    install the Debian packages only
#   bash tests/bootstrap.sh build   configure and build into $PMP_BUILD_DIR
#
# Needs root (apt-get, and the guest runs as root).  The build goes to
# $PMP_BUILD_DIR (default: _build in the source tree); kernels are cached in
# ${XDG_CACHE_HOME:-~/.cache}/pidmempolicy.
set -euo pipefail

prog=${0##*/}
srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
builddir=${PMP_BUILD_DIR:-$srcdir/_build}
# the kernel patch, by absolute path so that `make distcheck` (which builds
# from a copy of the tree) finds it too
export PMP_KERNEL_PATCH=${PMP_KERNEL_PATCH:-$srcdir/../shared/seeds/001-patch-mm-add-new-syscall-pidfd-set-mempolicy.patch}

# What the project needs from Debian 12, and why.
packages=(
	build-essential autoconf automake pkg-config	# the build
	gcc-12-multilib					# a 32-bit test target (not gcc-multilib:
							# it conflicts with the cross compilers)
	libnuma-dev libcap-dev libsmartcols-dev		# libraries the tool uses
	clang libclang-rt-14-dev valgrind		# second compiler, libFuzzer; memcheck
	bats bash-completion mandoc groff-base strace python3 jq	# host and guest tests
	numactl						# migratepages, make bench's peer
	linux-source-6.1 linux-source-6.12 bc bison flex libelf-dev libssl-dev xz-utils	# the test kernels
	cpio busybox-static bash-static qemu-system-x86	# the guest
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm	# the arm64 guest (tests/guest/arm64.sh)
	gcc-arm-linux-gnueabihf libc6-dev-armhf-cross	# its 32-bit (AArch32) test target
	libcap2-bin					# capsh, for exploring by hand
	debhelper lintian				# make check-package
)
# make check-clients: the services it runs (PostgreSQL, Redis, a JVM, Go)
mapfile -t -O "${#packages[@]}" packages < <(sed '/^#/d; /^$/d' "$srcdir/tests/clients/packages")

die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }

deps() {
	local missing=() add_arm64=0
	for p in "${packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	# The arm64 guest's kernel, busybox, bash and sysroot are arm64 packages,
	# fetched with apt-get download (never installed): apt must know them.
	dpkg --print-foreign-architectures | grep -qx arm64 || add_arm64=1
	[ ${#missing[@]} -eq 0 ] && [ "$add_arm64" = 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}) or the arm64 architecture: run as root"
	if [ "$add_arm64" = 1 ]; then
		echo "$prog: adding the arm64 architecture (dpkg --add-architecture arm64)" >&2
		dpkg --add-architecture arm64
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "$prog: installing ${missing[*]}" >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

build() {
	( cd "$srcdir" && autoreconf -fi ) >&2
	mkdir -p "$builddir"
	( cd "$builddir" &&
	  { [ -f Makefile ] || "$srcdir/configure" --with-pidfd-set-mempolicy-nr=451 --enable-werror; } &&
	  make -j"$(nproc)" all && make -j"$(nproc)" check TESTS= ) >&2
}

# Results of the steps that are not TAP suites (builds), as PASS/FAIL lines.
steps_file=

step() {	# step NAME COMMAND...: run a build step, record its result
	local name=$1; shift
	if "$@"; then
		echo ":test-result: PASS $name" >> "$steps_file"
	else
		echo ":test-result: FAIL $name" >> "$steps_file"
		echo "$prog: step failed: $name" >&2
	fi
}

# Sum the per-test results that automake's TAP driver wrote into *.trs,
# in every build directory of this run, and the build steps.
summarize() {
	local all pass fail skip
	all=$(find "$@" -name '*.trs' -exec cat {} + 2>/dev/null; cat "$steps_file")
	pass=$(grep -c '^:test-result: PASS' <<<"$all" || true)
	fail=$(grep -Ec '^:test-result: (FAIL|XPASS|ERROR)' <<<"$all" || true)
	skip=$(grep -Ec '^:test-result: (SKIP|XFAIL)' <<<"$all" || true)
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
}

show_failures() {
	find "$1/tests" -name '*.log' ! -name test-suite.log -exec grep -l -E '^(not ok|FAIL|ERROR)' {} + 2>/dev/null |
		while read -r log; do echo "=== $log" >&2; tail -n 60 "$log" >&2; done
}

# A second build with clang and -Werror: compile only.
clang_build() {
	local dir=$builddir-clang
	mkdir -p "$dir"
	( cd "$dir" && { [ -f Makefile ] || CC=clang "$srcdir/configure" -q --with-pidfd-set-mempolicy-nr=451 --enable-werror; } &&
	  make -j"$(nproc)" all && make -j"$(nproc)" check TESTS= ) >&2
}

# The tool and the unit tests built with ASan and UBSan; the unit, host
# and x86 QEMU guest suites run against that build (its sanitizer reports end
# the tool with status 99: src/sanitizer-options.c).
sanitizer_suites() {
	local dir=$builddir-asan
	mkdir -p "$dir"
	find "$dir/tests" -name '*.trs' -delete 2>/dev/null || true
	( cd "$dir" && { [ -f Makefile ] || "$srcdir/configure" -q --with-pidfd-set-mempolicy-nr=451 --enable-werror --enable-sanitizers; } &&
	  make -j"$(nproc)" all >&2 && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 make -j1 check-unit check-host check-guest-x86 ) || {
		show_failures "$dir"; return 1; }
}

# The host suites valgrind can follow (make check-valgrind), with the tool
# under memcheck: any error or definite leak becomes exit status 99, which
# no test expects.
valgrind_suites() {
	local dir=$builddir-valgrind
	mkdir -p "$dir"
	find "$dir/tests" -name '*.trs' -delete 2>/dev/null || true
	( cd "$dir" && { [ -f Makefile ] || "$srcdir/configure" -q --with-pidfd-set-mempolicy-nr=451; } &&
	  make -j"$(nproc)" all >&2 &&
	  make -j1 check-valgrind ) || { show_failures "$dir"; return 1; }
}

# make distcheck as an ordinary user, from the release tarball: building,
# installing under the prefix and the unit and host suites need no root.
distcheck_unprivileged() {
	local dir rc=0
	dir=$(mktemp -d)
	make -C "$builddir" dist-gzip >&2 &&
		tar -xzf "$builddir"/pidmempolicy-*.tar.gz -C "$dir" &&
		rm -f "$builddir"/pidmempolicy-*.tar.gz &&
		chown -R nobody:nogroup "$dir" || { rm -rf "$dir"; return 1; }
	( cd "$dir"/pidmempolicy-*/ &&
	  setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$dir" \
		sh -c './configure -q --enable-werror && make -j"$(nproc)" distcheck' ) >&2 || rc=1
	rm -rf "$dir"
	return "$rc"
}

check() {
	local rc=0
	steps_file=$(mktemp)
	find "$builddir/tests" -name '*.trs' -delete 2>/dev/null || true
	step "clang -Werror build" clang_build
	step "fuzz: saved regressions, then 10 s per target" \
		make -C "$builddir" fuzz FUZZ_SECONDS=10 FUZZ_BUILDDIR="$builddir-fuzz"
	# make check (unit and host), then the QEMU suites, the package and
	# the services; a suite that fails to report counts as a failed test
	for target in check check-guest check-package check-clients; do
		( cd "$builddir" && make -j1 "$target" ) || { rc=1; show_failures "$builddir"; }
	done
	step "make distcheck as an ordinary user (nobody)" distcheck_unprivileged
	valgrind_suites || { rc=1; echo ":test-result: FAIL valgrind suites" >> "$steps_file"; }
	sanitizer_suites || { rc=1; echo ":test-result: FAIL sanitizer suites" >> "$steps_file"; }
	summarize "$builddir" "$builddir-valgrind" "$builddir-asan" || rc=1
	rm -f "$steps_file"
	return "$rc"
}

case ${1:-} in
deps)  deps ;;
build) deps; build ;;
demo)  deps; build; make -C "$builddir" demo ;;
check) deps; build; check ;;
*) echo "usage: $prog deps|build|demo|check" >&2; exit 2 ;;
esac
