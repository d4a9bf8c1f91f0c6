# The coverage of a point's 95% interval, end to end: a command engine whose
# processes draw throughput = 1000 samples/s x exp(0.05 z) (tests/stats/
# lognormal.sh, seeded per process) is run for 40 points of 5 processes each;
# tables/points.csv must hold the true 1000 samples/s in at least 36 of the
# 40 intervals (90%; nominal 95%) without being vacuous (every interval
# narrower than x0.8..x1.25), and say ci_kind=between. The same with one
# process per point: the within-process intervals (+-0.5%) miss the truth in
# most points and say ci_kind=within.
. "$top_srcdir/tests/setup"
trials=$(seq -s ', ' 1 40)
for k in 5 1; do
	cat > r$k.yaml <<YAML
name: coverage_$k
engine: command
command: [sh, "$top_srcdir/tests/stats/lognormal.sh"]
factors:
  trial: [$trials]
repeat: $k
YAML
	"$MATRIX" run r$k.yaml --out run$k > run$k.txt 2>&1 || { cat run$k.txt >&2; fail "run with repeat $k failed"; }
done
# the noise columns: rel_ci derived from the step interval, the runner's own
rows=run5/results.csv
expect_eq "$(csv_col $rows rel_ci | sort -u)" 0.004988 "rel_ci = (hi - lo) / 2 / median"
expect_eq "$(csv_col $rows ci_met | sort -u)" 1 "ci_met"
expect_eq "$(csv_col $rows concurrent | sort -u)" 1 "one point at a time"
expect_eq "$(csv_col $rows cores | sort -u)" "$(getconf _NPROCESSORS_ONLN)" "cores"
[ -r /proc/loadavg ] && { csv_col $rows load_start | grep -qx '[0-9]*\.[0-9][0-9]' || fail "load_start not recorded"; }
expect_grep '^matrix: measurement quality: 0 of 200 measured rows missed the CI target (rel_ci 2 %); 40 points with repeats that disagree beyond their CIs' run5.txt "run-end summary line: the simulated processes spread beyond their +-0.5%"
pts=run5/tables/points.csv
expect_eq "$(head -1 $pts)" "id,trial,processes,value,lo,hi,unit,ci_kind" "points table header"
# columns: 3 processes, 5 lo, 6 hi, 8 ci_kind
cov=$(awk -F, 'NR > 1 && $5 <= 1000 && $6 >= 1000 { n++ } END { print n + 0 }' $pts)
wide=$(awk -F, 'NR > 1 && ($5 < 800 || $6 > 1250) { n++ } END { print n + 0 }' $pts)
echo "coverage with 5 processes per point: $cov of 40 intervals hold 1000 samples/s; $wide vacuous"
[ "$cov" -ge 36 ] || fail "only $cov of 40 intervals hold the truth"
expect_eq "$wide" 0 "vacuous intervals"
expect_eq "$(awk -F, 'NR > 1 && $3 == 5 && $8 == "between"' $pts | wc -l | tr -d ' ')" 40 "5 processes, ci_kind between"
cov1=$(awk -F, 'NR > 1 && $5 <= 1000 && $6 >= 1000 { n++ } END { print n + 0 }' run1/tables/points.csv)
echo "coverage with 1 process per point (within-process only): $cov1 of 40"
[ "$cov1" -le 20 ] || fail "within-process intervals held the truth in $cov1 of 40: the simulation lost its between-process noise"
expect_eq "$(awk -F, 'NR > 1 && $8 == "within"' run1/tables/points.csv | wc -l | tr -d ' ')" 40 "ci_kind within"
expect_grep 'Intervals: 0 of 40 points measured in two or more fresh processes' run1/report.md "report says the intervals are within-process"
expect_grep '^## Uncertainty' run5/report.md "method in report.md"
expect_grep 'Worked example, point ' run5/report.md "worked example"
expect_grep 'id="uncertainty"' run5/report.html "method in report.html"
expect_grep '100 \* (base - new) / base on a time-like metric' run5/report.html "improvement formula in report.html"
echo ok
