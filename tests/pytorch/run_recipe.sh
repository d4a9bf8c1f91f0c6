#!/bin/sh
# A recipe with `engine: pytorch` through the runner: `matrix run` gives ok rows
# for MNIST training and ResNet-18 inference on the CPU, with the engine's keys.
# Skips (77) while the runner binary is missing or has no `run`.
if [ -z "${MATRIX:-}" ] || [ ! -x "$MATRIX" ] || ! "$MATRIX" run --help >/dev/null 2>&1; then
	echo "SKIP: no runner with 'run' at '${MATRIX:-}'"
	exit 77
fi
: "${PYTHON_TORCH:?PYTHON_TORCH must name a python3 that imports torch}"
. "$top_srcdir/tests/setup"
# the interpreter configure found, and the engine of this source tree
MATRIX_PYTHON=$PYTHON_TORCH; export MATRIX_PYTHON
MATRIX_PYTORCH_ENGINE=$top_srcdir/engine/pytorch/matrix_torch.py; export MATRIX_PYTORCH_ENGINE

"$MATRIX" run "$top_srcdir/tests/pytorch/pytorch_small.yaml" --out run > out.txt 2> err.txt ||
	fail "matrix run failed: $(cat err.txt out.txt)"
[ -s run/results.csv ] || fail "no run/results.csv"
"$PYTHON_TORCH" - run/results.csv <<'PY' || { cat run/logs/*.log >&2; fail "results.csv checks"; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bad = []
def want(cond, what):
    print(("ok   - " if cond else "FAIL - ") + what)
    cond or bad.append(what)
want(len(rows) == 2, "2 rows (got %d)" % len(rows))
head = list(rows[0].keys()) if rows else []
want(head[:3] == ["id", "index", "repeat"] and "status" in head and "throughput" in head, "columns: %s" % head[:12])
got = {(r["model"], r["task"]): r for r in rows}
for key in (("mnist_cnn", "train"), ("resnet18", "infer")):
    r = got.get(key)
    want(r is not None and r["status"] == "ok", "%s %s: status ok (%s)" % (key + ((r or {}).get("reason"),)))
    if r is None or r["status"] != "ok":
        continue
    want(float(r["throughput"]) > 0 and r["unit"] == "samples/s", "%s %s: throughput %s %s" % (key + (r["throughput"], r["unit"])))
    want(float(r["step_ms_lo"]) <= float(r["step_ms"]) <= float(r["step_ms_hi"]), "%s %s: CI around the median" % key)
    want("engine=pytorch" in r.get("extra", "") or r.get("engine") == "pytorch", "%s %s: engine=pytorch recorded" % key)
    want("matrix_torch.py" in r.get("command", ""), "%s %s: command runs matrix_torch.py" % key)
sys.exit(1 if bad else 0)
PY
echo ok
