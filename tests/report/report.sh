# matrix report on a run with known answers (tests/report/engine.sh):
# effects, interactions, improvements, best configuration and scaling must be
# recovered exactly (golden tables), every figure drawn, the pages written;
# the tables' CSV files keep every digit, the pages show 3.
. "$top_srcdir/tests/setup"
golden=$top_srcdir/tests/report/golden
sed "s|@ENGINE@|$top_srcdir/tests/report/engine.sh|" "$top_srcdir/tests/report/known.yaml.in" > known.yaml
"$MATRIX" run known.yaml --out run > run.txt 2> run.err || [ $? = 1 ] || fail "run failed: $(cat run.err)"
expect_status 0 "$MATRIX" report run > out.txt 2> err.txt
expect_grep "run/report.html" out.txt "report prints where the page is"
# the golden files hold 6 significant digits, the tables every digit (see
# below): both compared at the golden files' precision
g6() {
	awk -F, -v OFS=, '{ for (i = 1; i <= NF; i++) if ($i ~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/) $i = sprintf("%.6g", $i); print }' "$1"
}
for t in effects interactions improvements improvements_1 best scaling failures; do
	g6 "$golden/$t.csv" > golden.csv
	g6 "run/tables/$t.csv" > got.csv
	cmp golden.csv got.csv || { diff golden.csv got.csv >&2; fail "tables/$t.csv differs from the golden file"; }
done
# the known answers, spelled out (at 6 significant digits: 1.5000000000000002
# is a gain of 1.5 computed in floating point)
mkdir six
for t in effects interactions improvements best scaling; do g6 "run/tables/$t.csv" > "six/$t.csv"; done
expect_grep '^A,off,on,B,off,12,1.5,1.5,1.5,' six/interactions.csv "A buys x1.5 when B=off"
expect_grep '^A,off,on,B,on,11,3,3,3,' six/interactions.csv "A buys x3 when B=on"
expect_grep '^C,x,y,22,1,1,1,' six/effects.csv "C buys nothing"
expect_grep '^model=small,.*,A=on B=on gpus=4,[0-9a-f]*,no$' six/best.csv "C=x and C=y tie: no clear winner"
expect_grep '^model=big,.*,A=on B=on gpus=4,[0-9a-f]*,yes$' six/best.csv "one best point: a clear winner"
expect_grep '^A,off,on,model=small B=off,6,.*,50,' six/improvements.csv "A: +50 % at B=off"
expect_grep '^A,off,on,model=small B=on,6,.*,200,' six/improvements.csv "A: +200 % at B=on"
# the tables keep every digit: B's gain is sqrt(2) (1 and 2 over its
# matched pairs), not 1.41421
awk -F, '$1 == "B" { d = $5 - sqrt(2); if (d < 0) d = -d; found = 1; ok = d < 1e-12 } END { exit !(found && ok) }' run/tables/effects.csv ||
	fail "tables/effects.csv: B's gain is not sqrt(2) to 12 digits: $(grep '^B,' run/tables/effects.csv)"
# report.md opens with the per-point table (issue 21, item 2): the factors
# that vary, the metric, its 95% interval, the status, every point (the
# failures too), numbers with 3 significant digits; the CSV keeps them all
expect_eq "$(grep -m1 '^## ' run/report.md)" "## Points" "report.md opens with the points"
expect_grep '^| model | A | B | C | gpus | throughput (samples/s) | 95% interval | status |$' run/report.md "per-point header"
pp=$(sed -n '/^## Points/,/^## /p' run/report.md | grep '^| [a-z]* | o' )
expect_eq "$(echo "$pp" | wc -l)" "$(($(wc -l < run/results.csv) - 1))" "a row per point"
expect_eq "$(echo "$pp" | head -1)" "| small | off | off | x | 1 | 100 | 98 .. 102 | ok |" "first point: the recipe's level order"
echo "$pp" | grep -q '| big | off | on | y | 4 |  |  | unsupported |$' || fail "a failure in the per-point table: $(echo "$pp" | grep big | head -3)"
echo "$pp" | grep -q '[0-9]\.[0-9]\{3\}\|[1-9][0-9]\.[0-9]\{2\}\|[1-9][0-9][0-9]\.[0-9]' && fail "more than 3 significant digits: $(echo "$pp" | head -3)"
expect_eq "$(head -1 run/tables/per_point.csv)" "model,A,B,C,gpus,throughput (samples/s),95% interval,status" "tables/per_point.csv"
grep -q '<h2 id="points">Points</h2>' run/report.html || fail "report.html has no per-point table"
[ "$(grep -n 'id="points"' run/report.html | cut -d: -f1)" -lt "$(grep -n 'id="quality"' run/report.html | tail -1 | cut -d: -f1)" ] ||
	fail "report.html does not open with the points"
# figures: every one drawn, svg and png, not empty
for f in scatter_model_A scatter_model_B normalised bars_model_B scaling effects best; do
	[ -s "run/plots/$f.svg" ] || fail "plots/$f.svg missing or empty"
	[ -s "run/plots/$f.png" ] || fail "plots/$f.png missing or empty"
	[ -s "run/plots/$f.gp" ] || fail "plots/$f.gp missing"
	expect_grep "$f" run/report.md "report.md shows $f"
