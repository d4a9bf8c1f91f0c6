#!/bin/sh
# ops_check.sh - every op of the CUDA backend that runs on the engine's own
# kernels (ops.cu, kernels.cu: BatchNorm, activations, pooling, dropout,
# softmax / NLL, the optimizers, EMA, loss scaling, embedding, layer norm,
# attention), against the CPU backend, with no GPU: tests/gpu/ops_check
# --kernels-only on the simulator's module (tests/cudasim/cudasim.h), every
# precision and layout with threads in forward order, then fp32 (both
# layouts) with threads in reverse order (a thread reading what a later
# thread writes shows there; the kernels are templates over the type with
# the same barriers in every precision, and in the barrier mutation table of
# engine/NOTES.md the reverse order caught nothing the forward one missed:
# fp32 only, to keep CI under its 20 minutes), SyncBN over a simulated NCCL communicator
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
echo "== threads in forward order (CUDASIM_ORDER=forward)"
CUDASIM_ORDER=forward MATRIX_ENGINE_CUDA=$M "$P" -q --kernels-only || rc=1
echo "== threads in reverse order (CUDASIM_ORDER=reverse), fp32"
CUDASIM_ORDER=reverse MATRIX_ENGINE_CUDA=$M "$P" -q --kernels-only --precision fp32 || rc=1
echo "== linear on the simulated cuBLASLt, convolutions on the simulated cuDNN legacy API (--no-graph-api)"
MATRIX_ENGINE_CUDA=$M "$P" -q --no-graph-api || rc=1
exit $rc
