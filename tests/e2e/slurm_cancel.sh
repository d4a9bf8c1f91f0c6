# The slurm executor when Slurm, not the point, ends a task
# (tests/e2e/slurm_cluster): a task scancelled and tasks lost with their
# node (set DOWN, --no-requeue: NODE_FAIL) while the front end follows them
# leave their points without a row, as a resume after --detach leaves them
# (it submits them again); the run ends stopped (exit 1) saying which
# states and that a resume submits them, status counts them missing, and
# the resume runs each of them once. (Such tasks had a 'crashed' row, so a
# resume skipped them and only --retry-failed, which reruns every real
# failure too, ran them again.) A task that fails without a row has a
# 'crashed' row whose reason is the last line of its output, or, when it
# could not even open its output (as on a node that does not mount the run
# directory: here an --output that no node can write), says so; it named
# an output file that did not exist. One that Slurm's accounting (sacct)
# says ran out of memory has an 'oom' row.
. "$top_srcdir/tests/setup"
. "$top_srcdir/tests/e2e/slurm_cluster"
slurm_cpus=4
slurm_start
node=$(hostname -s)

cat > c.yaml <<YAML
name: slurmcancel
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "{k}"]
# (15 s: long enough that none ends on its own before Slurm ends all three,
# even on a loaded machine; 6 s once let one finish first)
executor: {slurm: {extra: [--no-requeue]}}
factors:
  k: [15, 15.1, 15.2]
YAML
"$MATRIX" run c.yaml --out c --no-report > c.txt 2> c.err &
pid=$!
i=0; until [ "$(squeue -h -t R -n matrix-slurmcancel | wc -l)" = 3 ]; do
	i=$((i + 1)); [ $i -lt 150 ] || fail "the tasks never ran"; sleep 0.1
done
job=$(cat c/slurm/jobs)
scancel "${job}_1"
i=0; while [ -n "$(squeue -h -j "${job}_1")" ]; do i=$((i + 1)); [ $i -lt 100 ] || fail "task 1 never ended"; sleep 0.1; done
scontrol update NodeName="$node" State=DOWN Reason=test
set +e; wait $pid; rc=$?; set -e
[ "$rc" = 1 ] || { cat c.txt c.err >&2; fail "the run exited $rc, expected 1"; }
expect_grep "^matrix: 3 slurm tasks ended CANCELLED, NODE_FAIL without a row: not their points' failure, so no row says they failed; a resume submits them again (their output: c/slurm/)$" c.err "the tasks Slurm ended"
expect_grep "^matrix: stopped: this invocation ran 0 points; the directory has 0 of 3 points; resume with: matrix run --resume c$" c.err "stopped"
expect_eq "$(tail -n +2 c/results.csv | wc -l)" 0 "rows of tasks Slurm ended"
expect_status 4 "$MATRIX" status c > st.txt
expect_grep "^  missing *3 " st.txt "status: missing"
# the node back, the resume runs the three points, each once
scontrol update NodeName="$node" State=RESUME 2> /dev/null || true
i=0; until [ "$(sinfo -h -o %t)" = idle ]; do i=$((i + 1)); [ $i -lt 300 ] || fail "the node never came back: $(sinfo -h -o '%t %E')"; sleep 0.1; done
"$MATRIX" run --resume c --no-report > r.txt 2> r.err || { cat r.txt r.err >&2; fail "the resume"; }
expect_grep "submitted 3 points of 'slurmcancel' in 'c' as slurm job [0-9]* (array 1-3," r.txt "every point submitted again"
expect_eq "$(tail -n +2 c/results.csv | cut -d, -f2 | sort | tr '\n' ' ')" "1 2 3 " "every point once"
expect_eq "$(csv_col c/results.csv status | sort -u)" ok "statuses"

# a task that cannot open its output (JobLaunchFailure, FAILED)
cat > f.yaml <<YAML
name: slurmfail
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{k}"]
executor: {slurm: {extra: ["--output=/nonexistent/x.out"]}}
factors:
  k: [1]
YAML
expect_status 1 "$MATRIX" run f.yaml --out f --no-report > f.txt 2>&1
expect_eq "$(csv_col f/results.csv status)" crashed "status of a task without output"
fjob=$(cat f/slurm/jobs)
expect_grep "slurm: FAILED: the task ended without writing a row or its output 'f/slurm/${fjob}_1.out': can the node see the run directory? it must be on a filesystem that every node mounts, matrix too" f/results.csv "reason of a task without output"
# a task whose run-point cannot write its row: the reason quotes its output
scontrol update PartitionName=debug State=DOWN
sed 's/^executor: .*/executor: slurm/' f.yaml > g.yaml
"$MATRIX" run g.yaml --out g --detach > g1.txt 2>&1 || { cat g1.txt >&2; fail "detach"; }
rm -rf g/rows && : > g/rows
scontrol update PartitionName=debug State=UP
expect_status 1 "$MATRIX" run --resume g --no-report > g.txt 2>&1
gjob=$(cat g/slurm/jobs)
expect_grep "slurm: FAILED: the task ended without writing a row (g/slurm/${gjob}_1.out: matrix: cannot write '$work/g/rows/[0-9a-f]*.csv': Not a directory)" g/results.csv "reason quoting the task's output"
# a task that Slurm's accounting says ran out of memory (OUT_OF_MEMORY,
# read from sacct: the test cluster keeps no accounting, so a stand-in
# sacct on PATH answers as slurmdbd would once the task has left the queue)
# has an 'oom' row with Slurm's state in its reason
mkdir bin
cat > bin/sacct <<'SH'
#!/bin/sh
# sacct -n -X -P -o JobID,State,NodeList -j JOB
for a; do job=$a; done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || exit 0
printf '%s_1|OUT_OF_MEMORY|%s\n' "$job" "$(hostname -s)"
SH
chmod +x bin/sacct
scontrol update PartitionName=debug State=DOWN
sed 's/^name: .*/name: slurmoom/' g.yaml > o.yaml
"$MATRIX" run o.yaml --out o --detach > o1.txt 2>&1 || { cat o1.txt >&2; fail "detach (oom)"; }
rm -rf o/rows && : > o/rows
scontrol update PartitionName=debug State=UP
set +e; PATH=$work/bin:$PATH "$MATRIX" run --resume o --no-report > o.txt 2>&1; rc=$?; set -e
expect_eq "$rc" 1 "exit status of a run with an oom row"
expect_eq "$(csv_col o/results.csv status)" oom "status of a task Slurm ended OUT_OF_MEMORY"
expect_grep "slurm: OUT_OF_MEMORY: killed at the task's memory limit" o/results.csv "reason of an OUT_OF_MEMORY task"
slurm_stop
echo ok
