# A recipe without a baseline: the factors that say what is measured (model,
# task, batch, seq_len) group the points, the others start at their first
# level. Only model did: the best configuration, the run's summary and the
# improvements the report picks by itself ran across tasks and batch sizes,
# so a training point that is faster than inference read as the best
# configuration of inference, 'gain over the baseline 3, best task=train',
# and 'task infer -> train' was listed as an improvement.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: nobase
engine: command
command: [sh, -c, 'case "$0$1" in infer-slow) t=100;; infer-fast) t=120;; train-slow) t=250;; train-fast) t=300;; esac; printf "status=ok\nthroughput=%s\nunit=samples/s\nstep_ms=1\nstep_ms_lo=0.99\nstep_ms_hi=1.01\n" $t > "$MATRIX_RESULT"', "{task}", "-{opt}"]
factors:
  task: [infer, train]
  opt: [slow, fast]
YAML
"$MATRIX" run r.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
expect_eq "$(grep -c '^  task=' run.txt)" 2 "a summary line per task"
expect_grep "^  task=infer: best opt=fast: 120 samples/s .*; gain over the baseline 1.2 " run.txt "inference's best"
expect_grep "^  task=train: best opt=fast: 300 samples/s .*; gain over the baseline 1.2 " run.txt "training's best"
expect_grep "no baseline in the recipe: the first level of each factor but model, task, batch and seq_len, which group the points" run.txt "the summary says what the baseline is"
expect_eq "$(cut -d, -f1,2,3,4 run/tables/best.csv | tail -n +2 | sort)" \
	"$(printf '%s\n' task=infer,2,100,120 task=train,2,250,300)" "best.csv: one group per task"
expect_eq "$(cut -d, -f1 run/tables/improvements.csv | tail -n +2 | sort -u)" opt "improvements: of the setting only, not of task"
echo ok
