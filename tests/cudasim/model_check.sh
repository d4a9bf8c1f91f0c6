#!/bin/sh
# model_check.sh - whole models trained and run on the CUDA backend with no
# GPU: tests/gpu/model_check.sh's bert_tiny (batch 4, sequence 16) and
# mnist_cnn (batch 16) configurations with the backend's host code as it is
# and its kernels on the CPU simulator (tests/cudasim/), linear on cuBLASLt
# and convolutions on cuDNN as on a GPU (both simulated: cublaslt.cc,
# cudnn.cc; every cuBLASLt algorithm verified, cudnn_benchmark's search
# timed, the plan cache shared by the runs), attention on the engine's own
# kernels (MATRIX_ENGINE_SDPA=kernel: cuDNN's fused SDPA is its graph API,
# which the simulator has not: MODEL_CHECK_NO_GRAPH_API skips what needs
# it, with the reason). MATRIX_ENGINE_CONV / _GEMM=kernel from the caller
# put convolutions / linear on the engine's own kernels instead. Against the
# CPU backend: fp32 output, every gradient, 5 losses, final weights and
# dropout masks (train and infer, NCHW and NHWC, compile none / default,
# eval and inference mode); tf32 / fp16 / bf16 trajectories; CUDA Graph
# replays (the simulator captures and replays them) against eager steps,
# with dropout drawing new masks each replay; the multi-tensor optimizers
# against one kernel per tensor, bit for bit. MODEL_CHECK_ONLY names
# others: resnet_tiny is tests/cudasim/model_check_resnet.sh; bert_tiny_s512
# takes minutes.
set -u
M=${top_builddir:?}/tests/cudasim/matrix-engine-cudasim.so
if [ ! -f "$M" ]; then
  echo "SKIP: built without CUDA (no $M)"
  exit 77
fi
MATRIX_ENGINE_CUDA=$M MATRIX_ENGINE_SDPA=kernel MODEL_CHECK_NO_GRAPH_API=cudasim \
  MODEL_CHECK_ONLY=${MODEL_CHECK_ONLY:-bert_tiny mnist_cnn} MODEL_CHECK_PROBE=mnist_cnn \
  XDG_CACHE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/cudasim-cache.XXXXXX")
export MATRIX_ENGINE_CUDA MATRIX_ENGINE_SDPA MODEL_CHECK_NO_GRAPH_API MODEL_CHECK_ONLY \
  MODEL_CHECK_PROBE XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
sh "${top_srcdir:?}/tests/gpu/model_check.sh"
