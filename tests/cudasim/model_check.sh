#!/bin/sh
# model_check.sh - BERT (bert_tiny, batch 4, sequence 16) trained and run on
# the CUDA backend with no GPU: tests/gpu/model_check.sh's bert_tiny
# configuration with the backend's host code as it is and its kernels on the
# CPU simulator (tests/cudasim/), linear and attention on the engine's own
# kernels (MATRIX_ENGINE_GEMM=kernel, MATRIX_ENGINE_SDPA=kernel: there is no
# cuBLASLt or cuDNN here). Against the CPU backend: fp32 output, every
# gradient, 5 losses, final weights and dropout masks bit for bit (train and
# infer, compile none / default); tf32 / fp16 / bf16 trajectories; CUDA
# Graph replays (the simulator captures and replays them) against eager
# steps, with dropout drawing new masks each replay; the multi-tensor AdamW
# against one kernel per tensor, bit for bit. The comparisons of cuDNN
# against the engine's kernels are skipped (SKIP lines, with the reason).
# MODEL_CHECK_ONLY=bert_tiny_s512 adds sequence 512 (minutes).
set -u
M=${top_builddir:?}/tests/cudasim/matrix-engine-cudasim.so
if [ ! -f "$M" ]; then
  echo "SKIP: built without CUDA (no $M)"
  exit 77
fi
MATRIX_ENGINE_CUDA=$M MATRIX_ENGINE_GEMM=kernel MATRIX_ENGINE_SDPA=kernel \
  MODEL_CHECK_ONLY=${MODEL_CHECK_ONLY:-bert_tiny} MODEL_CHECK_PROBE=bert_tiny \
  XDG_CACHE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/cudasim-cache.XXXXXX")
export MATRIX_ENGINE_CUDA MATRIX_ENGINE_GEMM MATRIX_ENGINE_SDPA MODEL_CHECK_ONLY MODEL_CHECK_PROBE XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
sh "${top_srcdir:?}/tests/gpu/model_check.sh"
