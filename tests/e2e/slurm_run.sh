# The slurm executor on a real Slurm: a single-node cluster on localhost
# (tests/e2e/slurm_cluster). A 6-point study through --executor slurm has
# every point's row exactly once, with its node, job and task; a task run
# again (a requeue) doubles no row; SIGINT (and SIGTERM) on the front end scancels its
# array (nothing left in squeue) and the directory resumes through slurm.
# Detached runs: --detach submits and returns; `matrix status` counts done,
# running, pending and missing points and says which of complete, in
# progress or stopped the run is in its exit status; a resume while tasks
# are queued or running follows them and submits none twice, and submits
# again only a task that was cancelled; a local resume then is refused. A
# task killed at its Slurm time limit is a timeout row with the Slurm state
# in its reason: the limit is 1 minute (Slurm's least), brought forward with
# `scontrol update EndTime=` (as an admin may) so that slurmctld's next check
# of time limits (every 30 s) kills it while the rest of the test runs. The
# node has 4 CPUs (more than the machine may have: the tasks mostly sleep).
. "$top_srcdir/tests/setup"
. "$top_srcdir/tests/e2e/slurm_cluster"
slurm_cpus=4
slurm_start

# the time limit: a point that sleeps past its task's 1-minute limit
cat > t.yaml <<YAML
name: slurmlimit
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "{k}"]
executor: {slurm: {time: 1s}}
measure: {timeout: 10m}
factors:
  k: [300]
YAML
"$MATRIX" run t.yaml --out tl --detach > tl.txt
expect_grep "submitted 1 point of 'slurmlimit' in 'tl' as slurm job [0-9]* (array 1" tl.txt "submission"
expect_grep "detached: 1 of 1 point is queued in slurm job [0-9]*; follow it with 'matrix status tl'" tl.txt "detach line"
tjob=$(cat tl/slurm/jobs)
expect_eq "$(squeue -h -j "$tjob" -o %l)" 1:00 "the task's time limit"
i=0; until [ "$(squeue -h -j "$tjob" -o %t)" = R ]; do i=$((i + 1)); [ $i -lt 300 ] || fail "the limited task never ran"; sleep 0.1; done
# (an end time not after the start is refused: try again a second later)
i=0; until scontrol update JobId="${tjob}_1" EndTime="$(date +%Y-%m-%dT%H:%M:%S)" 2> end.err; do
	i=$((i + 1)); [ $i -lt 5 ] || fail "scontrol update EndTime: $(cat end.err)"; sleep 1
done

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
expect_grep "matrix: 6 points ran in .*: 3 ok, 0 unsupported, 3 failed" out.txt "the local run's verdict"
tail -n +2 run/results.csv | cut -d, -f1 | sort > got.ids
cmp plan.ids got.ids || fail "results.csv ids differ from the plan"
expect_eq "$(csv_col run/results.csv status | sort | uniq -c | awk '{ printf "%s %s;", $1, $2 }')" "3 failed;3 ok;" "statuses"
expect_eq "$(grep -c "slurm_job=[0-9]*; slurm_task=[1-6]" run/results.csv)" 6 "job and task per row"
expect_eq "$(csv_col run/results.csv node | grep -cx "$(hostname -s)")" 6 "node per row"
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
[ -z "$(squeue -h -n matrix-slurmcube)" ] || fail "a resume of a finished run submitted something"

# SIGINT on the front end cancels its array; the directory resumes
cat > s.yaml <<YAML
name: slurmint
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "{k}"]
executor: slurm
factors:
  k: [3, 3.1, 3.2, 3.3]