done
expect_eq "$(grep -c '<svg' run/report.html)" 7 "inline SVGs in report.html"
# best.png carries intervals as the bars do (issue 21): whiskers on both bars
# (+-2 %: 100 / 1.02 .. 100 * 1.02), the gain x10.8 and its 95 % interval
# from both points' (exp(+-sqrt(2) ln 1.02): 10.5..11.1) above them
printf '0\t100\t98.0392\t102\t1080\t1058.82\t1101.6\t1101.6\t×10.8\t10.5..11.1\tsmall\n' > best.want
grep -v '^#' run/plots/best.dat | head -1 > best.got
cmp best.want best.got || fail "best.dat: got '$(cat best.got)'"
expect_grep '^set style histogram errorbars' run/plots/best.gp "best.gp draws whiskers"
expect_grep 'using 2:3:4:xtic(11) .*title "baseline"' run/plots/best.gp "baseline bars with their interval"
expect_grep 'using 5:6:7 .*title "optimal"' run/plots/best.gp "optimal bars with their interval"
expect_grep 'using 0:8:10 with labels' run/plots/best.gp "the gain's interval drawn"
# the effects figure too: each geometric mean with its 95% interval as
# whiskers, the ends those of tables/effects.csv (gpus 1 -> 4: x3.6,
# 3.57316..3.62705, the largest effect, row 0)
expect_eq "$(awk 'BEGIN { RS = ""; FS = "\n" } NR == 2 { print $1 }' run/plots/effects.dat)" "$(printf '0\t3.6\t3.57316\t3.62705')" "effects.dat: gpus' geometric mean and its interval"
awk -F, 'NR > 1 { print $5, $8, $9 }' six/effects.csv > eff.csv.txt
awk 'BEGIN { RS = ""; FS = "\n" } NR == 2 { for (i = 1; i <= NF; i++) { split($i, c, "\t"); print c[2], c[3], c[4] } }' run/plots/effects.dat > eff.dat.txt
[ "$(wc -l < eff.dat.txt)" -ge 4 ] || fail "effects.dat: fewer than 4 effects drawn"
grep -vxF -f eff.csv.txt eff.dat.txt > eff.odd.txt && fail "effects.dat: means and intervals not in tables/effects.csv: $(cat eff.odd.txt)"
expect_grep 'index 1 using 2:1:3:4 with xerrorbars .*title "geometric mean, 95% interval"' run/plots/effects.gp "effects.gp draws the intervals"
grep -q 'geometric means\? without an interval' run/report.md && fail "the effects caption counts missing intervals where every mean has one"
# and the scatters: each dot with its 95% interval (columns 4 and 5, 100
# +-2 %: 98.0392..102), the normalised one with the gain's (from both
# points'; the baseline's gain of 1 has none)
expect_eq "$(grep -v '^#' run/plots/scatter_model_A.dat | grep . | head -1 | cut -f2,4,5)" "$(printf '100\t98.0392\t102')" "scatter: the first dot's interval"
expect_grep 'using 1:2:4:5 with yerrorbars' run/plots/scatter_model_A.gp "the scatter draws the intervals"
expect_grep 'using 1:2:4:5 with yerrorbars' run/plots/normalised.gp "the normalised scatter draws the intervals"
awk -F'\t' 'NF == 5 { n++; if (!($4 <= $2 && $2 <= $5)) bad = 1; if ($4 < $2) w++; if ($4 == $2 && $2 == 1) one++ }
	END { exit !(n == 46 && !bad && w > 0 && one > 0) }' run/plots/normalised.dat ||
	fail "normalised.dat: every dot within its interval, some with whiskers, the baselines without"
