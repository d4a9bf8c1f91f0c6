# The slurm executor under a cluster's limits (tests/e2e/slurm_cluster).
# MaxArraySize: Slurm refuses array task ids of MaxArraySize and above
# (1001 by default), so a study of more points is several arrays whose task
# script adds an offset to the task id; every point runs once, each row
# names its real task id, and a resume maps a cancelled task of an offset
# array back to its point. Here MaxArraySize=4 (task ids 1-3) and 7 points.
# SchedulerParameters' max_array_tasks (tasks in one array) splits arrays
# the same way.
# A partition's MaxTime below the time limit per task (Slurm would keep the
# tasks pending for ever, PartitionTimeLimit) is exit 2 before anything is
# written or submitted. Tasks that wait on something that will not pass
# by itself (here a partition set DOWN) show Slurm's reason in `matrix
# status` and in the following front end's progress line. sbatch reads
# --output as a pattern: a run directory with a '%' in its path runs (the
# '%' doubled; '50%a' was read as 50 and the task id, and every task failed
# unable to open its output), one with a backslash (which turns every
# pattern off) is refused before anything is written.
# A study Slurm would refuse (GPUs, memory no node has) is exit 2 with
# sbatch --test-only's reason before anything is written or submitted (its
# directory was made, a first array submitted then cancelled, and the
# resume the run suggested was refused the same way).
. "$top_srcdir/tests/setup"
. "$top_srcdir/tests/e2e/slurm_cluster"
slurm_cpus=4
slurm_conf=MaxArraySize=4
slurm_start

cat > m.yaml <<YAML
name: slurmmax
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{k}"]
executor: slurm
factors:
  k: [1, 2, 3, 4, 5, 6, 7]
YAML
"$MATRIX" run m.yaml --out m --no-report > m.txt 2> m.err || { cat m.txt m.err >&2; fail "a study past MaxArraySize"; }
expect_grep "(array 1-3, 0 GPUs per task)" m.txt "first array"
expect_grep "(array 1-3, task id + 3 = plan index, 0 GPUs per task)" m.txt "second array"
expect_grep "(array 1, task id + 6 = plan index, 0 GPUs per task)" m.txt "third array"
expect_eq "$(tail -n +2 m/results.csv | cut -d, -f2 | sort -n | tr '\n' ' ')" "1 2 3 4 5 6 7 " "every plan index once"
# each row: the point of its plan index (k = index here), its own task id
expect_eq "$(csv_col m/results.csv k | sort -n | tr '\n' ' ')" "1 2 3 4 5 6 7 " "levels"
for i in 1 2 3 4 5 6 7; do
	row=$(awk -F, -v i=$i '$2 == i' m/results.csv)
	expect_eq "$(echo "$row" | cut -d, -f3-4)" "0,$i" "level of plan index $i"
	echo "$row" | grep -q "slurm_task=$(( (i - 1) % 3 + 1 ))" || fail "plan index $i: task id: $row"
done
expect_eq "$(awk '{ print $2 }' m/slurm/jobs | tr '\n' ' ')" " 3 6 " "offsets in slurm/jobs"

# detached, the second array's last task cancelled while it waits: status
# counts it missing, the resume submits that point alone, in an array of
# its offset
cat > n.yaml <<YAML
name: slurmmaxd
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "{k}"]
executor: {slurm: {throttle: 1}}
factors:
  k: [0.5, 0.6, 0.7, 0.8, 0.9, 1]
