# The slurm executor when Slurm, not the point, ends a task
# (tests/e2e/slurm_cluster): a task scancelled and tasks lost with their
# node (set DOWN, --no-requeue: NODE_FAIL) while the front end follows them
# leave their points without a row, as a resume after --detach leaves them
# (it submits them again); the run ends stopped (exit 1) saying which
# states and that a resume submits them, status counts them missing, and
# the resume runs each of them once. (Such tasks had a 'crashed' row, so a
# resume skipped them and only --retry-failed, which reruns every real
# failure too, ran them again.)
. "$top_srcdir/tests/setup"
. "$top_srcdir/tests/e2e/slurm_cluster"
slurm_cpus=4
slurm_start
node=$(hostname -s)

cat > c.yaml <<YAML
name: slurmcancel
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "{k}"]
executor: {slurm: {extra: [--no-requeue]}}
factors:
  k: [6, 6.1, 6.2]
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
slurm_stop
echo ok
