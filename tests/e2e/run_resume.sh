# Killing the runner with SIGKILL at any moment, then resuming, ends with every
# point present exactly once; a torn last row is discarded; a changed recipe is
# refused unless told; failures re-run only with --retry-failed.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: resume
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "0.0{k}"]
factors:
  k: [1, 2, 3, 4, 5, 6, 7, 8, 9]
  j: [a, b, c, d]
YAML
"$MATRIX" expand r.yaml --format csv | tail -n +2 | cut -d, -f1 | sort > plan.ids
expect_eq "$(wc -l < plan.ids)" 36 "plan size"
# kill -9 at varying moments, then resume, until done
"$MATRIX" run r.yaml --out run > /dev/null 2>&1 &
pid=$!; sleep 0.3; kill -9 $pid; wait $pid 2>/dev/null || true
for delay in 0.05 0.13 0.21 0.08 0.34 0.17 0.02 0.4; do
	"$MATRIX" run --resume run > /dev/null 2>&1 &
	pid=$!; sleep $delay; kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
done
# a torn last row, as a kill in the middle of a write leaves it
printf 'deadbeef,3,0,1,a,o' >> run/results.csv
"$MATRIX" run --resume run > out.txt 2> err.txt || fail "resume failed: $(cat err.txt)"
expect_grep "discarded a torn last row" err.txt "torn row reported"
csv_col run/results.csv id | sort > got.ids
cmp plan.ids got.ids || fail "ids after kills and resume differ from the plan"
expect_eq "$(sort got.ids | uniq -d | wc -l)" 0 "duplicate rows"
# resuming a finished run runs nothing
"$MATRIX" run --resume run > out2.txt
expect_grep "36 points" out2.txt "finished run resumes to nothing"
# a changed recipe is refused, unless --allow-changed
sed 's/^name: resume$/name: resume\ndescription: changed/' r.yaml > r2.yaml
expect_status 2 "$MATRIX" run r2.yaml --resume run 2> err3.txt
expect_grep "differs from the recipe" err3.txt "changed recipe refused"
"$MATRIX" run r2.yaml --resume run --allow-changed > /dev/null
[ -f run/recipe.prev.yaml ] || fail "the previous recipe was not kept"
# --retry-failed: failed points re-run only when asked
cat > f.yaml <<YAML
name: retry
engine: command
command: [sh, -c, 'if [ -e $work/fixed ]; then echo status=ok > "\$MATRIX_RESULT"; else exit 1; fi']
factors:
  n: [1, 2]
YAML
expect_status 1 "$MATRIX" run f.yaml --out f > /dev/null
touch fixed
expect_status 1 "$MATRIX" run --resume f > /dev/null
expect_eq "$(csv_col f/results.csv status | sort -u)" failed "not retried without --retry-failed"
"$MATRIX" run --resume f --retry-failed > /dev/null || fail "retry failed"
expect_eq "$(csv_col f/results.csv status | tr '\n' ' ')" "ok ok " "retried, each point once"
# a hand-edited row with a status matrix never writes is refused, not taken for done
sed -i '2s/,ok,/,bogus,/' f/results.csv
expect_status 2 "$MATRIX" run --resume f > /dev/null 2> bogus.err
expect_eq "$(cat bogus.err)" "matrix: 'f/results.csv' row 2 has an unknown status 'bogus' (expected ok, unsupported, failed, oom, timeout or crashed)" "unknown status"
echo ok
