# Points compared honestly: the run's quality line and the report warn when a
# factor's levels ran on different node types (each row's gpu and cpu names;
# the runner records the cpu when the engine does not). A factor confounded
# with the hardware is named, one balanced across it is not.
. "$top_srcdir/tests/setup"
cat > eng.sh <<'ENG'
# batch 1 runs on "GPU A", batch 2 on "GPU B"; k is balanced across them
case $1 in 1) gpu="GPU A" ;; *) gpu="GPU B" ;; esac
printf 'status=ok\nthroughput=%s\nunit=samples/s\nstep_ms=10\nstep_ms_lo=9.5\nstep_ms_hi=10.5\nsamples=7\ngpu=%s\ncpu=CPU X\n' \
	"$2" "$gpu" > "$MATRIX_RESULT"
ENG
cat > r.yaml <<YAML
name: nodetypes
engine: command
command: [sh, $work/eng.sh, "{batch}", "{k}"]
factors:
  batch: [1, 2]
  k: [1, 2]
YAML
"$MATRIX" run r.yaml --out run > out.txt 2> err.txt || { cat out.txt err.txt >&2; fail "run"; }
expect_grep "; rows ran on 2 node types (the levels of batch ran on different ones: their comparisons mix hardware)$" out.txt "the run's quality line"
expect_grep "Node types: the measured rows ran on 2 kinds of node (GPU / CPU): GPU A / CPU X (2 rows); GPU B / CPU X (2 rows). WARNING: the levels of these factors ran on different node types" run/report.md "the report's warning"
expect_grep "batch: 1 on GPU A / CPU X; 2 on GPU B / CPU X" run/report.md "the confounded factor"
if grep -q "^- k: \|k: 1 on" run/report.md; then fail "the balanced factor k is listed"; fi
# one node type: no word of it; the runner names the CPU of a command engine's rows
cat > u.yaml <<YAML
name: onetype
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{k}"]
factors:
  k: [1, 2]
YAML
"$MATRIX" run u.yaml --out one > out1.txt 2>&1 || { cat out1.txt >&2; fail "run one"; }
if grep -q "node types" out1.txt one/report.md; then fail "a run on one node type warns"; fi
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
[ -z "$model" ] || expect_eq "$(grep -cF "cpu=$model" one/results.csv)" 2 "the runner's cpu per row"
echo ok
