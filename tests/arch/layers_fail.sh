#!/bin/sh
# layers_fail.sh - tests/arch/layers.sh can fail: on copies of matrix/'s
# sources, each broken in one way, it must exit 1 and name the include (or
# the file) that breaks the layering; on the unbroken copy it must pass.
. "$top_srcdir/tests/setup"
layers=$top_srcdir/tests/arch/layers.sh

# matrix/'s .c and .h files, copied once; each case breaks the copy and mends it
(cd "$top_srcdir/matrix" && find . -name '*.[ch]') | while read -r f; do
	mkdir -p "m/$(dirname "$f")"
	cp "$top_srcdir/matrix/$f" "m/$f"
done
# broken NAME FILE LINE MESSAGE: with LINE added to FILE (created when missing)
# layers.sh must exit 1 and print MESSAGE
broken() {
	if [ -f "m/$2" ]; then cp "m/$2" saved; else rm -f saved; fi
	echo "$3" >> "m/$2"
	expect_status 1 sh "$layers" m > "$1.out" 2> "$1.err"
	expect_grep "$4" "$1.out" "layers.sh on the copy broken by $1"
	expect_grep "break the layering" "$1.err" "layers.sh's verdict on $1"
	if [ -f saved ]; then mv saved "m/$2"; else rm "m/$2"; fi
}

expect_status 0 sh "$layers" m > clean.out 2>&1
expect_grep "levels" clean.out "layers.sh passes the unbroken copy"

# inside report/: a lower level includes a higher one
broken stats_up report/stats.c '#include "effects.h"' \
	'matrix/report/stats.c includes "effects.h" (matrix/report/effects.h): report/ level stats must not include level effects'
broken cellset_up report/cellset.h '#include "model.h"' \
	'report/ level cellset must not include level model'
broken tables_up report/report_tables.c '#include "pages.h"' \
	'report/ level tables must not include level pages'
# a report/ file that has no level
broken unplaced report/extra.c '#include "stats.h"' \
	'matrix/report/extra.c has no level in report/'
# across stages: report includes run, plan includes report
broken report_run report/report.c '#include "run/executor.h"' \
	'report must not include run'
broken plan_report plan/grid.c '#include "report/stats.h"' \
	'plan must not include report'
# mended: passes again
expect_status 0 sh "$layers" m > mended.out 2>&1
exit 0
