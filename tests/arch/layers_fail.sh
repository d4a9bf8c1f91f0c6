#!/bin/sh
# layers_fail.sh - tests/arch/layers.sh can fail: on a copy of matrix/'s
# sources it must pass; with the copy broken in six ways at once it must exit
# 1 and name every include (or file) that breaks the layering.
. "$top_srcdir/tests/setup"
layers=$top_srcdir/tests/arch/layers.sh

(cd "$top_srcdir/matrix" && find . -name '*.[ch]') | while read -r f; do
	mkdir -p "m/$(dirname "$f")"
	cp "$top_srcdir/matrix/$f" "m/$f"
done
expect_status 0 sh "$layers" m > clean.out 2>&1
expect_grep "levels" clean.out "layers.sh passes the unbroken copy"

# break FILE LINE: add LINE to FILE of the copy (created when missing)
brk() { echo "$2" >> "m/$1"; }
# inside report/: a lower level includes a higher one
brk report/stats.c '#include "effects.h"'
brk report/cellset.h '#include "model.h"'
brk report/report_tables.c '#include "pages.h"'
# a report/ file that has no level
brk report/extra.c '#include "stats.h"'
# across stages: report includes run, plan includes report
brk report/report.c '#include "run/executor.h"'
brk plan/grid.c '#include "report/stats.h"'
expect_status 1 sh "$layers" m > broken.out 2> broken.err
expect_grep 'matrix/report/stats.c includes "effects.h" (matrix/report/effects.h): report/ level stats must not include level effects' \
	broken.out "a lower level of report/ including a higher one"
expect_grep 'matrix/report/cellset.h includes "model.h" .*level cellset must not include level model' broken.out \
	"a header including a higher level"
expect_grep 'matrix/report/report_tables.c includes "pages.h" .*level tables must not include level pages' broken.out \
	"tables including pages"
expect_grep 'matrix/report/extra.c has no level in report/' broken.out "a file with no level"
expect_grep 'matrix/report/report.c includes "run/executor.h" .*report must not include run' broken.out \
	"report including run"
expect_grep 'matrix/plan/grid.c includes "report/stats.h" .*plan must not include report' broken.out \
	"plan including report"
expect_grep "layers.sh: 6 include(s) break the layering" broken.err "layers.sh's verdict"
exit 0
