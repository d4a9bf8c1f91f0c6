# matrix report on bad input: no gnuplot (tables and pages still written,
# exit 1, the Debian package named), no results, not a run directory,
# failed rows and rows without the metric listed, not drawn.
. "$top_srcdir/tests/setup"
sed "s|@ENGINE@|$top_srcdir/tests/report/engine.sh|" "$top_srcdir/tests/report/known.yaml.in" > known.yaml
"$MATRIX" run known.yaml --out run --no-report > /dev/null 2>&1 || [ $? = 1 ] || fail "run failed"
# no gnuplot
GNUPLOT=/nonexistent/gnuplot expect_status 1 "$MATRIX" report run > out.txt 2> err.txt
expect_grep "gnuplot not found ('/nonexistent/gnuplot'): install the Debian package gnuplot-nox" err.txt "names the package"
for t in effects interactions improvements best scaling failures; do [ -s run/tables/$t.csv ] || fail "tables/$t.csv not written"; done
[ -s run/report.html ] && [ -s run/report.md ] || fail "pages not written"
expect_grep 'Figure not drawn: gnuplot not found' run/report.html "page says why"
[ ! -e run/plots/effects.svg ] || fail "an svg appeared without gnuplot"
# a template gnuplot rejects: that figure is missing and says why, the others are drawn
mkdir tmpl && cp "$top_srcdir"/plots/*.gp tmpl/ && printf 'set nonsense here\n' >> tmpl/effects.gp
rm -rf run/plots
MATRIX_PLOTS_DIR=$work/tmpl expect_status 1 "$MATRIX" report run > out2.txt 2> err2.txt
expect_grep "figure 'effects' not drawn: \"effects.gp\" line [0-9]*: unrecognized option" err2.txt "gnuplot's complaint"
[ ! -s run/plots/effects.svg ] || [ -e run/plots/effects.err ] || fail "effects drawn with a broken template"
[ -s run/plots/best.svg ] || fail "the other figures were not drawn"
expect_grep 'Figure not drawn' run/report.html "page says which figure is missing"
# not a run directory / no results
mkdir empty
expect_status 2 "$MATRIX" report empty 2> e1.txt
expect_eq "$(cat e1.txt)" "matrix: 'empty' is not a run directory (no recipe.yaml)" "no recipe"
mkdir norows && cp run/recipe.yaml norows/
expect_status 2 "$MATRIX" report norows 2> e2.txt
expect_eq "$(cat e2.txt)" "matrix: no results in 'norows' yet (results.csv is missing)" "no results.csv"
head -n 1 run/results.csv > norows/results.csv
expect_status 2 "$MATRIX" report norows 2> e3.txt
expect_eq "$(cat e3.txt)" "matrix: no results in 'norows' yet (results.csv has no rows)" "header only"
# a row without the metric and a failed row: listed, not drawn
mkdir holes && cp run/recipe.yaml holes/
awk -F, 'BEGIN { OFS = "," } NR == 2 { $11 = "" } NR == 3 { $9 = "failed"; $10 = "engine exited 1"; $11 = "" } { print }' \
	run/results.csv > holes/results.csv
expect_status 0 "$MATRIX" report --quiet holes
expect_eq "$(tail -n +2 holes/tables/failures.csv | wc -l | tr -d ' ')" 4 "failure rows (2 unsupported + 2)"
expect_grep ',ok,no throughput value$' holes/tables/failures.csv "no metric listed"
expect_grep ',failed,engine exited 1$' holes/tables/failures.csv "failure listed"
expect_eq "$(cat holes/plots/scatter_model_A.dat | grep -c .)" 44 "44 dots drawn (46 - 2)"
# NaN, infinite, negative values: failed measurements with their reason, never averaged in
mkdir badvals && cp run/recipe.yaml badvals/
awk -F, 'BEGIN { OFS = "," } NR == 2 { $11 = "nan" } NR == 3 { $11 = "inf" } NR == 4 { $11 = "-3" } { print }' \
	run/results.csv > badvals/results.csv
expect_status 0 "$MATRIX" report --quiet badvals
expect_grep ',failed,throughput is NaN$' badvals/tables/failures.csv "NaN listed"
expect_grep ',failed,throughput is infinite$' badvals/tables/failures.csv "inf listed"
expect_grep ',failed,throughput is negative (-3)$' badvals/tables/failures.csv "negative listed"
expect_eq "$(cat badvals/plots/scatter_model_A.dat | grep -c .)" 43 "43 dots drawn (46 - 3)"
# usage
expect_status 2 "$MATRIX" report 2> u.txt
expect_grep 'usage: matrix report' u.txt "usage"
echo ok
