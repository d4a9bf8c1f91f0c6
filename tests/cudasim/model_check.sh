#!/bin/sh
# model_check.sh - whole models trained and run on the CUDA backend with no
# GPU: tests/gpu/model_check.sh's bert_tiny (batch 4, sequence 16) and
# mnist_cnn (batch 16) configurations with the backend's host code as it is
# and its kernels on the CPU simulator (tests/cudasim/), the libraries as a
# GPU runs them (all simulated: cublaslt.cc, cudnn.cc, cudnngraph.cc):
# linear on cuBLASLt (every algorithm verified), forward convolutions on
# cuDNN graph plans and backward ones on its legacy API (cudnn_benchmark's
# search timed, the plan cache shared by the runs), attention on cuDNN's
# fused SDPA graphs (each plan checked against the engine's kernels), the
# BatchNorm statistics from GEN_STATS where asked. MATRIX_ENGINE_CONV /
# _GEMM / _SDPA=kernel from the caller put those ops on the engine's own
# kernels instead. Against the CPU backend: fp32 output, every gradient,
# 5 losses, final weights and dropout masks (train and infer, NCHW and NHWC,
# compile none / default,
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
MATRIX_ENGINE_CUDA=$M MODEL_CHECK_ONLY=${MODEL_CHECK_ONLY:-bert_tiny mnist_cnn} MODEL_CHECK_PROBE=mnist_cnn \
  XDG_CACHE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/cudasim-cache.XXXXXX")
export MATRIX_ENGINE_CUDA MODEL_CHECK_ONLY MODEL_CHECK_PROBE XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
sh "${top_srcdir:?}/tests/gpu/model_check.sh"
