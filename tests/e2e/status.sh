# `matrix status DIR` on local runs: counts by status, its exit status
# (0 complete, 1 complete with failures, 3 a runner holds the directory,
# 4 points missing, 2 usage or an unreadable results.csv), over the whole grid of a study run in --only
# subsets; every row names the node it ran on.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: stat
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, "{mode}", "{k}"]
factors:
  mode: [ok, fail]
  k: [1, 2]
YAML
# a study run in --only subsets: status counts the whole grid (plan.csv
# holds only the last run's points) and names each subset
"$MATRIX" run r.yaml --out ok --only mode=ok,k=1 --no-report > /dev/null
"$MATRIX" run --resume ok --only mode=ok --no-report > only.txt 2>&1
# the counts of a resume with --only are of the points it selects, said so
expect_grep "; the points --only selects: 2 of 2 points have a row: 2 ok" only.txt "a resume's counts under --only"
expect_eq "$(tail -n +2 ok/plan.csv | wc -l | tr -d ' ')" 2 "plan.csv: the last run's points"
expect_status 4 "$MATRIX" status ok > st.txt
expect_eq "$(cat st.txt)" "ok: 4 points planned (the grid of recipe.yaml)
  done          2  (2 ok)
  running       0
  pending       0
  missing       2  (no row, not queued)
  subsets  --only mode=ok,k=1 (1 point, 1 done); --only mode=ok (2 points, 2 done)
