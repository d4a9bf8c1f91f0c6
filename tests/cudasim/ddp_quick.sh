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
# all-reduce takes the point down, no rank left running; one rank through
# the data-parallel path (MATRIX_ENGINE_DP=1: NCCL's all-reduce of one) is
# the plain run bit for bit; --gpus 2 with one device visible is
# unsupported with the counts; a measured 2-rank point's result has
# comm_allreduce_ms and comm_allreduce_share (0 to 1), eager and in a graph. NCCL between the
# ranks' processes is the simulator's (cudasim.cc, shared memory).
# The 2-rank runs use gradient buckets of 64 KiB (MATRIX_ENGINE_BUCKET_KB:
# 6 buckets, each all-reduced on NCCL's stream after the op that completes
# it, the default 25 MiB makes one). The streams' schedule
# (CUDASIM_STREAMS, cudasim.cc): the graph run side-late, and 2 x 6 without
# a graph (SyncBN on) twice more against the same 1 x 12: main-late (an
# all-reduce that does not wait for the bucket's
# last gradient reads it before it is written) and side-late (an optimizer
# that does not wait for the all-reduce runs before it); each of the two
# waits removed from comm_nccl.cu fails one of them (engine/NOTES.md). In
# the graph, either missing wait fails on any schedule: the all-reduce is
# not captured, or the capture ends unjoined, which CUDA refuses.
set -u
NAME=ddp_quick
. "${top_srcdir:?}/tests/cudasim/setup.sh"
MATRIX_ENGINE_CUDA=$M CUDASIM_DEVICES=2 XDG_CACHE_HOME=$W/cache
export MATRIX_ENGINE_CUDA CUDASIM_DEVICES XDG_CACHE_HOME
R="--device cuda --model resnet_tiny --task train --steps 5 --warmup 0 --lr 0.001 --compile reduce-overhead"
rc=0
"$E" $R --batch 12 --dump "$W/one.mxw" >"$W/one.log" 2>&1 || { echo "FAIL: 1 x 12: exit $?"; tail -5 "$W/one.log"; exit 1; }
# two ranks: $1 the schedule, $2 the dump's name, $3 what it is, the rest
# extra flags
two() {
  sched=$1 d=$2 what=$3
  shift 3
  CUDASIM_STREAMS=$sched MATRIX_ENGINE_BUCKET_KB=64 "$E" $R --batch 6 --gpus 2 --syncbn on "$@" --dump "$W/$d.mxw" \
    >"$W/$d.log" 2>&1 || { echo "FAIL: $what: exit $?"; tail -5 "$W/$d.log"; rc=1; return; }
  nb=$(sed -n 's/^matrix-engine: data-parallel: \([0-9]*\) gradient bucket(s) of about 64 KiB.*/\1/p' "$W/$d.log")
  [ "${nb:-0}" -gt 1 ] || { echo "FAIL: $what: '$nb' gradient buckets of 64 KiB (want more than 1)"; rc=1; }
  grep -q 'syncbn: [1-9][0-9]* BatchNorm ops' "$W/$d.log" || { echo "FAIL: $what: no BatchNorm op synchronised"; rc=1; }
  grep -q 'launcher=local' "$W/$d.log" || { echo "FAIL: $what: the ranks were not started by the local launcher"; rc=1; }
  for spec in "grad. 1e-4" "losses 1e-4" "output 1e-4" "final. 1e-3"; do
    set -- $spec
    if "$B/tests/engine/dump_cmp" "$W/one.mxw" "$W/$d.mxw" "$2" "$1" >"$W/cmp.out" 2>&1; then
      echo "ok: $what vs 1 x 12: $1 within $2 ($(tail -1 "$W/cmp.out"))"
    else
      grep -v '^ok' "$W/cmp.out" | head -5
      echo "FAIL: $what vs 1 x 12: $1 beyond $2"
      rc=1
    fi
  done
}
# one rank through the data-parallel path (NCCL's all-reduce of one rank,
# in the CUDA Graph) is the plain run bit for bit
if MATRIX_ENGINE_DP=1 "$E" $R --batch 12 --dump "$W/dp1.mxw" >"$W/dp1.log" 2>&1 &&
  "$B/tests/engine/dump_cmp" "$W/one.mxw" "$W/dp1.mxw" 0 grad. losses final. output >"$W/cmp.out" 2>&1; then
  echo "ok: 1 rank through NCCL (MATRIX_ENGINE_DP=1) equals the plain run bit for bit ($(tail -1 "$W/cmp.out"))"
else
  echo "FAIL: 1 rank through NCCL differs from the plain run"; tail -3 "$W/dp1.log"; grep -v '^ok' "$W/cmp.out" | head -5
  rc=1
fi
# more GPUs asked for than are visible: unsupported, with the counts
k=0
CUDASIM_DEVICES=1 "$E" $R --batch 6 --gpus 2 --result "$W/few" >"$W/few.log" 2>&1 || k=$?
if [ "$k" -eq 3 ] && grep -qx 'status=unsupported' "$W/few" && grep -q '^reason=gpus: 2 needs 2 visible GPUs; 1 visible' "$W/few"; then
  echo "ok: --gpus 2 with 1 GPU visible: exit 3, $(grep '^reason=' "$W/few")"
else
  echo "FAIL: --gpus 2 with 1 GPU visible: exit $k, $(grep '^status=\|^reason=' "$W/few" | tr '\n' ' ')"
  rc=1
fi
two side-late two "2 ranks x 6, SyncBN, in a CUDA Graph, side-late"
two main-late eager-ml "2 ranks x 6, SyncBN, no graph, compute stream late" --compile none
# the all-reduces' time (NCCL's stream: the simulator's CPU time, only that
# it flows through is checked) and its share of the step, in a measured
# point's result, eager and in a CUDA Graph (external event record nodes:
# the simulator refuses an elapsed time between events recorded in a
# capture without them, as CUDA does)
for comp in none reduce-overhead; do
  MATRIX_ENGINE_BUCKET_KB=64 "$E" --device cuda --model resnet_tiny --task train --batch 4 --gpus 2 --steps 3 --warmup 1 \
    --compile $comp --result "$W/comm-$comp.r" >"$W/comm-$comp.log" 2>&1 || echo "FAIL: the measured 2-rank point (compile $comp): exit $?"
  ms=$(sed -n 's/^comm_allreduce_ms=//p' "$W/comm-$comp.r") sh_=$(sed -n 's/^comm_allreduce_share=//p' "$W/comm-$comp.r")
  if awk -v m="$ms" -v s="$sh_" 'BEGIN { exit !(m != "" && m > 0 && s != "" && s > 0 && s <= 1) }'; then
    echo "ok: comm_allreduce_ms=$ms comm_allreduce_share=$sh_ in the result (compile $comp)"
  else
    echo "FAIL: compile $comp: comm_allreduce_ms='$ms' comm_allreduce_share='$sh_' (want > 0, share at most 1)"
    rc=1
  fi
done
two side-late eager-sl "2 ranks x 6, SyncBN, no graph, NCCL stream late" --compile none
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
