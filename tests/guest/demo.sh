#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo.sh BUILDDIR - boot Linux 6.1 + the pidfd_set_mempolicy patch in QEMU
# and show, on a live process, its policy and page placement before and after
# `pidmempolicy --interleave=0-3`.  Used by `make demo`.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
builddir=${1:?usage: demo.sh BUILDDIR}
exec "$here/run-guest.sh" --variant=patched \
	--binary="$builddir/src/pidmempolicy" --helpers-dir="$builddir/tests/helpers" \
	--demo="$here/demo-guest.sh"
