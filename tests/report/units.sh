# Throughputs in different units are not one quantity (issue 12): a command
# engine whose points write samples/s and tokens/s (or matrix time's runs/s
# beside an engine's samples/s) had them compared as one metric, labelled
# with the first row's unit: gains between units, "not told apart". The
# rows in another unit than the first ok row's are left out of the report,
# listed with the reason, and the unit is the first ok row's.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: units
engine: command
command: [sh, -c, 'u=samples/s; [ {k} = 3 ] && u=tokens/s; [ {k} = 1 ] && { printf "status=unsupported\nreason=no\n" > "$MATRIX_RESULT"; exit 3; }; printf "status=ok\nthroughput=100\nunit=%s\nstep_ms=1\nstep_ms_lo=0.99\nstep_ms_hi=1.01\n" $u > "$MATRIX_RESULT"']
factors:
  k: [1, 2, 3]
YAML
"$MATRIX" run r.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
expect_grep "^| 3 |  |  | left out: throughput in tokens/s, not samples/s as the other rows: not compared with them |$" run/report.md "the tokens/s point has no value in the per-point table, and says why"
expect_grep "| 3 | ok | throughput in tokens/s, not samples/s as the other rows: not compared with them |$" run/report.md "the reason"
expect_grep "1 measured with a value of throughput" run/report.md "one row measured"
expect_grep "Metric: throughput (samples/s)" run/report.md "the unit: the first ok row's"
