#!/bin/sh
# cube_bert.sh - the BERT slice of recipes/inference_cube.yaml run by
# `matrix run` on the native CUDA engine with no GPU (issue 16, item 6: every
# point ok, or unsupported with a reason that holds on any GPU): the recipe
# itself with bert_tiny for its BERT models (sequence 16, batch 2, the
# simulator's speed), channels_last off as the recipe runs its language
# models, so its other 48 settings (precision, cudnn_benchmark, compile,
# eval, inference_mode) on the simulated backend. Every point ok;
# cudnn_benchmark listed in `ignored` on exactly the points that turn it on
# (BERT has no convolution for it to time). About 25 s. The throughputs are
# the simulator's (CPU) times: not judged.
set -u
NAME=cube_bert
. "${top_srcdir:?}/tests/cudasim/setup.sh"
cd "$W" || exit 1
MATRIX_ENGINE=$E MATRIX_ENGINE_CUDA=$M XDG_CACHE_HOME=$W/cache
export MATRIX_ENGINE MATRIX_ENGINE_CUDA XDG_CACHE_HOME
if ! "$X" run "$top_srcdir/recipes/inference_cube.yaml" model=bert_tiny batch=2 channels_last=off factors.seq_len=16 \
  measure.warmup=0s measure.min_time=0.05s measure.max_time=0.1s --out o --jobs 2 --no-report >out.txt 2>err.txt; then
  tail -n 5 out.txt err.txt
  echo "FAIL: matrix run"
  exit 1
fi
python3 - o/results.csv >chk.txt <<'PY' || { cat chk.txt; fail "the cube's BERT slice"; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = bad = 0
for r in rows:
    if r["status"] == "ok":
        ok += 1
    else:
        print("  not ok: %s: %s" % (r["id"], r["reason"][:200]))
    ign = "cudnn_benchmark" in r["ignored"].split(",")
    if ign != (r["cudnn_benchmark"] == "on"):
        bad += 1
        print("  %s: cudnn_benchmark=%s, ignored=%s" % (r["id"], r["cudnn_benchmark"], r["ignored"]))
print("%d of %d points ok, %d with ignored wrong" % (ok, len(rows), bad))
sys.exit(0 if ok == len(rows) == 48 and not bad else 1)
PY
[ "$rc" = 0 ] && echo "ok: the inference cube's 48 BERT settings on the CUDA backend (simulated): $(tail -n 1 chk.txt)"
exit $rc
