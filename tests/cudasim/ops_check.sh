#!/bin/sh
# ops_check.sh - every op of the CUDA backend that runs on the engine's own
# kernels (ops.cu, kernels.cu: BatchNorm, activations, pooling, dropout,
# softmax / NLL, the optimizers, EMA, loss scaling, embedding, layer norm,
# attention), against the CPU backend, with no GPU: tests/gpu/ops_check
# --kernels-only on the simulator's module (tests/cudasim/cudasim.h), every
# precision and layout with threads in forward order, then fp32 (both
# layouts) with threads and blocks in reverse order (a thread reading what a
# later thread writes shows there, a block reading another's writes too; the kernels are templates over the type with
# the same barriers in every precision, and in the barrier mutation table of
# engine/NOTES.md the reverse order caught nothing the forward one missed:
# fp32 only, to keep CI under its 20 minutes), SyncBN over a simulated NCCL communicator
# of one rank, convolution, linear and attention on the engine's own kernels
# (MATRIX_ENGINE_CONV / _GEMM / _SDPA=kernel); then the configurations as a
# GPU runs them, on the simulated libraries (cublaslt.cc, cudnn.cc,
# cudnngraph.cc): linear on cuBLASLt, forward convolutions on cuDNN graph
# plans (conv + bias + residual + ReLU as one graph, each plan verified),
# backward ones on the legacy API, attention on cuDNN's fused SDPA (the
# unified forward node, the composite backward and dropout graphs, each plan
# checked against the engine's kernels), the timed search of
# cudnn_benchmark, the legacy-only and graph-only settings and GEN_STATS;
# tf32-nchw too (about 13 s): its linear cases (NCHW configurations only)
# are TF32 products on cuBLASLt, the class of the wrong linear_bwd of
# 2026-11-22; not the *-kernel configurations (the first runs cover those
# kernels) nor fp32-nchw-search (about 21 s: fp16-nhwc-search races graph plans
# against the legacy call, conv_search.sh the legacy algorithms), to keep CI
# under its 20 minutes.
# The real libraries need the GPU: `make check-gpu`.
set -u
P=${top_builddir:?}/tests/gpu/ops_check
M=$top_builddir/tests/cudasim/matrix-engine-cudasim.so
if [ ! -x "$P" ] || [ ! -f "$M" ]; then
  echo "SKIP: built without CUDA (no $P or $M)"
  exit 77
fi
rc=0
echo "== threads in forward order (CUDASIM_ORDER=forward)"
CUDASIM_ORDER=forward MATRIX_ENGINE_CUDA=$M "$P" -q --no-full-size --kernels-only || rc=1
echo "== threads in reverse order (CUDASIM_ORDER=reverse), fp32"
CUDASIM_ORDER=reverse MATRIX_ENGINE_CUDA=$M "$P" -q --no-full-size --kernels-only --precision fp32 || rc=1
echo "== the libraries as a GPU runs them (cuBLASLt, cuDNN graph and legacy API, all simulated)"
MATRIX_ENGINE_CUDA=$M "$P" -q --no-full-size --config fp32-nchw,fp32-nhwc,tf32-nchw,tf32-nhwc,fp16-nchw,fp16-nhwc,bf16-nchw,bf16-nhwc,\
fp16-nhwc-search,fp32-nchw-conv-legacy,fp16-nhwc-conv-legacy,bf16-nhwc-conv-graph,\
fp16-nhwc-search-conv-graph,fp16-nhwc-bnstats-conv,bf16-nhwc-bnstats-conv,fp32-nhwc-bnstats-conv,\
fp16-nhwc-search-bnstats-conv,fp16-nhwc-bnstats-separate || rc=1
exit $rc
