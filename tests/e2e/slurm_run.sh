# The slurm executor on a real Slurm: a single-node cluster on localhost
# (tests/e2e/slurm_cluster). A 6-point study through --executor slurm has
# every point's row exactly once, with its node and job; a task run again
# (a requeue) doubles no row; SIGINT on the front end scancels its array
# (nothing left in squeue) and the directory resumes through slurm.
. "$top_srcdir/tests/setup"
. "$top_srcdir/tests/e2e/slurm_cluster"
slurm_start
cat > r.yaml <<YAML
name: slurmcube
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, "{mode}", "{k}"]
executor: {slurm: {throttle: 4}}
factors:
  mode: [ok, fail]
  k: [1, 2, 3]
YAML
"$MATRIX" expand r.yaml --format csv | tail -n +2 | cut -d, -f1 | sort > plan.ids
set +e; "$MATRIX" run r.yaml --out run --executor slurm --no-report > out.txt 2> err.txt; rc=$?; set -e
[ "$rc" = 1 ] || { cat out.txt err.txt "$S/slurmctld.log" >&2; fail "run exited $rc, expected 1 (3 failing points)"; }
expect_grep "submitted 6 points of 'slurmcube' in 'run' as slurm job [0-9]* (array 1-6, 0 GPUs per task)" out.txt "submission line"
expect_grep "matrix: 6 points in .*: 3 ok, 0 unsupported, 3 failed" out.txt "the local run's verdict"
tail -n +2 run/results.csv | cut -d, -f1 | sort > got.ids
cmp plan.ids got.ids || fail "results.csv ids differ from the plan"
expect_eq "$(csv_col run/results.csv status | sort | uniq -c | awk '{ printf "%s %s;", $1, $2 }')" "3 failed;3 ok;" "statuses"
expect_eq "$(grep -c "slurm_job=[0-9]*; slurm_task=[1-6]" run/results.csv)" 6 "job and task per row"
expect_eq "$(grep -c "node=$(hostname -s)" run/results.csv)" 6 "node per row"
# a task run a second time (a requeue after it finished) writes no second row
job=$(head -n 1 run/slurm/jobs)
sbatch --wait --array=2 --output="$work/again.out" run/slurm/task.sh > /dev/null
expect_grep "already has a row: not run again" again.out "second run of task 2"
expect_eq "$(ls run/rows)" "" "no row file from the second run"
# ... and a row file that appears anyway (two runs racing) is not merged twice
id=$(tail -n +2 run/results.csv | head -n 1 | cut -d, -f1)
"$MATRIX" run-point run "$id" > /dev/null || true  # refused: already has a row
tail -n +2 run/results.csv | head -n 1 > row.txt
{ head -n 1 run/results.csv; cat row.txt; } > "run/rows/$id.csv"
set +e; "$MATRIX" run --resume run --executor slurm --no-report > res.txt 2>&1; set -e
expect_eq "$(tail -n +2 run/results.csv | wc -l)" 6 "rows after a duplicate"
[ -z "$(squeue -h)" ] || fail "a resume of a finished run submitted something"

# SIGINT on the front end cancels its array; the directory resumes
cat > s.yaml <<YAML
name: slurmint
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "{k}"]
executor: slurm
factors:
  k: [3, 3.1, 3.2, 3.3]
YAML
"$MATRIX" run s.yaml --out run2 --no-report > int.txt 2> int.err &
pid=$!
i=0; until squeue -h -t R | grep -q .; do i=$((i + 1)); [ $i -lt 150 ] || fail "no task ever ran"; sleep 0.1; done
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
expect_eq "$rc" 130 "exit status after SIGINT"
expect_grep "interrupted by SIGINT" int.err "interrupt message"
expect_eq "$(squeue -h)" "" "squeue after the interrupt"
"$MATRIX" run --resume run2 --no-report > res2.txt 2> res2.err || { cat res2.txt res2.err int.txt int.err run2/results.csv run2/slurm/*.out >&2; fail "resume through slurm"; }
expect_eq "$(tail -n +2 run2/results.csv | cut -d, -f1 | sort | uniq | wc -l)" 4 "every point after resume"
expect_eq "$(tail -n +2 run2/results.csv | wc -l)" 4 "no doubled row after resume"
expect_eq "$(csv_col run2/results.csv status | sort -u)" ok "resumed statuses"
slurm_stop
for f in slurmctld slurmd munged; do [ ! -e "$S/$f.pid" ] || fail "$f still running"; done
echo ok
