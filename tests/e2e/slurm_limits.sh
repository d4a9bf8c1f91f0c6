# The slurm executor under a cluster's limits (tests/e2e/slurm_cluster).
# MaxArraySize: Slurm refuses array task ids of MaxArraySize and above
# (1001 by default), so a study of more points is several arrays whose task
# script adds an offset to the task id; every point runs once, each row
# names its real task id, and a resume maps a cancelled task of an offset
# array back to its point. Here MaxArraySize=4 (task ids 1-3) and 7 points.
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
expect_grep "submitted 1 points of 'slurmmaxd' in 'n' as slurm job [0-9]* (array 3, task id + 3 = plan index," n2.txt "the cancelled point submitted again"
expect_eq "$(tail -n +2 n/results.csv | cut -d, -f2 | sort -n | tr '\n' ' ')" "1 2 3 4 5 6 " "every point once after the resume"
expect_eq "$(csv_col n/results.csv status | sort -u)" ok "statuses after the resume"
awk -F, '$2 == 6' n/results.csv | grep -q "slurm_task=3" || fail "plan index 6: its task id"
slurm_stop
echo ok
