# A process's 95% interval (the order statistics around its median step) is
# seldom symmetric about the median; a point's interval holds it whole
# (issue 12: honest uncertainty). The engine's median step 10 ms with
# 10 .. 10.4 ms (the median at the lower end, as often on a loaded CPU) was
# taken as +-0.5 * log(1.04) about the median: 9.8 .. 10.2 ms, an interval
# the engine's excludes below and that leaves out 10.2 .. 10.4 ms; for the
# throughput 98.1 .. 102 samples/s where the engine's says 96.2 .. 100.
# Now the wider side on the log scale: 9.62 .. 10.4 ms, 96.2 .. 104.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: ci_sides
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=100\nunit=samples/s\nstep_ms=10\nstep_ms_lo=10\nstep_ms_hi=10.4\n" > "$MATRIX_RESULT"', "{k}"]
factors:
  k: [1]
YAML
"$MATRIX" run r.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
# tables/points.csv: id,k,processes,value,lo,hi,unit,ci_kind
awk -F, 'NR == 2 { exit !($5 <= 100 * 10 / 10.4 + 1e-9 && $6 >= 100) }' run/tables/points.csv ||
	fail "throughput interval does not hold the engine's 96.15 .. 100: $(sed -n 2p run/tables/points.csv)"
expect_grep '^| 1 | 100 | 96.2 .. 104 | ok |$' run/report.md "report.md: the throughput's interval"
"$MATRIX" report run --metric step_ms --quiet
awk -F, 'NR == 2 { exit !($5 <= 10 && $6 >= 10.4 - 1e-9) }' run/tables/points.csv ||
	fail "step_ms interval does not hold the engine's 10 .. 10.4: $(sed -n 2p run/tables/points.csv)"
expect_grep '^| 1 | 10 | 9.62 .. 10.4 | ok |$' run/report.md "report.md: the step time's interval"
