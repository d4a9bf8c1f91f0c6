# `matrix run-point DIR ID|INDEX` runs one point as `matrix run` would and
# writes its row to DIR/rows/ID.csv; a second run of the same point does
# nothing; a resumed run merges the row files once, never doubling a row,
# even when a row file of a merged point turns up again (a requeued task).
# A report of a directory with row files not merged yet says so.
# The slurm executor's sbatch lines (--dry-run) and its recipe errors.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: point
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, "{mode}", "{k}"]
factors:
  mode: [ok, fail]
  k: [1, 2]
YAML
mkdir run && cp r.yaml run/recipe.yaml
"$MATRIX" expand r.yaml --format csv | tail -n +2 | cut -d, -f1,2 > plan.csv
id1=$(awk -F, '$2 == 1 { print $1 }' plan.csv); id3=$(awk -F, '$2 == 3 { print $1 }' plan.csv)
"$MATRIX" run-point run 1 > out1.txt
[ -s "run/rows/$id1.csv" ] || fail "no row file for point 1"
expect_eq "$(tail -n +2 "run/rows/$id1.csv" | cut -d, -f1)" "$id1" "row file's id"
expect_grep "ok" out1.txt "run-point's line"
# by id, a failing point: exit status 1, its row written all the same
expect_status 1 "$MATRIX" run-point run "$id3" > out3.txt
expect_grep ",failed,exit status 1: engine: something went wrong," "run/rows/$id3.csv" "failed row"
# a report before a front end merged them: says that they wait
expect_status 2 "$MATRIX" report run 2> rep1.err
expect_eq "$(cat rep1.err)" "matrix: warning: 2 rows that slurm tasks wrote wait in 'run/rows', not in results.csv: 'matrix run --resume run' merges them (this report leaves them out)
matrix: no results in 'run' yet (results.csv is missing)" "report with rows not merged"
# run twice: not run again
"$MATRIX" run-point run "$id1" > again.txt
expect_grep "already has a row: not run again" again.txt "second run-point"
expect_status 2 "$MATRIX" run-point run 99 2> none.txt
expect_eq "$(cat none.txt)" "matrix: run-point: 'run' has no point 99" "unknown point"
expect_status 2 "$MATRIX" run-point run x1 2> bad.txt
expect_eq "$(cat bad.txt)" "matrix: run-point: 'x1' is neither a point id (16 hex digits) nor a plan index" "bad point"
# a resume merges the two row files, runs the other two points
cp "run/rows/$id1.csv" row1.csv
set +e; "$MATRIX" run --resume run --no-report > resume.txt 2> resume.err; set -e
expect_grep "merged 2 rows that slurm tasks left in 'run/rows'" resume.err "merge message"
expect_eq "$(tail -n +2 run/results.csv | cut -d, -f1 | sort | uniq -d)" "" "no doubled row"
expect_eq "$(tail -n +2 run/results.csv | wc -l)" 4 "every point once"
expect_eq "$(ls run/rows)" "" "merged row files removed"
# a requeued task's row file arriving after the merge is dropped, not doubled
cp row1.csv "run/rows/$id1.csv"
set +e; "$MATRIX" run --resume run --no-report > /dev/null 2>&1; set -e
expect_eq "$(tail -n +2 run/results.csv | wc -l)" 4 "late duplicate not merged"
[ ! -e "run/rows/$id1.csv" ] || fail "the late duplicate was left"
expect_eq "$(csv_col run/results.csv node | sort -u)" "$(hostname)" "node recorded"
# a row file of a point results.csv has: no warning; of one it lacks: one
cp row1.csv "run/rows/$id1.csv"
"$MATRIX" report run > /dev/null 2> rep2.err || true
! grep -q "wait in" rep2.err || fail "a report warned of a row results.csv has: $(cat rep2.err)"
rm "run/rows/$id1.csv"
id2=$(awk -F, '$2 == 2 { print $1 }' plan.csv)
awk -F, -v id="$id2" 'NR == 1 || $1 == id' run/results.csv > "run/rows/$id2.csv"
awk -F, -v id="$id2" '$1 != id' run/results.csv > res.csv && mv res.csv run/results.csv
"$MATRIX" report run > /dev/null 2> rep3.err || true
expect_grep "^matrix: warning: 1 row that slurm tasks wrote waits in 'run/rows', not in results.csv: 'matrix run --resume run' merges it (this report leaves it out)$" rep3.err "report with a row not merged"

# the slurm executor's sbatch lines: one array per number of GPUs per task
cat > s.yaml <<YAML
name: sl
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{gpus}"]
executor:
  slurm: {partition: gpu, account: lab, qos: high, time: 90s, cpus: 4, mem: 8G, throttle: 2, extra: [--exclusive]}
factors:
  gpus: [0, 2]
  k: [a, b, c]
YAML
"$MATRIX" run s.yaml --out "$work/sr" --dry-run > dry.txt 2> /dev/null
common="--partition=gpu --account=lab --qos=high --time=0:01:30 --cpus-per-task=4 --mem=8G"
expect_eq "$(grep ^sbatch dry.txt)" "sbatch --parsable --job-name=matrix-sl --array=1-3%2 --output=$work/sr/slurm/%A_%a.out --ntasks=1 $common --exclusive $work/sr/slurm/task.sh
sbatch --parsable --job-name=matrix-sl --array=4-6%2 --output=$work/sr/slurm/%A_%a.out --ntasks=1 $common --gpus-per-task=2 --exclusive $work/sr/slurm/task.sh" "sbatch lines"
# --executor local overrides the recipe: no sbatch line
"$MATRIX" run s.yaml --out "$work/sr" --dry-run --executor local > dry2.txt 2> /dev/null
! grep -q ^sbatch dry2.txt || fail "sbatch line with --executor local"
expect_status 2 "$MATRIX" run s.yaml --executor pbs 2> ex.txt
expect_eq "$(head -n 1 ex.txt)" "matrix: run: --executor must be 'local' or 'slurm', not 'pbs'" "bad executor"
# recipe errors, located
cat > e.yaml <<YAML
name: e
engine: command
command: [true]
executor: {slurm: {partiton: gpu, cpus: 0, mem: lots}}
factors:
  k: [a]
YAML
expect_status 2 "$MATRIX" expand e.yaml 2> err.txt
expect_grep "e.yaml:4:20: unknown key 'partiton' in 'executor.slurm'" err.txt "unknown key"
expect_grep "e.yaml:4:41: 'executor.slurm.cpus' must be an integer from 1 to 4096" err.txt "bad cpus"
expect_grep "e.yaml:4:49: 'executor.slurm.mem' must be a size such as 4G or 500M" err.txt "bad mem"
# without sbatch on PATH: one clear error, nothing written
mkdir empty
set +e; PATH=$work/empty "$MATRIX" run s.yaml --out nos 2> nos.txt; rc=$?; set -e
expect_eq "$rc" 2 "exit status without sbatch"
expect_eq "$(cat nos.txt)" "matrix: run: the slurm executor needs 'sbatch' on PATH: run on a slurm login node, or use the local executor" "no sbatch"
[ ! -e nos ] || fail "a run directory was made without sbatch"
echo ok