YAML
"$MATRIX" run n.yaml --out n --detach > n1.txt
job2=$(awk 'NR == 2 { print $1 }' n/slurm/jobs)
expect_eq "$(awk 'NR == 2 { print $2 }' n/slurm/jobs)" 3 "the second array's offset"
scancel "${job2}_3"
i=0; while [ -n "$(squeue -h -n matrix-slurmmaxd)" ]; do i=$((i + 1)); [ $i -lt 300 ] || fail "the jobs never ended"; sleep 0.1; done
expect_status 4 "$MATRIX" status n > st.txt
expect_grep "^  done *5  (5 ok)" st.txt "status: done"
expect_grep "^  missing *1 " st.txt "status: missing"
"$MATRIX" run --resume n --no-report > n2.txt 2> n2.err || { cat n2.txt n2.err >&2; fail "resume past MaxArraySize"; }
expect_grep "submitted 1 point of 'slurmmaxd' in 'n' as slurm job [0-9]* (array 3, task id + 3 = plan index," n2.txt "the cancelled point submitted again"
expect_eq "$(tail -n +2 n/results.csv | cut -d, -f2 | sort -n | tr '\n' ' ')" "1 2 3 4 5 6 " "every point once after the resume"
expect_eq "$(csv_col n/results.csv status | sort -u)" ok "statuses after the resume"
awk -F, '$2 == 6' n/results.csv | grep -q "slurm_task=3" || fail "plan index 6: its task id"

# the time limit per task (measure.timeout 300 s + grace + 60 s) over the
# partition's MaxTime of 2 minutes
scontrol update PartitionName=debug MaxTime=2
cat > p.yaml <<YAML
name: slurmpart
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{k}"]
executor: slurm
factors:
  k: [1, 2]
YAML
expect_status 2 "$MATRIX" run p.yaml --out p --detach 2> p.err
expect_grep "^matrix: run: the time limit per task, 0:06:05 (measure.timeout 300 s + grace 5 s + 60 s), is over the MaxTime of partition 'debug' (0:02:00): Slurm would keep the tasks pending for ever; lower measure.timeout, set executor.slurm.time, or choose another partition$" p.err "MaxTime"
[ ! -e p ] || fail "a refused run made its directory"
expect_eq "$(squeue -h -n matrix-slurmpart)" "" "nothing submitted"
sed -i 's/^executor: slurm$/executor: {slurm: {time: 3m}}/' p.yaml
expect_status 2 "$MATRIX" run p.yaml --out p --detach 2> p.err
expect_grep "executor.slurm.time 0:03:00, is over the MaxTime of partition 'debug' (0:02:00)" p.err "MaxTime and executor.slurm.time"
# a comma list: each partition must exist; one of them long enough will do
scontrol create PartitionName=second Nodes="$(hostname -s)" MaxTime=INFINITE
sed -i 's/time: 3m/partition: "debug,nope"/' p.yaml
expect_status 2 "$MATRIX" run p.yaml --out p --detach 2> p.err
expect_grep "^matrix: run: slurm has no partition 'nope' (see 'sinfo')$" p.err "a comma list with an unknown partition"
sed -i 's/debug,nope/debug,second/' p.yaml
"$MATRIX" run p.yaml --out p2 --detach > p2.txt 2> p.err || { cat p.err >&2; fail "a comma list of partitions"; }
scancel -n matrix-slurmpart
sed -i 's/partition: "debug,second"/time: 2m/' p.yaml
# within it, the study runs
sed -i 's/time: 3m/time: 2m/' p.yaml
"$MATRIX" run p.yaml --out p --no-report > p.txt 2>&1 || { cat p.txt >&2; fail "a time limit within MaxTime"; }
expect_eq "$(csv_col p/results.csv status | tr '\n' ' ')" "ok ok " "statuses within MaxTime"

# a partition down: the tasks wait, and status and the front end say why
scontrol update PartitionName=debug State=DOWN
sed -i 's/name: slurmpart/name: slurmdown/' p.yaml
"$MATRIX" run p.yaml --out q --detach > q1.txt
expect_status 3 "$MATRIX" status q > q2.txt
expect_grep "^  pending *2  (waiting: PartitionDown)$" q2.txt "status of tasks waiting on a partition down"
if command -v script > /dev/null; then
	script -qec "stty cols 200; '$MATRIX' run --resume q --no-report" /dev/null > q3.txt 2>&1 &
	pid=$!
	i=0; until grep -q "pending (PartitionDown)" q3.txt; do
		i=$((i + 1)); [ $i -lt 100 ] || { cat q3.txt >&2; fail "no reason in the progress line"; }; sleep 0.1
	done
	scontrol update PartitionName=debug State=UP
	wait $pid || { cat q3.txt >&2; fail "the followed run"; }
