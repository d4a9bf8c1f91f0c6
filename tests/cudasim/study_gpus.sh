#!/bin/sh
# study_gpus.sh - a GPU-count study run by `matrix run` on the native CUDA
# engine with no GPU: the simulated backend with two devices
# (CUDASIM_DEVICES=2, the runner handed CUDA_VISIBLE_DEVICES=0,1 as on a
# 2-GPU host), resnet_tiny training at gpus 1 and 2 and SyncBN off / on.
# Every point ok; the 2-GPU points ran 2 ranks (launcher=local, comm=nccl)
# that ended with the same weights (ranks_same_weights=1); the report draws
# the scaling figure and tables/scaling.csv holds the 2-GPU row's scale
# factor (throughput over twice the 1-GPU one). The throughputs are the
# simulator's (CPU) times: only that the numbers flow through is checked.
set -u
NAME=study_gpus
. "${top_srcdir:?}/tests/cudasim/setup.sh"
cd "$W" || exit 1
cat > s.yaml <<'YAML'
name: sim_scaling
engine: native
device: cuda
measure: {warmup: 0.5s, min_time: 1s, max_time: 3s, rel_ci: 0.5, timeout: 300s}
factors:
  model: [resnet_tiny]
  task: [train]
  batch: [4]
  gpus: [1, 2]
  syncbn: [off, on]
exclude:
  - {gpus: 1, syncbn: on}
baseline: {gpus: 1, syncbn: off}
YAML
MATRIX_ENGINE_CUDA=$M CUDASIM_DEVICES=2 CUDA_VISIBLE_DEVICES=0,1 XDG_CACHE_HOME=$W/cache
export MATRIX_ENGINE_CUDA CUDASIM_DEVICES CUDA_VISIBLE_DEVICES XDG_CACHE_HOME
if ! "$X" run s.yaml --out o --jobs 2 >out.txt 2>err.txt; then
  cat out.txt err.txt
  echo "FAIL: matrix run"
  exit 1
fi
ok=$(grep -c '] ok ' out.txt)
[ "$ok" = 3 ] || fail "$ok of 3 points ok: $(cat out.txt)"
for k in launcher=local comm=nccl ranks_same_weights=1; do
  c=$(grep -c "$k" o/results.csv)
  [ "$c" = 2 ] || fail "$c of the 2 two-GPU points with $k in results.csv"
done
[ -f o/plots/scaling.svg ] || fail "no scaling figure (o/plots/scaling.svg)"
row=$(grep '^syncbn=off,2,' o/tables/scaling.csv)
sf=$(echo "$row" | cut -d, -f7)
if [ -n "$sf" ] && awk -v s="$sf" 'BEGIN { exit !(s > 0 && s < 2) }'; then
  echo "ok: 3 points ok, 2-GPU points on 2 NCCL ranks with the same weights, scaling figure, scale factor $sf (simulated)"
else
  fail "tables/scaling.csv has no 2-GPU scale factor: '$row'"
fi
exit $rc
