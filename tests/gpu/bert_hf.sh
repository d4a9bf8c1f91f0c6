#!/bin/sh
# bert_hf.sh - issue 16's check against PyTorch transformers on the GPU:
# tests/engine/bert_hf.py --device cuda (bert_tiny, fp32: the CUDA backend's
# MLM logits, 5 AdamW losses and every gradient against BertForMaskedLM with
# the same weights, at 1e-4; inference logits). Part of `make check-gpu`
# (about 10 s). Without a GPU: SKIP (77); without transformers: SKIP. On
# the CPU the same script runs in make check: tests/engine/bert_hf.py (CPU
# backend) and tests/cudasim/bert_hf.sh (the CUDA backend on the simulator).
set -u
if [ -z "${MATRIX_ENGINE:-}" ]; then
	if [ -n "${top_builddir:-}" ]; then MATRIX_ENGINE=$top_builddir/engine/matrix-engine
	else MATRIX_ENGINE=$(pwd)/engine/matrix-engine; fi
fi
export MATRIX_ENGINE
E=$MATRIX_ENGINE
SRC=${top_srcdir:-$(dirname "$0")/../..}
PY=${PYTHON_TORCH:-python3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/probe.sh"
gpu_probe "$W"
"$PY" "$SRC/tests/engine/bert_hf.py" --device cuda # not exec: the trap removes $W
