#!/bin/sh
# ops_check.sh - every op of the CUDA backend that runs on the engine's own
# kernels (ops.cu, kernels.cu: BatchNorm, activations, pooling, dropout,
# softmax / NLL, the optimizers, EMA, loss scaling, embedding, layer norm,
# attention), against the CPU backend, with no GPU: tests/gpu/ops_check
# --kernels-only on the simulator's module (tests/cudasim/cudasim.h), every
# precision and layout, threads in forward then in reverse order (a missing
# barrier shows in one of them), SyncBN over a simulated NCCL communicator
# of one rank, convolution, linear and attention on the engine's own kernels
# (MATRIX_ENGINE_CONV / _GEMM / _SDPA=kernel); then once more with linear on
# cuBLASLt and convolutions on cuDNN's legacy API as on a GPU, the timed
# search of cudnn_benchmark too (--no-graph-api; both libraries simulated:
# cublaslt.cc, cudnn.cc). cuDNN's graph API (fused SDPA, graph convolution
# plans, GEN_STATS) and the real libraries need the GPU: `make check-gpu`.
set -u
P=${top_builddir:?}/tests/gpu/ops_check
M=$top_builddir/tests/cudasim/matrix-engine-cudasim.so
if [ ! -x "$P" ] || [ ! -f "$M" ]; then
  echo "SKIP: built without CUDA (no $P or $M)"
  exit 77
fi
rc=0
for order in forward reverse; do
  echo "== threads in $order order (CUDASIM_ORDER=$order)"
  CUDASIM_ORDER=$order MATRIX_ENGINE_CUDA=$M "$P" -q --kernels-only || rc=1
done
echo "== linear on the simulated cuBLASLt, convolutions on the simulated cuDNN legacy API (--no-graph-api)"
MATRIX_ENGINE_CUDA=$M "$P" -q --no-graph-api || rc=1
exit $rc
