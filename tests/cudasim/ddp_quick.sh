#!/bin/sh
# ddp_quick.sh - the data-parallel path of the CUDA backend in one check,
# with no GPU (make check; tests/cudasim/ddp_check.sh is the whole of
# tests/gpu/ddp_check.sh, by hand): resnet_tiny trained 5 steps by 2 ranks
# of batch 6 on two simulated devices, SyncBN on and the step inside one
# CUDA Graph (--compile reduce-overhead: the gradient buckets' NCCL
# all-reduces on their own stream and SyncBN's on the compute stream, all
# captured and replayed), against 1 process of batch 12 with BatchNorm on
# the global batch: gradients, losses and rank 0's outputs within 1e-4,
# final weights within 1e-3; then a rank killed while its peer waits in an
# all-reduce takes the point down, no rank left running. NCCL between the
# ranks' processes is the simulator's (cudasim.cc, shared memory).
set -u
NAME=ddp_quick
. "${top_srcdir:?}/tests/cudasim/setup.sh"
MATRIX_ENGINE_CUDA=$M CUDASIM_DEVICES=2 XDG_CACHE_HOME=$W/cache
export MATRIX_ENGINE_CUDA CUDASIM_DEVICES XDG_CACHE_HOME
R="--device cuda --model resnet_tiny --task train --steps 5 --warmup 0 --lr 0.001 --compile reduce-overhead"
rc=0
"$E" $R --batch 12 --dump "$W/one.mxw" >"$W/one.log" 2>&1 || { echo "FAIL: 1 x 12: exit $?"; tail -5 "$W/one.log"; exit 1; }
"$E" $R --batch 6 --gpus 2 --syncbn on --dump "$W/two.mxw" >"$W/two.log" 2>&1 ||
  { echo "FAIL: 2 x 6 SyncBN: exit $?"; tail -5 "$W/two.log"; exit 1; }
grep -q 'syncbn: [1-9][0-9]* BatchNorm ops' "$W/two.log" || { echo "FAIL: no BatchNorm op synchronised"; rc=1; }
grep -q 'launcher=local' "$W/two.log" || { echo "FAIL: the ranks were not started by the local launcher"; rc=1; }
for spec in "grad. 1e-4" "losses 1e-4" "output 1e-4" "final. 1e-3"; do
  set -- $spec
  if "$B/tests/engine/dump_cmp" "$W/one.mxw" "$W/two.mxw" "$2" "$1" >"$W/cmp.out" 2>&1; then
    echo "ok: 2 ranks x 6, SyncBN, in a CUDA Graph vs 1 x 12: $1 within $2 ($(tail -1 "$W/cmp.out"))"
  else
    grep -v '^ok' "$W/cmp.out" | head -5
    echo "FAIL: 2 ranks x 6 vs 1 x 12: $1 beyond $2"
    rc=1
  fi
done
# a rank that dies (SIGKILL at step 3) while its peer waits in an NCCL
# all-reduce: the launcher ends the peer, the point dies of the signal
# with no result, no process is left (no hung peers)
k=0
MATRIX_ENGINE_DIE_RANK=1 CUDASIM_NCCL_TIMEOUT=600 "$E" --device cuda --model resnet_tiny --task train --batch 4 \
  --gpus 2 --steps 50 --warmup 0 --result "$W/killed" >"$W/killed.log" 2>&1 || k=$?
if [ "$k" -eq 137 ] && [ ! -f "$W/killed" ]; then
  echo "ok: a rank killed while its peer waited in NCCL: the point dies of SIGKILL (exit $k), no result"
else
  echo "FAIL: a killed rank: exit $k, result $(ls "$W/killed" 2>/dev/null)"
  tail -5 "$W/killed.log"
  rc=1
fi
i=0
while pgrep -f "$W/killed" >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if pgrep -f "$W/killed" >/dev/null 2>&1; then
  echo "FAIL: ranks left running after a rank died"
  rc=1
else
  echo "ok: no rank left running"
fi
exit $rc
