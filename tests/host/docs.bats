#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The manual page: lint-clean, in step with --help (options both ways,
# exit statuses), and --help/--usage/--version behave.

bats_require_minimum_version 1.5.0

setup() {
	SRC=${PMP_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
	MANPAGE=$SRC/doc/pidmempolicy.8
	BIN=${PIDMEMPOLICY:-${PMP_BUILDDIR:-$SRC}/src/pidmempolicy}
}

# The binary is needed; a path given explicitly must exist.
need_binary() {
	if [ -n "${PIDMEMPOLICY:-}" ]; then
		[ -x "$BIN" ] || { echo "PIDMEMPOLICY=$BIN is not executable"; false; }
	else
		[ -x "$BIN" ] || { echo "no pidmempolicy binary at $BIN (set PIDMEMPOLICY)" >&2; false; }
	fi
}

# The page's source with roff escapes for '-' and fonts removed.
page_text() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(aq/'"'"'/g' "$MANPAGE"
}

# The lines of section $1 (up to the next .SH).
page_section() {
	page_text | awk -v sec="$1" '
		/^\.SH / { s = $0; sub(/^\.SH +/, "", s); gsub(/"/, "", s); on = (s == sec); next }
		on'
}

# The tag lines (the line after each .TP) of the OPTIONS section.
option_tags() {
	page_section OPTIONS | awk 'tag { print; tag = 0 } /^\.TP/ { tag = 1 }'
}

# Long options that --help lists (its option lines only).
help_long_options() {
	"$BIN" --help | grep -E '^ +-' | grep -oE -- '--[a-z][a-z-]*' | sort -u
}

# Short options that --help lists.
help_short_options() {
	"$BIN" --help | grep -E '^ +-' | grep -oE -- '(^|[ ,])-[^- ,]' | tr -d ' ,' | sort -u
}

@test "the manual page exists" {
	[ -s "$MANPAGE" ]
	run head -n 20 "$MANPAGE"
	[[ $output == *".TH PIDMEMPOLICY 8 "* ]]
}

@test "mandoc -T lint -W warning is clean" {
	command -v mandoc >/dev/null || { echo "mandoc is not installed" >&2; false; }
	run mandoc -T lint -W warning "$MANPAGE"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "groff -man -ww is clean, also formatted for a terminal" {
	command -v groff >/dev/null || { echo "groff is not installed" >&2; false; }
	run groff -man -ww -z "$MANPAGE"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	for width in 65 80 120; do
		run groff -man -Tutf8 -ww -z -rLL=${width}n "$MANPAGE"
		echo "$output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

@test "man -l renders the page with its sections" {
	command -v man >/dev/null || { echo "man is not installed" >&2; false; }
	run env MANWIDTH=80 MAN_KEEP_FORMATTING= man -l "$MANPAGE"
	[ "$status" -eq 0 ]
	for sec in NAME SYNOPSIS DESCRIPTION OPTIONS PERMISSIONS "EXIT STATUS" \
		   ENVIRONMENT FILES NOTES EXAMPLES "SEE ALSO" COPYRIGHT; do
		[[ $output == *"$sec"* ]] || { echo "no $sec"; false; }
	done
}

@test "the page documents every long option that --help lists" {
	need_binary
	tags=$(option_tags)
	opts=$(help_long_options)
	[ "$(echo "$opts" | wc -l)" -ge 18 ]
	for o in $opts; do
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|\$)" <<<"$tags" ||
			{ echo "OPTIONS does not document $o"; false; }
	done
}

@test "the page documents every short option that --help lists" {
	need_binary
	tags=$(option_tags)
	opts=$(help_short_options)
	[ "$(echo "$opts" | wc -l)" -ge 12 ]
	for o in $opts; do
		grep -qF -- "$o" <<<"$tags" || { echo "OPTIONS does not document $o"; false; }
	done
}

@test "the page names no option that --help does not list" {
	need_binary
	opts=$(help_long_options)
	# Every --option anywhere in the page, but configure's.
	page_opts=$(page_text | grep -oE -- '--[a-z][a-z-]*' | grep -v '^--with-' | sort -u)
	[ -n "$page_opts" ]
	for o in $page_opts; do
		grep -qxF -- "$o" <<<"$opts" || { echo "stale option in the page: $o"; false; }
	done
	# Short options in the OPTIONS tags.
	short=$(help_short_options)
	for o in $(option_tags | grep -oE -- '(^|[ ,])-[^- ,"]' | tr -d ' ,' | sort -u); do
		grep -qxF -- "$o" <<<"$short" || { echo "stale short option in the page: $o"; false; }
	done
}

@test "EXIT STATUS names 0, 1, 2 and 64, as --help does" {
	run page_section "EXIT STATUS"
	[ "$status" -eq 0 ]
	for code in 0 1 2 64; do
		grep -qxF ".B $code" <<<"$output" || { echo "EXIT STATUS lacks $code"; false; }
	done
	codes=$(grep -xE '\.B [0-9]+' <<<"$output" | cut -d' ' -f2 | tr '\n' ' ')
	[ "$codes" = "0 1 2 64 " ]
	need_binary
	run "$BIN" --help
	for code in 0 1 2 64; do
		[[ $output == *"Exit status:"*" $code "* ]] || { echo "--help lacks $code"; false; }
	done
}

@test "the page documents the environment variable and the failure message" {
	run page_section ENVIRONMENT
	[[ $output == *PIDMEMPOLICY_SYSCALL_NR* ]]
	run page_text
	[[ $output == *"this kernel does not provide pidfd_set_mempolicy(2):"* ]]
	[[ $output == *"needs CAP_SYS_NICE (try sudo)"* ]]
	[[ $output == *"ptrace access mode check; see"* ]]
	[[ $output == *"is a kernel thread; its policy cannot be changed"* ]]
}

@test "the failure messages quoted in the page are the tool's" {
	[ -d "$SRC/src" ] || { echo "no sources at $SRC/src" >&2; false; }
	for msg in "this kernel does not provide pidfd_set_mempolicy(2): " \
		   "needs CAP_SYS_NICE (try sudo)" \
		   "ptrace access mode check; see PERMISSIONS in pidmempolicy(8)" \
		   "is a kernel thread; its policy cannot be changed" \
		   "this kernel cannot address single threads (needs PIDFD_THREAD, Linux 6.9)" \
		   "pidmempolicy: failed to set " \
		   "would set "; do
		grep -rqF -- "$msg" "$SRC/src" || { echo "not in src/: $msg"; false; }
		page_text | tr '\n' ' ' | grep -qF -- "${msg% }" || { echo "not in the page: $msg"; false; }
	done
}

@test "--help prints help on stdout, nothing on stderr, exit 0" {
	need_binary
	run --separate-stderr "$BIN" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[0]} == "Usage: pidmempolicy "* ]]
	[[ $output == *"--interleave=NODES"* ]]
}

@test "-h and -? print the same help as --help" {
	need_binary
	help=$("$BIN" --help)
	for o in -h '-?'; do
		run --separate-stderr "$BIN" "$o"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[ "$output" = "$help" ]
	done
	[[ $help == *"-h, -?, --help"* ]]
}

@test "--usage prints a usage message on stdout, nothing on stderr, exit 0" {
	need_binary
	run --separate-stderr "$BIN" --usage
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[0]} == "Usage: pidmempolicy "* ]]
	[[ $output == *"--membind=NODES"* ]]
}

@test "--version and -V print the version of the page and the licence, exit 0" {
	need_binary
	run --separate-stderr "$BIN" --version
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[0]} =~ ^pidmempolicy\ [0-9]+\.[0-9]+ ]]
	[[ $output == *"License GPL-2.0-or-later"* ]]
	version=${lines[0]}
	all=$output
	run --separate-stderr "$BIN" -V
	[ "$status" -eq 0 ]
	[ "$output" = "$all" ]
	page_section COPYRIGHT | grep -q 'GPL-2.0-or-later' ||
		{ echo "the page's COPYRIGHT does not name the licence"; false; }
	grep -qE "^\.TH PIDMEMPOLICY 8 \"[^\"]*\" \"$version\"" "$MANPAGE" ||
		{ echo "the page's .TH does not say \"$version\""; false; }
}

@test "a usage error exits 1 with argp's Try line, as the page says" {
	need_binary
	run --separate-stderr "$BIN" --no-such-option
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == *"Try "?"pidmempolicy --help' "* ]]
	run page_section "EXIT STATUS"
	[[ $output == *"Try 'pidmempolicy --help'"* ]]
}
