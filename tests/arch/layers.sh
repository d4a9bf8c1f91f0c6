#!/bin/sh
# layers.sh - matrix/ keeps its layering (matrix/README.md, "Dependencies"):
# every #include "..." of a file under matrix/ is resolved to the stage it
# names, and a stage may include only the stages before it:
#   base   (matrix/*.[ch] but main.c: util, csv, result)   base
#   plan   (matrix/plan/)                                  base plan
#   report (matrix/report/)                                base plan report
#   run    (matrix/run/)                                   base plan report run
#   main   (matrix/main.c: the subcommand table)           anything
# Inside report/ the files are in levels, lowest first (REPORT_LEVELS below);
# a file may include the headers of its own level and of the levels below it,
# never one above, so that calls flow one way (stats -> ... -> commands). A
# file of report/ missing from REPORT_LEVELS is an error: place it.
# Usage: layers.sh [DIR]   (DIR defaults to $top_srcdir/matrix). Prints each
# include that breaks a rule and exits 1, else prints a summary and exits 0.
set -eu
# report/: level name, then its files (matrix/README.md, "Dependencies")
REPORT_LEVELS='
stats     stats.h stats.c
quality   quality.h quality.c
cellset   cellset.h cellset.c
model     model.h report_load.c report_merge.c
effects   effects.h effects.c
rtable    rtable.h report_table.c
factorial factorial.h factorial.c
profiles  profiles.h report_profiles.c
tables    tables.h report_tables.c
plot      plot.h plot.c
facets    facets.h report_facets.c
figures   figures.h report_figures.c
pages     pages.h report_quality.c report_html.c
report    report.h report.c
commands  cmd_report.c cmd_compare.c cmd_export.c cmd_merge.c
'
# report_level FILE (a path under report/): "RANK NAME", or nothing
report_level() {
	echo "$REPORT_LEVELS" | awk -v f="${1#report/}" 'NF { n++; for (i = 2; i <= NF; i++) if ($i == f) { print n, $1; exit } }'
}
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
	lf=
	if [ "$from" = report ]; then
		lf=$(report_level "$f")
		[ -n "$lf" ] || echo "matrix/$f has no level in report/: add it to REPORT_LEVELS in tests/arch/layers.sh"
	fi
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
		if [ "$from:$to" = report:report ] && [ -n "$lf" ]; then
			lt=$(report_level "$target")
			if [ -z "$lt" ]; then
				echo "matrix/$f includes \"$inc\" (matrix/$target), which has no level in report/: add it to REPORT_LEVELS in tests/arch/layers.sh"
			elif [ "${lt%% *}" -gt "${lf%% *}" ]; then
				echo "matrix/$f includes \"$inc\" (matrix/$target): report/ level ${lf#* } must not include level ${lt#* }, which is above it"
			fi
		fi
	done
done > "${TMPDIR:-/tmp}/layers.$$"
for f in $(echo "$REPORT_LEVELS" | awk 'NF { for (i = 2; i <= NF; i++) print $i }'); do
	[ -f "report/$f" ] || echo "REPORT_LEVELS in tests/arch/layers.sh names report/$f, which does not exist"
done >> "${TMPDIR:-/tmp}/layers.$$"
bad=$(wc -l < "${TMPDIR:-/tmp}/layers.$$")
cat "${TMPDIR:-/tmp}/layers.$$"
rm -f "${TMPDIR:-/tmp}/layers.$$"
if [ "$bad" -ne 0 ]; then
	echo "layers.sh: $bad include(s) break the layering of matrix/" >&2
	exit 1
fi
echo "layers.sh: matrix/ includes follow base <- plan <- report <- run, and report/ its $(echo "$REPORT_LEVELS" | grep -c .) levels"