else
	echo "no script(1): the progress line not checked"
	scontrol update PartitionName=debug State=UP
	"$MATRIX" run --resume q --no-report > q3.txt 2>&1
fi
expect_eq "$(csv_col q/results.csv status | tr '\n' ' ')" "ok ok " "statuses once the partition is up"

# run directories that sbatch's --output patterns would misread
"$MATRIX" run p.yaml --out '50%a' --no-report > pc.txt 2>&1 || { cat pc.txt >&2; fail "a run directory with a '%'"; }
expect_eq "$(csv_col '50%a/results.csv' status | tr '\n' ' ')" "ok ok " "statuses under a '%'"
[ -s "50%a/slurm/$(cat '50%a/slurm/jobs')_1.out" ] || fail "no task output under a '%': $(ls '50%a/slurm')"
expect_status 2 "$MATRIX" run p.yaml --out 'b\a' --no-report 2> bs.err
expect_grep "^matrix: run: the slurm executor cannot name its task outputs under '$work/b\\\\a': sbatch reads a backslash in --output as 'no %A_%a' (every task would write one file); choose another --out$" bs.err "a backslash"
[ ! -e 'b\a' ] || fail "a refused run made its directory"

# what no node has: GPUs (the node has none), memory
cat > gp.yaml <<YAML
name: slurmgpu
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{gpus}"]
executor: {slurm: {time: 1m}}
factors:
  gpus: [0, 1]
YAML
expect_status 2 "$MATRIX" run gp.yaml --out gp 2> gp.err
expect_grep "^matrix: run: sbatch --test-only refuses the study (exit status 1): sbatch: error: Invalid generic resource (gres) specification: nothing was written or submitted; change the recipe's executor.slurm settings (partition, account, qos, gpus, cpus, mem, extra)$" gp.err "GPUs no node has"
[ ! -e gp ] || fail "a refused study made its directory"
sed -i 's/time: 1m/time: 1m, mem: 100000G/; s/gpus: \[0, 1\]/gpus: [0]/' gp.yaml
expect_status 2 "$MATRIX" run gp.yaml --out gp 2> gp.err
expect_grep "^matrix: run: sbatch --test-only refuses the study (exit status 1): allocation failure: Requested node configuration is not available: nothing was written" gp.err "memory no node has"
[ ! -e gp ] || fail "a refused study made its directory"
expect_eq "$(squeue -h -n matrix-slurmgpu)" "" "nothing submitted"

# max_array_tasks=2: arrays of 2 tasks (the one array of 4 was refused)
sed -i 's/^SchedulerParameters=sched_interval=1$/SchedulerParameters=sched_interval=1,max_array_tasks=2/' "$SLURM_CONF"
scontrol reconfigure
i=0; until scontrol show config | grep -q "max_array_tasks=2"; do i=$((i + 1)); [ $i -lt 50 ] || fail "reconfigure"; sleep 0.1; done
cat > mt.yaml <<YAML
name: slurmtasks
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{k}"]
executor: {slurm: {time: 1m}}
factors:
  k: [1, 2, 3, 4]
YAML
"$MATRIX" run mt.yaml --out mt --no-report > mt.txt 2>&1 || { cat mt.txt >&2; fail "a study past max_array_tasks"; }
expect_grep "(array 1-2, 0 GPUs per task)" mt.txt "first array of 2"
expect_grep "(array 1-2, task id + 2 = plan index, 0 GPUs per task)" mt.txt "second array of 2"
expect_eq "$(tail -n +2 mt/results.csv | cut -d, -f2 | sort -n | tr '\n' ' ')" "1 2 3 4 " "every point once under max_array_tasks"
slurm_stop
echo ok
