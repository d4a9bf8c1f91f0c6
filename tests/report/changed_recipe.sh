# A run resumed with a recipe that lost levels (--resume --allow-changed):
# the rows left at the lost levels are not points of the report (the last
# table lists them), and their measurement quality is not the study's
# (issue 12): the quality line counted them, "2 of 4 measured rows missed
# the CI target" and a point listed as missing it, for a study of 2 points
# that both met it; the closing line of matrix run the same.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: changed
engine: command
command: [sh, -c, 'm=1; [ {k} = 2 ] && m=0; printf "status=ok\nthroughput=100\nunit=samples/s\nstep_ms=1\nstep_ms_lo=0.99\nstep_ms_hi=1.01\nci_met=%s\nrel_ci=0.01\n" $m > "$MATRIX_RESULT"']
factors:
  k: [1, 2]
  n: [a, b]
YAML
"$MATRIX" run r.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
expect_grep "measurement quality: 2 of 4 measured rows missed the CI target" run.txt "both rows at k=2 missed it"
"$MATRIX" run r.yaml k=1 --resume run --allow-changed > run2.txt 2>&1 || { cat run2.txt >&2; fail "the resume failed"; }
expect_grep "measurement quality: 0 of 2 measured rows missed the CI target" run2.txt "matrix run's line: the study's rows"
expect_grep "^Measurement quality: 0 of 2 measured rows missed the CI target" run/report.md "report.md: the study's rows"
sed -n '/^## Measurement quality/,/^## Uncertainty/p' run/report.md | grep -q "k=2" &&
	fail "a row at k=2 is in the measurement quality section: $(grep 'k=2' run/report.md | head -3)" || true
expect_grep "| ok | level '2' of factor 'k' is not in the recipe |" run/report.md "the last table says why k=2 is left out"
# the Points table: the left-out rows (k no longer varies, so its column is
# gone) say why, not "ok" beside no value
expect_grep "^| a |  |  | left out: level '2' of factor 'k' is not in the recipe |$" run/report.md "a left-out row in the Points table"
if grep -q '^| [ab] |  |  | ok |$' run/report.md; then fail "a left-out row reads as ok in the Points table"; fi
