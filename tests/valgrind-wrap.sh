#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# valgrind-wrap.sh - run the tool under valgrind's memcheck; any memory
# error or definite leak turns into exit status 99, which no test expects.
# Used as PIDMEMPOLICY by `make check-valgrind`.
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite "${PMP_REAL_TOOL:?}" "$@"
