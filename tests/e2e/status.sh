# `matrix status DIR` on local runs: counts by status, its exit status
# (0 complete, 1 complete with failures, 3 a runner holds the directory,
# 4 points missing, 2 usage); every row names the node it ran on.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: stat
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, "{mode}", "{k}"]
factors:
  mode: [ok, fail]
  k: [1, 2]
YAML
"$MATRIX" run r.yaml --out ok --only mode=ok --no-report > /dev/null
expect_status 0 "$MATRIX" status ok > st.txt
expect_eq "$(cat st.txt)" "ok: 2 points planned (plan.csv)
  done          2  (2 ok)
  running       0
  pending       0
  missing       0  (no row, not queued)
complete: every planned point has a row" "status of a complete run"
expect_eq "$(csv_col ok/results.csv node | grep -cx "$(hostname)")" 2 "node per row"
"$MATRIX" run r.yaml --out mixed --no-report > /dev/null || true
expect_status 1 "$MATRIX" status mixed > st.txt
expect_grep "^  done          4  (2 ok, 2 failed)" st.txt "counts by status"
expect_grep "^complete: 2 points failed (run them again with 'matrix run --resume mixed --retry-failed')" st.txt "verdict with failures"
# a row lost: the run is stopped with one point missing
head -n 4 mixed/results.csv > cut.csv && mv cut.csv mixed/results.csv
expect_status 4 "$MATRIX" status mixed > st.txt
expect_grep "^  missing       1  (no row, not queued)" st.txt "missing point"
expect_grep "^stopped: 1 points have no row and nothing runs them ('matrix run --resume mixed' runs them)" st.txt "verdict when stopped"
# a runner at work
cat > s.yaml <<YAML
name: statsleep
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "{k}"]
factors:
  k: [30]
YAML
"$MATRIX" run s.yaml --out busy --no-report > /dev/null 2>&1 &
pid=$!
i=0; until [ -s busy/.lock ] && [ -s busy/plan.csv ]; do i=$((i + 1)); [ $i -lt 100 ] || fail "the run never started"; sleep 0.1; done
expect_status 3 "$MATRIX" status busy > st.txt
expect_grep "^in progress: a runner (pid $pid) holds 'busy'" st.txt "verdict while a runner works"
kill -INT $pid; wait $pid || true
expect_status 4 "$MATRIX" status busy > /dev/null
# usage
expect_status 2 "$MATRIX" status 2> err.txt
expect_eq "$(head -n 1 err.txt)" "matrix: status: no run directory given" "no directory"
expect_status 2 "$MATRIX" status "$work" 2> err.txt
expect_eq "$(cat err.txt)" "matrix: '$work' is not a run directory: it has no plan.csv" "not a run directory"
expect_status 2 "$MATRIX" status ok --wait 2> err.txt
expect_eq "$(head -n 1 err.txt)" "matrix: status: unknown option '--wait'" "unknown option"
echo ok