stopped: 2 points have no row: no run kept them (--only); 'matrix run --resume ok' runs them" "status of a study run in subsets"
expect_eq "$(csv_col ok/results.csv node | grep -cx "$(hostname)")" 2 "node per row"
# the same subset again adds no line; the rest of the grid completes it
"$MATRIX" run --resume ok --only mode=ok --no-report > /dev/null
"$MATRIX" run --resume ok --only mode=fail --no-report > /dev/null || true
expect_eq "$(cut -d, -f2- ok/subsets.csv | tr '\n' '|')" 'only|"mode=ok,k=1"|mode=ok|mode=fail|' "subsets.csv: each subset once"
expect_status 1 "$MATRIX" status ok > st.txt
expect_grep "^ok: 4 points planned (the grid of recipe.yaml)$" st.txt "the whole grid"
expect_grep "^  done          4  (2 ok, 2 failed)$" st.txt "every subset's rows counted"
expect_grep "^  subsets  --only mode=ok,k=1 (1 point, 1 done); --only mode=ok (2 points, 2 done); --only mode=fail (2 points, 2 done)$" st.txt "three subsets"
# a run of the whole grid: no subsets line
"$MATRIX" run r.yaml --out whole --only mode=ok --no-report > /dev/null
"$MATRIX" run --resume whole --no-report > /dev/null || true
expect_status 1 "$MATRIX" status whole > st.txt
expect_grep "^  subsets  --only mode=ok (2 points, 2 done); the whole grid$" st.txt "a subset, then the whole grid"
"$MATRIX" report --quiet whole 2> /dev/null || true
expect_grep "4 rows in results.csv of 4 planned points" whole/report.md "the report counts the whole grid"
"$MATRIX" run r.yaml --out mixed --no-report > /dev/null || true
expect_status 1 "$MATRIX" status mixed > st.txt
expect_grep "^  done          4  (2 ok, 2 failed)" st.txt "counts by status"
expect_grep "^complete: 2 points failed (run them again with 'matrix run --resume mixed --retry-failed')" st.txt "verdict with failures"
# the commands a message suggests quote the directory for the shell (a space,
# a quote: the printed command ran 'matrix run --resume my' and failed)
cp -r mixed "it's mine"
expect_status 1 "$MATRIX" status "it's mine" > st.txt
expect_grep "^complete: 2 points failed (run them again with 'matrix run --resume 'it'\\\\''s mine' --retry-failed')" st.txt "verdict quotes the directory"
cmd=$(sed -n "s/^complete: .* with '\(matrix .*\)')\$/\1/p" st.txt)
expect_eq "$cmd" "matrix run --resume 'it'\\''s mine' --retry-failed" "the suggested command"
eval "set -- $cmd"
expect_eq "$4" "it's mine" "the suggested command's directory, read by the shell"
expect_status 2 "$MATRIX" run r.yaml --out "it's mine" --no-report 2> again.err
expect_grep "resume it with 'matrix run --resume 'it'\\\\''s mine'', or choose another --out" again.err "an existing --out"
rm -rf "it's mine"
# a row lost: the run is stopped with one point missing
head -n 4 mixed/results.csv > cut.csv && mv cut.csv mixed/results.csv
expect_status 4 "$MATRIX" status mixed > st.txt
expect_grep "^  missing       1  (no row, not queued)" st.txt "missing point"
expect_grep "^stopped: 1 point has no row and nothing runs it ('matrix run --resume mixed' runs it)" st.txt "verdict when stopped"
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
# a resume's dry run meanwhile: the run would stop at the lock, and so does
# the dry run (it listed the point the other runner was running, exit 0)
expect_status 2 "$MATRIX" run --resume busy 2> lk.txt
expect_eq "$(cat lk.txt)" "matrix: 'busy' is locked by another runner (pid $pid)" "a resume of a locked directory"
expect_status 2 "$MATRIX" run --resume busy --dry-run > dry.txt 2> lk.txt
expect_eq "$(cat lk.txt)" "matrix: 'busy' is locked by another runner (pid $pid): the run would stop here" "its dry run"
expect_eq "$(cat dry.txt)" "" "no command from a dry run that would stop"
kill -INT $pid; wait $pid || true
expect_status 4 "$MATRIX" status busy > /dev/null
# usage
expect_status 2 "$MATRIX" status 2> err.txt
expect_eq "$(head -n 1 err.txt)" "matrix: status: no run directory given" "no directory"
mkdir plain
expect_status 2 "$MATRIX" status plain 2> err.txt
expect_eq "$(cat err.txt)" "matrix: 'plain' is not a run directory: it has no plan.csv and no recipe.yaml" "not a run directory"
# a directory of runs, a file of a run, a path that does not exist: each
# said as it is (they read 'not a run directory: no plan.csv and no recipe.yaml')
expect_status 2 "$MATRIX" status "$work" 2> err.txt
expect_eq "$(cat err.txt)" "matrix: '$work' is not a run directory: it holds 4 runs, the newest '$work/busy'" "a directory of runs"
expect_status 2 "$MATRIX" status ok/results.csv 2> err.txt
expect_eq "$(cat err.txt)" "matrix: 'ok/results.csv' is a file, not a run directory: its directory 'ok' is one" "a file of a run"
expect_status 2 "$MATRIX" status nowhere 2> err.txt
expect_eq "$(cat err.txt)" "matrix: 'nowhere' does not exist" "a path that does not exist"
# a run directory without its plan: what status needs, and what works
cp -r ok noplan && rm noplan/plan.csv
expect_status 2 "$MATRIX" status noplan 2> err.txt
expect_eq "$(cat err.txt)" "matrix: 'noplan' has no plan.csv, the list of points a run writes when it starts, which status counts against: 'matrix run --resume noplan' writes it again and runs what is missing, 'matrix report noplan' reads the results without it" "a run directory without plan.csv"
set +e; "$MATRIX" run --resume noplan --only mode=ok --no-report > rs.txt 2>&1; got=$?; set -e
[ "$got" -le 1 ] || { cat rs.txt >&2; fail "resume of a directory without plan.csv: exit $got"; }
[ -s noplan/plan.csv ] || fail "the resume did not write plan.csv again"
set +e; "$MATRIX" status noplan > st.txt 2>&1; got=$?; set -e
[ "$got" -le 1 ] || { cat st.txt >&2; fail "status after the resume: exit $got"; }
# a results.csv that cannot be read: no counts at all, exit 2 (it printed
# "done 0 ... missing 4 ... 'matrix run --resume' runs them", exit 4, as
# if nothing had run, while the resume itself refuses the file)
cp -r ok bad
printf 'id,status\nabc\n' >> bad/results.csv
expect_status 2 "$MATRIX" status bad > st.txt 2> err.txt
expect_eq "$(cat st.txt)" "" "no counts from an unreadable results.csv"
expect_grep "^matrix: cannot read 'bad/results.csv': .*; which points are done is unknown$" err.txt "unreadable results.csv"
expect_status 2 "$MATRIX" status ok --wait 2> err.txt
expect_eq "$(head -n 1 err.txt)" "matrix: status: unknown option '--wait'" "unknown option"
echo ok
