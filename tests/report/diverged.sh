# A training row whose loss is not finite (the engine records loss=nan when
# --lr 1e30 diverges; status ok: the steps ran) is named under Measurement
# quality and in the run's summary line: its steps ran on NaN / inf (an fp16
# run skips its updates), which is not the speed of training that model. A
# finite loss, or a row without one, is not named. The PyTorch engine's key
# is loss_last.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: diverged
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=100\nunit=samples/s\nstep_ms=1\nstep_ms_lo=0.99\nstep_ms_hi=1.01\n%s=%s\n" {key} {loss} > "$MATRIX_RESULT"']
factors:
  key: [loss, loss_last]
  loss: ["2.3", "nan", "-inf"]
YAML
"$MATRIX" run r.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
expect_grep '; 4 rows whose training diverged (loss not finite)' run.txt "the run's quality line"
expect_grep '^Points whose training diverged (the loss is not finite' run/report.md "the report's section"
for k in loss loss_last; do
	expect_grep "^- key=$k loss=nan ([0-9a-f]*): training diverged: loss nan after the timed steps" run/report.md "the nan row named ($k)"
	expect_grep "^- key=$k loss=-inf ([0-9a-f]*): training diverged: loss -inf" run/report.md "the -inf row named ($k)"
done
grep -q '^- key=[a-z_]* loss=2.3 ([0-9a-f]*): training diverged' run/report.md && fail "a finite loss named as diverged"
# --device auto beside a GPU whose CUDA backend did not load runs on the cpu
# and says why in the record (device_fallback): named too
cat > fb.yaml <<'YAML'
name: fallback
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=100\nunit=samples/s\ndevice=cpu\n" > "$MATRIX_RESULT"; [ {x} = b ] && echo "device_fallback=a GPU is present (/dev/nvidia0) but libcudart.so.13: cannot open" >> "$MATRIX_RESULT"; exit 0']
factors:
  x: [a, b]
YAML
"$MATRIX" run fb.yaml --out fb > fb.txt 2>&1 || { cat fb.txt >&2; fail "the fallback run failed"; }
expect_grep '; 1 row of device auto ran on the cpu beside a GPU' fb.txt "the run's quality line: the fallback"
expect_grep '^- x=b ([0-9a-f]*): ran on the cpu, not the GPU (device auto): a GPU is present' fb/report.md "the fallback row named"
grep -q '^- x=a ([0-9a-f]*): ran on the cpu' fb/report.md && fail "a row without a fallback named"
echo ok
