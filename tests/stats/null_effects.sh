# Effects of factors that change nothing, measured in one process a point
# (ci_kind within): a command engine whose processes draw throughput = 1000
# samples/s x exp(0.05 z) whatever the levels (tests/stats/lognormal.sh,
# seeded per process), 128 points over 6 factors. Every effect's and nearly
# every interaction's 95% interval must hold 1 (no effect) without being
# vacuous. The intervals were propagated from the points' within-process
# intervals (+-0.5%) alone: +-0.09% for 64 pairs, and 6 of 8 effects of
# nothing were "significant" (k1 a -> b x0.994 [0.9936, 0.9953]; matrix at 6223c96). Now they
# are at least the t interval of the pairs' log gains (tests/report/
# tests/unit/report/test_effects checks the formula).
. "$top_srcdir/tests/setup"
cat > n.yaml <<YAML
name: null_effects
engine: command
command: [sh, "$top_srcdir/tests/stats/lognormal.sh"]
factors:
  trial: [1, 2, 3, 4]
  k1: [a, b]
  k2: [a, b]
  k3: [a, b]
  k4: [a, b]
  k5: [a, b]
YAML
"$MATRIX" run n.yaml --out r > r.txt 2>&1 || { cat r.txt >&2; fail "the run failed"; }
expect_eq "$(csv_col r/tables/points.csv ci_kind | sort -u)" within "one process a point"
# columns: ... gain_lo, gain_hi last
held=$(awk -F, 'NR > 1 { n++; if ($(NF-1) <= 1 && 1 <= $NF) c++ } END { print c + 0 "/" n }' r/tables/effects.csv)
expect_eq "$held" 8/8 "effects of nothing whose interval holds 1"
awk -F, 'NR > 1 && $NF / $(NF-1) > 1.1 { print "vacuous: " $0; bad = 1 } END { exit bad }' r/tables/effects.csv ||
	fail "an effect's interval wider than x1.1 (vacuous)"
awk -F, 'NR > 1 { n++; if ($(NF-1) <= 1 && 1 <= $NF) c++ } END { exit !(c >= 0.9 * n) }' r/tables/interactions.csv ||
	fail "interactions of nothing: fewer than 90% of the intervals hold 1"
echo ok