YAML
# interrupt SIG DIR: run s.yaml into DIR, send SIG to the front end once a
# task runs; it must exit 130 saying so and leave nothing in the queue
interrupt() {
	"$MATRIX" run s.yaml --out "$2" --no-report > "$2.txt" 2> "$2.err" &
	pid=$!
	i=0; until squeue -h -t R -n matrix-slurmint | grep -q .; do i=$((i + 1)); [ $i -lt 150 ] || fail "no task ever ran ($1)"; sleep 0.1; done
	kill -"$1" $pid
	set +e; wait $pid; rc=$?; set -e
	expect_eq "$rc" 130 "exit status after SIG$1"
	expect_grep "^matrix: interrupted by SIG$1: .*resume with: matrix run --resume $2$" "$2.err" "interrupt message (SIG$1)"
	expect_eq "$(squeue -h -n matrix-slurmint)" "" "squeue after SIG$1"
}
interrupt INT run2
"$MATRIX" run --resume run2 --no-report > res2.txt 2> res2.err || { cat res2.txt res2.err run2.txt run2.err run2/results.csv run2/slurm/*.out >&2; fail "resume through slurm"; }
expect_eq "$(tail -n +2 run2/results.csv | cut -d, -f1 | sort | uniq | wc -l)" 4 "every point after resume"
expect_eq "$(tail -n +2 run2/results.csv | wc -l)" 4 "no doubled row after resume"
expect_eq "$(csv_col run2/results.csv status | sort -u)" ok "resumed statuses"
# SIGTERM (what a batch system or a service manager sends) does the same:
# the array cancelled, the directory left to resume
interrupt TERM run3
expect_status 4 "$MATRIX" status run3 > term_status.txt
expect_grep "^  missing *[1-4] " term_status.txt "status after SIGTERM: the points left are missing"

# four points, one at a time: detached, resumed while queued (nothing
# submitted again), one task cancelled, resumed again (that one only)
cat > d.yaml <<YAML
name: slurmdetach
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "{k}"]
executor: {slurm: {throttle: 1}}
factors:
  k: [1, 1.1, 1.2, 1.3]
YAML
"$MATRIX" run d.yaml --out dd --detach > d1.txt
expect_grep "detached: 4 of 4 points are queued in slurm job" d1.txt "detach line"
job=$(cat dd/slurm/jobs)
# a local resume while its tasks are queued is refused
expect_status 2 "$MATRIX" run --resume dd --executor local --no-report 2> local.err
expect_grep "'dd' has [1-4] slurm tasks\{0,1\} still queued or running (jobs $job)" local.err "local resume while queued"
expect_status 3 "$MATRIX" status dd > st1.txt
expect_grep "^  missing *0 " st1.txt "status while queued: nothing missing"
expect_grep "^in progress: " st1.txt "status verdict while queued"
queued=$(awk '$1 == "running" || $1 == "pending" || $1 == "done" { n += $2 } END { print n }' st1.txt)
expect_eq "$queued" 4 "done + running + pending while queued"
"$MATRIX" run --resume dd --detach > d2.txt
expect_grep "point.\{0,1\} of 'dd' [a-z]* still queued or running in slurm job $job: followed, not submitted again" d2.txt "resume while queued"
if grep -q "^matrix: submitted" d2.txt; then fail "a resume while queued submitted again: $(cat d2.txt)"; fi
expect_eq "$(wc -l < dd/slurm/jobs)" 1 "jobs after a resume while queued"
# the last task cancelled: the run stops with one point missing
scancel "${job}_4"
i=0; while [ -n "$(squeue -h -j "$job")" ]; do i=$((i + 1)); [ $i -lt 300 ] || fail "job $job never ended"; sleep 0.1; done
expect_status 4 "$MATRIX" status dd > st2.txt
expect_grep "^  done *3  (3 ok)" st2.txt "status: done"
expect_grep "^  missing *1 " st2.txt "status: missing"
expect_grep "^stopped: 1 point has no row and nothing runs it ('matrix run --resume dd' runs it)" st2.txt "status verdict when stopped"
expect_grep "^  rows *3  in dd/rows" st2.txt "rows not merged yet"
"$MATRIX" run --resume dd --no-report > d3.txt 2> d3.err || { cat d3.txt d3.err >&2; fail "resume after a cancel"; }
expect_grep "submitted 1 point of 'slurmdetach' in 'dd' as slurm job [0-9]* (array 4," d3.txt "only the cancelled point submitted again"
expect_eq "$(tail -n +2 dd/results.csv | cut -d, -f1 | sort -u | wc -l) $(tail -n +2 dd/results.csv | wc -l)" "4 4" "every point once"
expect_eq "$(csv_col dd/results.csv status | sort -u)" ok "statuses"
expect_status 0 "$MATRIX" status dd > st3.txt
expect_grep "^complete: every planned point has a row" st3.txt "status when complete"

# the time-limited task: the resume follows it until Slurm kills it
"$MATRIX" run --resume tl --no-report > t2.txt 2> t2.err && rc=0 || rc=$?
expect_eq "$rc" 1 "exit status of a run with a timeout"
grep -q "1 point of 'tl' is still queued or running in slurm job $tjob: followed" t2.txt ||
	expect_grep "1 tasks of earlier slurm jobs ended without a row" t2.txt "resume collects the limited task"
expect_eq "$(csv_col tl/results.csv status)" timeout "status at the time limit"
expect_grep "slurm: TIMEOUT: killed at the task's time limit" tl/results.csv "reason"
expect_grep "slurm_job=$tjob; slurm_task=1; slurm_state=TIMEOUT" tl/results.csv "job, task and state"
expect_eq "$(csv_col tl/results.csv node)" "$(hostname -s)" "node"
slurm_stop
for f in slurmctld slurmd munged; do [ ! -e "$S/$f.pid" ] || fail "$f still running"; done
echo ok
