# No user string is ever gnuplot code (issue 22, item 1): factor levels and
# an engine's unit with backticks, system(), quotes, backslashes, $(), %,
# '#' and '@' are drawn as text and run nothing, in `matrix run` and in
# a later `matrix report DIR` on the same directory; every figure is drawn and
# every level is one row of the figures' data files. The same with the levels
# as panel titles (panels:) and in a --where and --panels of `matrix report`.
# A level with a line break never reaches gnuplot: the loader refuses it.
. "$top_srcdir/tests/setup"
cat > eng.sh <<SH
#!/bin/sh
printf 'status=ok\nthroughput=%s\nunit=%s\n' "\$1" 'samples/s \`touch $work/pwned.unit\`' > "\$MATRIX_RESULT"
SH
cat > r.yaml <<YAML
name: hostile
engine: command
command: [sh, $work/eng.sh, "{v}", "{lvl}"]
factors:
  lvl: ["\`touch $work/pwned.tick\`", "system(\"touch $work/pwned.system\")",
        "say \"hi\" \\\\ there \\\\ 100%s%n", "a@b@c @PLOT@ @GPVAL_PWD", "\$(touch $work/pwned.dollar)", "#hash first"]
  v: [1, 2, 4]
baseline: {v: 1}
report:
  scatter: [{x: lvl, color: v}, {x: v, color: lvl}, {x: v, panels: lvl, where: {v: [1, 4]}}]
  bars: [{x: lvl, group: v}, {x: v, group: lvl}]
YAML
figures="scatter_lvl_v scatter_v_lvl scatter_v_by_lvl_where_v normalised bars_lvl_v bars_v_lvl effects best"
check() {
	for f in $work/pwned.*; do
		[ ! -e "$f" ] || fail "$1: a string ran as a command: $f exists"
	done
	for f in $figures; do
		[ -s "run/plots/$f.svg" ] || { cat run/plots/$f.err >&2 || :; fail "$1: plots/$f.svg not drawn"; }
	done
	grep -q "pwned.system" run/plots/scatter_lvl_v.svg || fail "$1: the level is not shown as text"
	grep -q "GPVAL_PWD" run/plots/scatter_lvl_v.svg || fail "$1: the '@' level is not shown as text"
	expect_eq "$(grep -vc '^#' run/plots/bars_lvl_v.dat)" 6 "$1: one data row per level in bars_lvl_v.dat"
	expect_eq "$(grep -vc '^#' run/plots/best.dat)" 6 "$1: one data row per group in best.dat"
}
expect_status 0 "$MATRIX" run r.yaml --out run > out.txt 2> err.txt
check "matrix run"
rm -rf run/plots run/report.html run/report.md
expect_status 0 "$MATRIX" report run > out2.txt 2> err2.txt
check "matrix report"
expect_eq "$(grep -c '^set title "lvl = ' run/plots/scatter_v_by_lvl_where_v.gp)" 6 "a panel per level"
grep -qF 'set title "lvl = \043hash first"' run/plots/scatter_v_by_lvl_where_v.gp || fail "panel titles quoted"
expect_status 0 "$MATRIX" report run --where "lvl=\`touch $work/pwned.tick\`,\$(touch $work/pwned.dollar)" \
	--panels lvl > out3.txt 2> err3.txt
figures="scatter_lvl_v_where_lvl scatter_v_lvl_where_lvl scatter_v_by_lvl_where_v_lvl bars_lvl_v_where_lvl
	bars_v_lvl_where_lvl best_by_lvl_where_lvl"
check "matrix report --where --panels"
# a level with a line break would end a gnuplot string and start a command
# on the next line: the recipe loader refuses it, located, before anything
# runs (a results directory's recipe.yaml is loaded the same way by report)
cat > nl.yaml <<YAML
name: newline
engine: command
command: [sh, $work/eng.sh, "{v}"]
factors:
  lvl: [plain, "a\nset output '$work/pwned.newline'\nprint 1"]
  v: [1, 2]
YAML
expect_status 2 "$MATRIX" run nl.yaml --out nl > nl.txt 2>&1
expect_grep "^nl.yaml:5:16: level 'a...' of factor 'lvl' must be on one line" nl.txt "a level with a line break refused"
[ ! -e nl ] || fail "a refused recipe left a run directory"
mkdir nlrun && cp -r run/. nlrun/ && cp nl.yaml nlrun/recipe.yaml
expect_status 2 "$MATRIX" report nlrun > nlr.txt 2>&1
expect_grep "must be on one line" nlr.txt "report refuses a directory whose recipe has a line break in a level"
expect_grep "^matrix: cannot report on 'nlrun': its recipe.yaml does not load$" nlr.txt "report says why it stops"
[ ! -e "$work/pwned.newline" ] || fail "a level with a line break ran gnuplot code"
echo ok
