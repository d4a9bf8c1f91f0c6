#!/bin/sh
# bert_hf.sh - tests/engine/bert_hf.py on the CUDA backend with no GPU: the
# native BERT's MLM logits, loss trajectory and every gradient against Hugging
# Face's BertForMaskedLM with the same weights (fp32, 1e-4), the backend's
# host code as it is and its kernels and libraries on the CPU simulator
# (tests/cudasim/): the gather, the tied decoder on cuBLASLt, the fused
# softmax cross-entropy.
set -u
M=${top_builddir:?}/tests/cudasim/matrix-engine-cudasim.so
if [ ! -f "$M" ]; then
  echo "SKIP: built without CUDA (no $M)"
  exit 77
fi
if [ -z "${PYTHON_TORCH:-}" ]; then
  echo "SKIP: no python3 with torch (configure's PYTHON_TORCH)"
  exit 77
fi
MATRIX_ENGINE_CUDA=$M XDG_CACHE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/cudasim-cache.XXXXXX")
export MATRIX_ENGINE_CUDA XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
"$PYTHON_TORCH" "${top_srcdir:?}/tests/engine/bert_hf.py" --device cuda
