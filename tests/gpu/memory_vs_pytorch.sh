#!/bin/sh
# memory_vs_pytorch.sh - peak GPU memory of the native engine against the
# PyTorch engine in the matching mode, ResNet-50 batch 64, fp32 and fp16:
#
#   train                  --task train (PyTorch keeps the autograd graph)
#   eval                   --task infer --eval on --inference-mode off
#                          (grad enabled: PyTorch keeps the saved tensors;
#                          the native engine keeps what its backward would read)
#   eval + inference_mode  --task infer --eval on --inference-mode on
#                          (nothing kept)
#
# Native: peak_mem_bytes = the caching allocator's high-water mark over the
# steps (tensors, private buffers, the cuDNN / cuBLASLt workspace; the
# scratch of algorithm searches is prepare_peak_mem_bytes, apart). PyTorch:
# torch.cuda.max_memory_allocated() from model creation to the end (the
# engine's peak_mem_bytes, mem_source=cuda_max_memory_allocated), with
# cudnn.benchmark off, so no search scratch either. Target: native <= 1.1 x
# PyTorch in every mode; each line prints both and the ratio.
#
#   sh tests/gpu/memory_vs_pytorch.sh [OUTDIR]
#
# MATRIX_ENGINE, PYTHON_TORCH (a python3 with CUDA torch), top_srcdir as for
# the other GPU checks. Exit 0 / 1 / 77 (no GPU, or no CUDA torch).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
if [ -z "${MATRIX_ENGINE:-}" ]; then
	if [ -n "${top_builddir:-}" ]; then MATRIX_ENGINE=$top_builddir/engine/matrix-engine
	else MATRIX_ENGINE=$(pwd)/engine/matrix-engine; fi
fi
E=$MATRIX_ENGINE
PY=${PYTHON_TORCH:-python3}
TE=$top_srcdir/engine/pytorch/matrix_torch.py
LIMIT=${MEM_RATIO_LIMIT:-1.1}
if [ -n "${1:-}" ]; then W=$1; mkdir -p "$W"; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi

. "$(dirname "$0")/probe.sh"
gpu_probe "$W"
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "SKIP: $PY has no CUDA torch"
	exit 77
fi

key() { sed -n "s/^$1=//p" "$2" | head -n 1; }
npass=0 nfail=0
for pr in fp32 fp16; do
	for mode in train eval eval+inference_mode; do
		case $mode in
		train) f="--task train" ;;
		eval) f="--task infer --eval on --inference-mode off" ;;
		*) f="--task infer --eval on --inference-mode on" ;;
		esac
		p="--device cuda --model resnet50 --batch 64 --precision $pr --channels-last on $f --steps 5 --warmup 2"
		n=$(echo "$pr.$mode" | tr + _)
		"$E" $p --result "$W/$n.native" >"$W/$n.native.log" 2>&1
		"$PY" "$TE" $p --result "$W/$n.torch" >"$W/$n.torch.log" 2>&1
		a=$(key peak_mem_bytes "$W/$n.native") b=$(key peak_mem_bytes "$W/$n.torch")
		if [ "$(key status "$W/$n.native")" != ok ] || [ "$(key status "$W/$n.torch")" != ok ] ||
			[ -z "$a" ] || [ -z "$b" ]; then
			echo "FAIL resnet50 b64 $pr $mode: a point did not run (see $W/$n.*.log)"
			nfail=$((nfail + 1))
			continue
		fi
		r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
		line="resnet50 b64 $pr $mode: native $(awk -v a="$a" 'BEGIN { printf "%.3f", a / 1e9 }') GB, PyTorch $(awk -v b="$b" 'BEGIN { printf "%.3f", b / 1e9 }') GB, x$r (memory_plan $(key memory_plan "$W/$n.native"))"
		if awk -v r="$r" -v l="$LIMIT" 'BEGIN { exit !(r <= l) }'; then
			echo "PASS $line"; npass=$((npass + 1))
		else
			echo "FAIL $line (want <= x$LIMIT)"; nfail=$((nfail + 1))
		fi
	done
done
echo "memory_vs_pytorch: $npass passed, $nfail failed${1:+ (results and logs in $W)}"
[ "$nfail" -eq 0 ]
