#!/bin/sh
# layers.sh - matrix/ keeps its layering (matrix/README.md, "Dependencies"):
# every #include "..." of a file under matrix/ is resolved to the stage it
# names, and a stage may include only the stages before it:
#   base   (matrix/*.[ch] but main.c: util, csv, result)   base
#   plan   (matrix/plan/)                                  base plan
#   report (matrix/report/)                                base plan report
#   run    (matrix/run/)                                   base plan report run
#   main   (matrix/main.c: the subcommand table)           anything
# Usage: layers.sh [DIR]   (DIR defaults to $top_srcdir/matrix). Prints each
# include that breaks a rule and exits 1, else prints a summary and exits 0.
set -eu
dir=${1:-${top_srcdir:-.}/matrix}
[ -d "$dir/plan" ] && [ -d "$dir/run" ] && [ -d "$dir/report" ] || {
	echo "layers.sh: '$dir' has no plan/, run/ and report/" >&2
	exit 2
}
cd "$dir"
find . -name '*.[ch]' | LC_ALL=C sort | while read -r f; do
	f=${f#./}
	case $f in
	main.c) from=main ;;
	plan/*) from=plan ;;
	run/*) from=run ;;
	report/*) from=report ;;
	*/*) from=unknown ;;
	*) from=base ;;
	esac
	here=$(dirname "$f")
	sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
		# the file the compiler finds: next to the includer first, then under
		# matrix/ (-I$(top_srcdir)/matrix); anything else (config.h) is outside
		if [ -f "$here/$inc" ]; then
			target=$here/$inc
		elif [ -f "$inc" ]; then
			target=$inc
		else
			continue
		fi
		target=$(cd "$(dirname "$target")" && pwd -P)/$(basename "$target")
		target=${target#"$(pwd -P)/"}
		case $target in
		plan/*) to=plan ;;
		run/*) to=run ;;
		report/*) to=report ;;
		/*|*/*) to=unknown ;;
		*) to=base ;;
		esac
		case $from:$to in
		main:*|*:base|plan:plan|report:plan|report:report|run:plan|run:run|run:report) ;;
		*) echo "matrix/$f includes \"$inc\" (matrix/$target): $from must not include $to" ;;
		esac
	done
done > "${TMPDIR:-/tmp}/layers.$$"
bad=$(wc -l < "${TMPDIR:-/tmp}/layers.$$")
cat "${TMPDIR:-/tmp}/layers.$$"
rm -f "${TMPDIR:-/tmp}/layers.$$"
if [ "$bad" -ne 0 ]; then
	echo "layers.sh: $bad include(s) break the layering of matrix/" >&2
	exit 1
fi
echo "layers.sh: matrix/ includes follow base <- plan <- report <- run"
