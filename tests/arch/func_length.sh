#!/bin/sh
# func_length.sh - no function of matrix/ or engine/ (C and CUDA) longer than
# 80 lines without a reason written above it (issue 13): a function starts at
# its signature (a line at column 0 holding '(', or 'template') and ends at the '}' in
# column 0 that closes the '{' in column 0 after it; the block comment just
# above a longer one must say why ("Long because", "Long for", "Long (",
# "Long:", "longer than", "not split"). Usage: func_length.sh [DIR...] (default $top_srcdir/matrix
# and $top_srcdir/engine). Prints each function over the limit without a
# reason and exits 1, else a summary and exits 0.
set -eu
limit=80
top=${top_srcdir:-.}
[ $# -gt 0 ] || set -- "$top/matrix" "$top/engine"
for d; do
	[ -d "$d" ] || { echo "func_length.sh: no directory '$d'" >&2; exit 2; }
done
files=$(find "$@" \( -name '*.c' -o -name '*.cu' \) | LC_ALL=C sort)
[ -n "$files" ] || { echo "func_length.sh: no C or CUDA file under $*" >&2; exit 2; }
# shellcheck disable=SC2086 # the paths hold no blanks (checked below)
awk -v limit="$limit" '
FNR == 1 { sig = 0; infn = 0; cmt = ""; incmt = 0; lastcmt = 0 }
# the last block comment that ended at column 0 context, and the line it ended on
!infn && /^\/\*/ { incmt = 1; cmt = "" }
!infn && incmt { t = $0; sub(/^[ \t]*\*?[ \t]*/, "", t); cmt = cmt " " t; if ($0 ~ /\*\//) { incmt = 0; lastcmt = FNR } ; next }
!infn && !sig && (/^[A-Za-z_].*\(/ || /^template/) { sig = FNR; name = ""; why = (lastcmt == FNR - 1) ? cmt : "" }
!infn && sig && !/^\{/ { name = name " " $0 }
!infn && /^\{/ { if (sig) infn = 1; next }
infn && /^\}/ {
	n = FNR - sig + 1
	sub(/__launch_bounds__\([^)]*\)/, "", name)
	split(name, a, "("); m = split(a[1], b, /[ *]+/)
	total++
	if (n > limit) {
		long++
		if (tolower(why) !~ /long( because| for| \(|:|er than)|not split/) {
			bad++
			printf "%s:%d: %s is %d lines (over %d) with no reason above it (a comment saying why it is long, or split it)\n", FILENAME, sig, b[m], n, limit
		}
	}
	infn = 0; sig = 0
	next
}
!infn && /^$/ { sig = 0 }
END {
	if (bad) exit 1
	printf "func_length.sh: %d functions, %d over %d lines, each with its reason above it\n", total, long, limit
}' $files
