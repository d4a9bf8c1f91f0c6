#!/bin/sh
# standin.sh - the CPU standing in for the GPU, so that the GPU checks'
# plumbing (their runs, dumps, comparisons, counts, tables, time limits and
# tests/gpu/session.sh's files) can run on a machine without one. Nothing it
# makes is a GPU figure or a GPU check: most CUDA-only checks fail under it
# (no CUDA Graph, no fused epilogue, no cuDNN), which is expected.
#
#   sh tests/gpu/standin.sh engine ARGS...   as MATRIX_ENGINE
#   sh tests/gpu/standin.sh python ARGS...   as PYTHON_TORCH
#
# engine: runs STANDIN_ENGINE (the real matrix-engine) with ARGS rewritten;
# python: runs STANDIN_PYTHON (default python3) with ARGS, rewritten the same
# way when the script it runs is engine/pytorch/matrix_torch.py with --device
# cuda (the engine's are rewritten whatever the device, so that model_check's
# CPU references match). Rewritten:
#   --device cuda -> cpu         --precision tf32 | fp16 | bf16 -> fp32
#   --model bert_base | bert_large -> bert_tiny, resnet18 | resnet50 -> resnet_tiny
#   --image-size N -> 32         --seq-len N -> at most 32    --batch N -> at most 16
#   --gpus N -> 1 (SyncBN runs where MATRIX_ENGINE_DP=1 gives it a rank of one)
#   --min-time / --max-time -> 0.2s, a --warmup in seconds -> 0.1s, in steps -> at most 1
# Each run says "standin: ARGS" on stderr, and a result file it wrote gets
# the line standin=cpu. session.sh --stand-in makes the two wrappers.
mode=${1:-}
[ $# -gt 0 ] && shift
case $mode in
engine) real=${STANDIN_ENGINE:?standin.sh: set STANDIN_ENGINE to the real matrix-engine} ;;
python)
	real=${STANDIN_PYTHON:-python3}
	case ${1:-} in
	*/matrix_torch.py) ;;
	*) exec "$real" "$@" ;; # anything else (python3 -c, a checker) runs as it is
	esac
	case " $* " in *" --device cuda "*) ;; *) exec "$real" "$@" ;; esac # a CPU point runs as asked
	;;
*)
	echo "usage: standin.sh engine|python ARGS..." >&2
	exit 2
	;;
esac
prev='' result=''
for a; do
	shift
	case $prev in
	--device) [ "$a" = cuda ] && a=cpu ;;
	--precision) case $a in tf32 | fp16 | bf16) a=fp32 ;; esac ;;
	--model) case $a in bert_base | bert_large) a=bert_tiny ;; resnet18 | resnet50) a=resnet_tiny ;; esac ;;
	--image-size) a=32 ;;
	--seq-len) [ "$a" -le 32 ] 2>/dev/null || a=32 ;;
	--batch) [ "$a" -le 16 ] 2>/dev/null || a=16 ;;
	--gpus) a=1 ;;
	--min-time | --max-time) a=0.2s ;;
	--warmup) case $a in *s) a=0.1s ;; *) [ "$a" -le 1 ] 2>/dev/null || a=1 ;; esac ;;
	--result) result=$a ;;
	esac
	set -- "$@" "$a"
	prev=$a
done
echo "standin: $*" >&2
rc=0
"$real" "$@" || rc=$?
if [ -n "$result" ] && [ -f "$result" ]; then echo "standin=cpu" >>"$result"; fi
exit $rc