# scaling: each throughput with its 95% interval (the step's, +-2 %), the
# scale factor's from both points' (0.95 * exp(+-sqrt(2) ln 1.02)), drawn as
# whiskers and said so in the caption
expect_eq "$(grep -v '^#' run/plots/scaling.dat | sed -n 2p)" "$(printf '2\t190\t200\t0.9500\t186.275\t193.8')" "scaling.dat: a point and its interval"
expect_grep '^model=small A=off B=off C=x,2,190,186.275,193.8,200,0.95,0.923764,0.976981$' six/scaling.csv "scaling.csv: the scale factor's interval"
expect_grep 'index 0 using 1:2:5:6 with yerrorbars' run/plots/scaling.gp "scaling.gp draws the intervals"
expect_grep "whiskers: the throughput's 95% interval;" run/report.md "the scaling caption says what the whiskers are"
# one process a point: the scaling table says its intervals leave out the
# variation between processes
expect_grep "[0-9]* of the [0-9]* scale factors compare points measured in one process each (ci_kind within)" run/report.md "the scaling table's within-process note"
expect_eq "$(grep -c 'http://\|https://' run/report.html | tr -d ' ')" "$(grep -c 'xmlns' run/report.html | tr -d ' ')" "no link to the network but SVG namespaces"
expect_grep 'big with B needs more memory' run/report.html "failures listed in the page"
expect_grep 'Okabe\|#0072B2' run/plots/scatter_model_A.gp "colour-blind-safe palette"
# the effects figure's key under the plot: beside it, it took half the width
expect_grep '^set key outside center bottom' run/plots/effects.gp "effects key under the plot"
expect_grep 'samples/s' run/plots/scatter_model_A.gp "units on the axis"
# the same figures again: deterministic (jitter from ids, sorted cells)
cp run/plots/scatter_model_A.dat first.dat
"$MATRIX" report --quiet run
cmp first.dat run/plots/scatter_model_A.dat || fail "scatter data changed between two reports"
# the improvement formula, stated once: the same words in README.md, report.md and report.html
formula='improvement % = 100 * (base - new) / base on a time-like metric (lower is better: the reduction), 100 * (new - base) / base on a throughput-like metric (higher is better: the gain)'
tr -d '`' < "$top_srcdir/README.md" | tr '\n' ' ' | tr -s ' ' | grep -qF "$formula" || fail "README.md does not state the improvement formula as the code does"
tr '\n' ' ' < run/report.md | grep -qF "$formula" || fail "report.md does not state the improvement formula"
grep -qF "$formula" run/report.html || fail "report.html does not state the improvement formula"
# step time: improvement = 100 * (base - new) / base
expect_status 0 "$MATRIX" report --quiet --metric step_ms run
g6 run/tables/improvements.csv > six/improvements.csv
g6 run/tables/interactions.csv > six/interactions.csv
expect_grep '^A,off,on,model=small B=off,6,.*,33.3333,' six/improvements.csv "step time -33 %"
expect_grep '^A,off,on,model=small B=on,6,.*,66.6667,' six/improvements.csv "step time -67 %"
# the page shows 3 significant digits of it
expect_grep '^| A | off | on | model=small B=on | 6 | .* | 66.7 | ' run/report.md "3 significant digits on the page"
grep -q '66\.6667' run/report.md && fail "report.md shows 66.6667"
expect_grep '^A,off,on,B,on,11,3,3,3,' six/interactions.csv "gain is the same on times"
# a run that is still going: a torn last line is dropped, the rest reported
head -n 20 run/results.csv > part.csv && printf '4a3e0293,1,0,sm' >> part.csv
mkdir going && cp run/recipe.yaml going/ && mv part.csv going/results.csv
expect_status 0 "$MATRIX" report --quiet going
expect_grep 'still going or was interrupted' going/report.md "torn line noticed"
# throughputs of a million samples/s and more: tables/per_point.csv holds
# them with every digit, as results.csv does (not 1.23457e+06), the page with
# 3 significant digits
cat > big.yaml <<YAML
name: big
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{thr}"]
factors:
  thr: [1234567.89, 23456789.5]
YAML
"$MATRIX" run big.yaml --out big > big.txt 2>&1 || { cat big.txt >&2; fail "the run of big.yaml failed"; }
expect_eq "$(csv_col big/results.csv throughput | tr '\n' ' ')" "1234567.89 23456789.5 " "results.csv as the engine wrote"
expect_grep '^1234567\.89,1234567\.89,' big/tables/per_point.csv "per_point.csv: every digit"
expect_grep '^23456789\.5,23456789\.5,' big/tables/per_point.csv "per_point.csv: every digit"
expect_grep '^| 1234567.89 | 1.23e+06 | ' big/report.md "the page: 3 significant digits"
# more points than the pages show (100): the page says so above the table
# and names where it is whole, tables/per_point.md (the table that
# 'matrix export --format markdown' prints) and tables/per_point.csv
cat > many.yaml <<YAML
name: many
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{t}"]
factors:
  t: [$(seq -s, 1 105)]
YAML
"$MATRIX" run many.yaml --out many > many.txt 2>&1 || { cat many.txt >&2; fail "the run of many.yaml failed"; }
expect_grep '^The first 100 of 105 points; all of them in \[tables/per_point.md\](tables/per_point.md) (this table) and \[tables/per_point.csv\](tables/per_point.csv) (every digit).$' many/report.md "report.md: the cut said above the table"
expect_eq "$(sed -n '/^## Points/,/^## /p' many/report.md | grep -c '^| [0-9]')" 100 "report.md: 100 rows"
expect_grep '^5 more rows in \[tables/per_point.csv\]' many/report.md "report.md: the rest counted below the table"
expect_grep '<p class="more">The first 100 of 105 points; all of them in <a href="tables/per_point.md">' many/report.html "report.html: the cut said"
expect_eq "$(grep -c '^| [0-9]' many/tables/per_point.md)" 105 "tables/per_point.md: every point"
"$MATRIX" export many --format markdown > many.md
tail -n +5 many/tables/per_point.md | cmp -s - many.md || fail "tables/per_point.md differs from export --format markdown"
expect_eq "$(tail -n +2 many/tables/per_point.csv | wc -l)" 105 "tables/per_point.csv: every point"
! grep -q '^The first 100' big/report.md || fail "a short table said to be cut"
echo ok
