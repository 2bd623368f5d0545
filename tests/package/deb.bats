#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package, as a distribution would build it: from the release
# tarball (make dist), with dpkg-buildpackage as root is not needed
# (Rules-Requires-Root: no), checked by lintian, its files listed, and its
# binary run in a root it was not built in (the stock 6.1 guest).
# Run by `make check-package`; needs dpkg-dev, debhelper, lintian.
bats_require_minimum_version 1.5.0

setup_file() {
	: "${PMP_BUILDDIR:?}" "${PMP_SRCDIR:?}"
	for t in dpkg-buildpackage dh lintian; do
		command -v "$t" >/dev/null || { echo "$t is not installed (tests/bootstrap.sh deps)" >&2; return 1; }
	done
	export DEB_WORK=$PMP_BUILDDIR/tests/package/work
	rm -rf "$DEB_WORK"
	mkdir -p "$DEB_WORK"
	env -u TESTS make -s -C "$PMP_BUILDDIR" dist-gzip >"$DEB_WORK/dist.log" 2>&1 || { cat "$DEB_WORK/dist.log" >&2; return 1; }
	tar -xzf "$PMP_BUILDDIR"/pidmempolicy-*.tar.gz -C "$DEB_WORK"
	rm -f "$PMP_BUILDDIR"/pidmempolicy-*.tar.gz
	# a build of its own: not this make's TESTS or flags
	(cd "$DEB_WORK"/pidmempolicy-*/ &&
	 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u TESTS dpkg-buildpackage -us -uc -b) >"$DEB_WORK/build.log" 2>&1 ||
		{ tail -n 40 "$DEB_WORK/build.log" >&2; return 1; }
	chmod -R a+rX "$DEB_WORK"
	export DEB=$(echo "$DEB_WORK"/pidmempolicy_*.deb)
}

@test "deb: built from the release tarball, its unit tests run" {
	[ -f "$DEB" ]
	grep -q 'make -j[0-9]* check-unit' "$DEB_WORK/build.log"
	grep -qE '^# FAIL: +0$' "$DEB_WORK/build.log"
}

@test "deb: lintian reports no error and no warning" {
	# as an ordinary user, as lintian wants
	run runuser -u nobody -- lintian --fail-on error,warning --display-info "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "deb: installs the tool in /usr/bin, its page, completion and copyright" {
	run dpkg-deb -c "$DEB"
	[ "$status" -eq 0 ]
	for f in ./usr/bin/pidmempolicy ./usr/share/man/man8/pidmempolicy.8.gz \
		 ./usr/share/bash-completion/completions/pidmempolicy \
		 ./usr/share/doc/pidmempolicy/copyright; do
		grep -q " $f\$" <<<"$output" || { echo "missing: $f"; false; }
	done
	! grep -q '/sbin/' <<<"$output"
}

@test "deb: its dependencies are met on this system" {
	run dpkg --dry-run -i "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "deb: the packaged binary runs in a fresh root (stock 6.1 guest)" {
	root=$DEB_WORK/root
	rm -rf "$root"
	dpkg-deb -x "$DEB" "$root"
	run "$PMP_SRCDIR/tests/guest/run-guest.sh" --variant=stock \
		--binary="$root/usr/bin/pidmempolicy" --helpers-dir="$PMP_BUILDDIR/tests/helpers" \
		"$PMP_SRCDIR/tests/package/guest.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"pmp-guest: 3 passed, 0 failed"* ]]
}
