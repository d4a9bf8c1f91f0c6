#!/bin/sh
# model_check.sh - whole models on the CUDA backend against the CPU backend,
# through `matrix-engine --dump` (engine/weights.h files compared by
# tests/gpu/compare_dumps.py): mnist_cnn and resnet_tiny (every setting below),
# resnet18 and resnet50 at batch 8 on 64x64 images (fp32 train and infer
# against the CPU, tf32 / fp16 / bf16 training trajectories), and BERT
# (bert_cases below: train and infer in fp32 / tf32 / fp16 / bf16, attention
# dropout on and off, the flash form on cuDNN's fused SDPA against the CPU and
# against the engine's own kernels, the compile modes; training with dropout
# through CUDA Graph replays, from measured runs: graph_dropout) in four
# configurations: bert_tiny at batch 4, sequence 16, and at batch 2, sequence
# 512 (the longest BERT takes); bert_base at batch 2, sequence 16 and 128
# (fewer settings). Every run with the same --seed and the same --weights
# (BatchNorm made non-trivial), MATRIX_ENGINE_POISON=1 (the CUDA backend fills
# its activation arena with NaN bytes first: an element no kernel writes shows).
#
#   sh tests/gpu/model_check.sh [OUTDIR]
#
# MODEL_CHECK_ONLY="NAME ..." runs only those configurations (mnist_cnn
# resnet_tiny resnet18 resnet50 bert_tiny bert_tiny_s512 bert_base
# bert_base_s128), and the parts conv_graph (section 4) and bert_accept.
# MODEL_CHECK_NO_GRAPH_API (tests/cudasim/: a cuDNN without its graph API)
# skips the checks of what only that API runs (GEN_STATS), saying so.
#
# Last, without a reference (bert_accept): bert_large at sequence 512 in
# fp32 / tf32 / fp16 / bf16 x compile none / reduce-overhead / max-autotune x
# train / infer, and bert_base at sequence 512 in every precision under CUDA
# Graphs, 2 steps each: each must run (status=ok, a finite loss); "ACCEPT
# OK|FAIL" lines, counted with the checks.
#
# MATRIX_ENGINE names the engine (default: $top_builddir/engine/matrix-engine,
# else engine/matrix-engine under the current directory), PYTHON_TORCH a
# python3 that imports torch (tests/engine/mxw.py reads the dumps; default
# python3). Dumps and logs stay in OUTDIR (default: a temporary directory,
# removed at the end). Exit 0 when every check holds, 1 when one fails, 77
# when `matrix-engine --device cuda` is unsupported because there is no GPU.
#
# What is checked (each line of compare_dumps.py is one check):
#  1. fp32, CUDA against CPU, same flags: output, every parameter gradient of
#     step 1, the losses of 5 steps, the final weights and BN statistics, and
#     the dropout masks (bit-identical), for train and infer, NCHW and NHWC,
#     --compile none and default, eval on and off, inference-mode on.
#  2. tf32 / fp16 / bf16 on CUDA against the CPU's fp32: the output and the
#     loss trajectory over 5 steps (finite, close, moving the same way).
#  3. CUDA against CUDA, the settings that must not change the numbers:
#     --compile none vs default (fused vs unfused), default vs reduce-overhead
#     (CUDA Graph vs eager), max-autotune vs default, --cudnn-benchmark off vs
#     on, --channels-last off vs on (skipped, with the reason, while NCHW and
#     NHWC runs are given different input images).
#  4. convolutions on cuDNN's graph API against its legacy API
#     (MATRIX_ENGINE_CONV=graph vs legacy): ResNet-18 / ResNet-50 inference
#     at batch 1 and 8, fp16 NHWC reduce-overhead, and ResNet-18 fp32 NCHW
#     (conv_graph below).
#  5. the optimizers' multi-tensor kernels against one kernel per op
#     (MATRIX_ENGINE_OPTIM=per-tensor): mnist_cnn, resnet_tiny (SGD) and
#     bert_tiny (AdamW), 3 training steps, bit-identical (optim_check below).
#  6. a BatchNorm's ReLU backward folded into its backward against the two
#     ops (MATRIX_ENGINE_BN_BWD=separate): resnet_tiny and resnet18, fp32 and
#     fp16, NCHW and NHWC, 3 training steps, bit-identical (bnrelu_check).
#  7. BatchNorm statistics from the convolution (cuDNN's GEN_STATS,
#     MATRIX_ENGINE_BNSTATS=conv) against the BatchNorm's own sums (=separate)
#     and against the CPU: resnet_tiny and resnet18 training NHWC, fp32 and
#     fp16, 5 steps, at the tolerances of 1 and 2, and fp16 under
#     reduce-overhead (the GEN_STATS plans replayed in a CUDA Graph) against
#     the eager run (bnstats_check below).
#  Also in 1: resnet_tiny training at batch 1 and 3, NCHW and NHWC.
#
# Tolerances (relative: max|got - ref| / max|ref|; gradients and final
# weights with a floor of 1e-3 of their group's largest, as resnet_ref.py):
#   fp32        output, losses, final 2e-4 (BERT: final 1e-3, see tight_bert;
#               ResNet-18 / -50 training: losses 2e-3, final 2e-2, see
#               tight_imagenet); gradients 1e-4 (issue 11's bound; measured on
#               the simulator: 4-5e-7 for mnist_cnn and bert_tiny, at most
#               2.3e-5 for resnet18's step 1; was 1e-3)
#               (engine CPU vs PyTorch fp32 differ by <= 1e-5 on these models;
#               resnet_tiny trains at --lr 0.001, where 5-step trajectories of
#               two fp32 runs stay within 1e-6)
#   tf32        output 1e-2, losses 1e-2 of the first loss
#   fp16        output 1e-2, losses 2e-2 of the first loss, input 1e-3
#   bf16        output 5e-2, losses 5e-2 of the first loss, input 8e-3
#   step 1's gradients, per tensor in the L2 norm: tf32 1e-1, fp16 1e-1,
#   bf16 3e-1. Why so wide: rounding flips max-pool and ReLU decisions,
#   which move gradient elements whole; on the simulator mnist_cnn's conv1
#   gradient is 2.0e-2 (tf32), 3.2e-2 (fp16) and 1.2e-1 (bf16) off in L2
#   (2.4e-2, 4.2e-2, 1.8e-1 elementwise), bert_tiny's at most 4.6e-4, 1.1e-3,
#   1.1e-2; the tolerances are 2.5-5x the worst seen, and a wrong gradient
#   (2026-11-22's dw on the H100: -0.00044 for -3.59) is off by about 1.
#   The networks with BatchNorm (resnet_tiny, resnet18, resnet50): tf32
#   2.5e-1, fp16 3.5e-1, bf16 7.5e-1 (ill-conditioned at batch 8: see
#   BN_TF32G below).
#   Where fp16's loss scaling skipped step 1, a note instead.
# Each can be overridden: MODEL_CHECK_FP32_RTOL, MODEL_CHECK_FP32_GRAD_RTOL,
# MODEL_CHECK_TF32_RTOL, MODEL_CHECK_FP16_RTOL, MODEL_CHECK_FP16_LOSS_RTOL,
# MODEL_CHECK_BF16_RTOL, MODEL_CHECK_TF32_GRAD_RTOL, MODEL_CHECK_FP16_GRAD_RTOL,
# MODEL_CHECK_BF16_GRAD_RTOL, MODEL_CHECK_BN_{TF32,FP16,BF16}_GRAD_RTOL. Takes 10-15 minutes on one GPU (estimated: never
# run; sections 4 and 5 about a minute each, BERT's part 5-10 with the CPU references of
# bert_base the slow part) and up to about 10 GB in OUTDIR (bert_base's dumps
# hold every gradient and final weight, 1.3 GB each: its CUDA dumps are
# removed once compared).
# FLAGS variables are split into words on purpose; I1..T3 are read through eval.
# shellcheck disable=SC2086,SC2034,SC2154
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
if [ -z "${MATRIX_ENGINE:-}" ]; then
	if [ -n "${top_builddir:-}" ]; then MATRIX_ENGINE=$top_builddir/engine/matrix-engine
	else MATRIX_ENGINE=$(pwd)/engine/matrix-engine; fi
fi
E=$MATRIX_ENGINE
PY=${PYTHON_TORCH:-python3}
CMP="$here/compare_dumps.py"
TMO=${MODEL_CHECK_TIMEOUT:-300}
FP32=${MODEL_CHECK_FP32_RTOL:-2e-4}
FP32G=${MODEL_CHECK_FP32_GRAD_RTOL:-1e-4}
TF32=${MODEL_CHECK_TF32_RTOL:-1e-2}
FP16=${MODEL_CHECK_FP16_RTOL:-1e-2}
FP16L=${MODEL_CHECK_FP16_LOSS_RTOL:-2e-2}
BF16=${MODEL_CHECK_BF16_RTOL:-5e-2}
TF32G=${MODEL_CHECK_TF32_GRAD_RTOL:-1e-1} FP16G=${MODEL_CHECK_FP16_GRAD_RTOL:-1e-1} BF16G=${MODEL_CHECK_BF16_GRAD_RTOL:-3e-1}

outdir=${1:-} # kept: conv_graph and bnstats_check reset the positional parameters (set --)
if [ -n "$outdir" ]; then
	W=$outdir
	mkdir -p "$W"
else
	W=$(mktemp -d "${TMPDIR:-/tmp}/model_check.XXXXXX")
	trap 'rm -rf "$W"' EXIT
fi
key() { sed -n "s/^$1=//p" "$2"; }
. "$(dirname "$0")/probe.sh" # have_gpu

if [ ! -x "$E" ]; then
	echo "FAIL: no engine at '$E' (set MATRIX_ENGINE or top_builddir)"
	exit 1
fi
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	if ! have_gpu; then echo "SKIP: no GPU (and $PY cannot import torch)"; exit 77; fi
	echo "FAIL: $PY cannot import torch, which tests/engine/mxw.py needs to read the dumps (set PYTHON_TORCH)"
	exit 1
fi

# Every run: the CUDA backend poisons its arena. The CPU backend ignores it.
MATRIX_ENGINE_POISON=1
export MATRIX_ENGINE_POISON

# MATRIX_ENGINE_SDPA as the caller set it (tests/cudasim/model_check.sh:
# kernel, the simulator has no cuDNN), restored after a run that sets it
sdpa_saved=${MATRIX_ENGINE_SDPA-}
sdpa_restore() {
	if [ -n "$sdpa_saved" ]; then
		MATRIX_ENGINE_SDPA=$sdpa_saved
		export MATRIX_ENGINE_SDPA
	else
		unset MATRIX_ENGINE_SDPA
	fi
}

# Is there a GPU the engine can use? (MODEL_CHECK_PROBE: the model that asks,
# mnist_cnn unless the caller runs no convolution: tests/cudasim/)
rc=0
"$E" --device cuda --model "${MODEL_CHECK_PROBE:-mnist_cnn}" --batch 2 --steps 1 --warmup 0 --result "$W/probe.result" \
	>"$W/probe.log" 2>&1 || rc=$?
if [ "$rc" -eq 3 ]; then
	reason=$(key reason "$W/probe.result" 2>/dev/null)
	if ! have_gpu; then
		echo "SKIP: no GPU: matrix-engine --device cuda is unsupported here: $reason"
		exit 77
	fi
	echo "FAIL: a GPU is present but matrix-engine --device cuda is unsupported: $reason"
	exit 1
elif [ "$rc" -ne 0 ]; then
	echo "FAIL: matrix-engine --device cuda --model ${MODEL_CHECK_PROBE:-mnist_cnn} exited $rc:"
	tail -n 20 "$W/probe.log"
	exit 1
fi
echo "model_check: $(grep -E '^(gpu|driver|cuda_runtime|cudnn|cublaslt)=' "$W/probe.result" | tr '\n' ' ')"

npass=0 nfail=0 nskip=0 bn=0
failed_list=""
note_fail() {
	nfail=$((nfail + 1))
	failed_list="$failed_list
  $1"
}

# run NAME DEVICE FLAGS...: one dump, $W/NAME.mxw; 0 on success
run() {
	name=$1 dev=$2
	shift 2
	if [ -f "$W/$name.mxw" ]; then return 0; fi
	rc=0
	timeout "$TMO" "$E" --device "$dev" --seed 7 --warmup 0 "$@" --dump "$W/$name.mxw" \
		>"$W/$name.log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] || [ ! -f "$W/$name.mxw" ]; then
		echo "FAIL run $name: matrix-engine --device $dev $* exited $rc"
		tail -n 5 "$W/$name.log" | sed 's/^/    /'
		note_fail "run $name (exit $rc)"
		return 1
	fi
	return 0
}

# compare LABEL REF GOT OPTIONS...: compare_dumps.py, counting its checks
compare() {
	# its own names (sh has no locals): a caller's $label stays its own (bnstats_check's
	# labels grew "...: conv vs separate: conv vs cpu")
	clabel=$1 ref=$2 got=$3
	shift 3
	[ -f "$W/$ref.mxw" ] && [ -f "$W/$got.mxw" ] || return 0 # the run failed and said so
	rc=0
	"$PY" "$CMP" --label "$clabel" "$@" "$W/$ref.mxw" "$W/$got.mxw" >"$W/cmp.out" 2>&1 || rc=$?
	cat "$W/cmp.out"
	ok=$(grep -c '^CHECK OK' "$W/cmp.out")
	ko=$(grep -c '^CHECK FAIL' "$W/cmp.out")
	npass=$((npass + ok))
	if [ "$rc" -eq 3 ]; then
		nskip=$((nskip + 1))
	elif [ "$ko" -gt 0 ] || [ "$rc" -ne 0 ]; then
		[ "$ko" -gt 0 ] || ko=1
		nfail=$((nfail + ko - 1))
		note_fail "$clabel"
	fi
}

# selected: $m is in MODEL_CHECK_ONLY (every configuration when it is unset)
selected() {
	case " ${MODEL_CHECK_ONLY:-$m} " in *" $m "*) return 0 ;; esac
	return 1
}

# selected_part NAME: a part that is not a model configuration (conv_graph,
# bert_accept) is in MODEL_CHECK_ONLY (every part when it is unset)
selected_part() {
	case " ${MODEL_CHECK_ONLY:-$1} " in *" $1 "*) return 0 ;; esac
	return 1
}

# The optimizers' multi-tensor kernels (engine/cuda/ops.cu: one launch per
# optimizer type) against one kernel per op (MATRIX_ENGINE_OPTIM=per-tensor):
# the same arithmetic, so the 3-step runs must be bit-identical (output,
# gradients, losses, final weights and BN statistics), in fp32 and fp16
# (loss scaling, skipped steps), and with a CUDA Graph for resnet_tiny (a
# dump runs whole steps, so through the graph, only for models without
# dropout). The logs must say which kernels ran. Bit-identity needs a
# deterministic step: two fused runs are compared first, and where they
# differ (a library kernel that is not deterministic) the modes are compared
# at the run's tolerance instead, saying so. SGD on the convolutional models,
# AdamW on bert_tiny.
optim_check() {
	ocs="default:fp32 default:fp16"
	[ "$m" != resnet_tiny ] || ocs="$ocs reduce-overhead:fp32"
	for oc in $ocs; do
		cm=${oc%:*} pr=${oc#*:}
		on="$m.cuda.O3.$cm.$pr"
		O3="--task train --steps 3 --channels-last off --compile $cm --precision $pr"
		run "$on" cuda $MF $O3
		run "$on.again" cuda $MF $O3
		MATRIX_ENGINE_OPTIM=per-tensor
		export MATRIX_ENGINE_OPTIM
		run "$on.pt" cuda $MF $O3
		unset MATRIX_ENGINE_OPTIM
		if [ ! -f "$W/$on.mxw" ] || [ ! -f "$W/$on.again.mxw" ] || [ ! -f "$W/$on.pt.mxw" ]; then
			continue # a run failed and said so
		fi
		label="$m $pr --compile $cm optimizer: multi-tensor vs per-tensor kernels"
		if ! grep -q 'in one multi-tensor kernel' "$W/$on.log" ||
			! grep -q 'one kernel each (MATRIX_ENGINE_OPTIM=per-tensor)' "$W/$on.pt.log"; then
			echo "CHECK FAIL $label: the logs do not show the two modes:"
			grep -h 'optimizer:' "$W/$on.log" "$W/$on.pt.log" | sed 's/^/    /'
			note_fail "$label (logs)"
			continue
		fi
		grep -h 'optimizer:' "$W/$on.log" "$W/$on.pt.log" | sed 's/^/   /'
		if "$PY" "$CMP" --label "$m $pr $cm fused twice" $exact "$W/$on.mxw" "$W/$on.again.mxw" \
			>"$W/$on.det.out" 2>&1; then
			compare "$label (bit-identical)" "$on.pt" "$on" $exact
		else
			echo "note $m $pr $cm: two runs with the same flags differ, the step is not deterministic:"
			grep '^CHECK FAIL' "$W/$on.det.out" | head -n 3 | sed 's/^/    /'
			eval "tol=\$optim_tol_$pr"
			case $m:$pr in bert*:fp32) tol=$tight_bert ;; esac
			compare "$label (tolerance: the step is not deterministic)" "$on.pt" "$on" $tol
		fi
	done
	if [ "$m" = resnet_tiny ]; then optim_graph_nodes; fi
}

# A BatchNorm's ReLU backward folded into the BatchNorm's backward
# (pass_bn_relu_bwd; engine/cuda/ops.cu op_bn_bwd recomputes y > 0 from x
# and the forward's coefficients, rounded as y is stored) against an act_bwd
# then a batchnorm_bwd (MATRIX_ENGINE_BN_BWD=separate): the same values reach
# the same arithmetic, so 3-step runs (output, gradients, losses, final
# weights and BN statistics) must be bit-identical, in fp32 and fp16, NCHW
# and NHWC; the logs must say how many were folded. Determinism first, as in
# optim_check.
bnrelu_check() {
	for bc in off:fp32 on:fp32 off:fp16 on:fp16; do
		cl=${bc%:*} pr=${bc#*:}
		on="$m.cuda.B3.$cl.$pr"
		B3="--task train --steps 3 --channels-last $cl --compile default --precision $pr"
		run "$on" cuda $MF $B3
		run "$on.again" cuda $MF $B3
		MATRIX_ENGINE_BN_BWD=separate
		export MATRIX_ENGINE_BN_BWD
		run "$on.sep" cuda $MF $B3
		unset MATRIX_ENGINE_BN_BWD
		if [ ! -f "$W/$on.mxw" ] || [ ! -f "$W/$on.again.mxw" ] || [ ! -f "$W/$on.sep.mxw" ]; then
			continue # a run failed and said so
		fi
		label="$m $pr channels-last $cl: ReLU backward folded into BN backward vs separate"
		if ! grep -q 'bn backward: [1-9][0-9]* of [0-9]* ReLU backwards folded into BatchNorm backward (MATRIX_ENGINE_BN_BWD=fused; ' "$W/$on.log" ||
			! grep -q 'bn backward: 0 of [1-9][0-9]* ReLU backwards folded.*(MATRIX_ENGINE_BN_BWD=separate)' "$W/$on.sep.log"; then
			echo "CHECK FAIL $label: the logs do not show the two modes:"
			grep -h 'bn backward:' "$W/$on.log" "$W/$on.sep.log" | sed 's/^/    /'
			note_fail "$label (logs)"
			continue
		fi
		grep -h 'bn backward:' "$W/$on.log" "$W/$on.sep.log" | sed 's/^/   /'
		if "$PY" "$CMP" --label "$m $pr $cl folded twice" $exact "$W/$on.mxw" "$W/$on.again.mxw" \
			>"$W/$on.det.out" 2>&1; then
			compare "$label (bit-identical)" "$on.sep" "$on" $exact
		else
			echo "note $m $pr channels-last $cl: two runs with the same flags differ, the step is not deterministic:"
			grep '^CHECK FAIL' "$W/$on.det.out" | head -n 3 | sed 's/^/    /'
			eval "tol=\$optim_tol_$pr"
			compare "$label (tolerance: the step is not deterministic)" "$on.sep" "$on" $tol
		fi
	done
}

# BatchNorm statistics from the convolution (engine/cuda/conv.cu: the graph
# CONVOLUTION_FORWARD -> GEN_STATS, MATRIX_ENGINE_BNSTATS=conv) against the
# BatchNorm's own sums (=separate) and against the CPU's fp32 (T2: training,
# NHWC, compile default): fp32 at the tight tolerance, fp16 at the
# trajectory tolerance (cuDNN's f32 sums against our f32-then-double
# partials: not bit-identical). The results must say which mode ran; with
# =conv in fp16 at least one convolution must have taken GEN_STATS (a
# prediction: cuDNN's runtime fusion engines have conv -> genstats for fp16
# NHWC on sm_80+), in fp32 none may (FMA only: the comparison is then said
# to be vacuous). The modes and counts come from the logs (a --dump run
# writes no result file).
bnstats_check() {
	if [ "${MATRIX_ENGINE_CONV:-}" = kernel ]; then
		echo "SKIP $m BatchNorm statistics from the convolution: GEN_STATS is cuDNN's, and MATRIX_ENGINE_CONV=kernel runs none"
		nskip=$((nskip + 1))
		return 0
	fi
	if [ -n "${MODEL_CHECK_NO_GRAPH_API:-}" ]; then # tests/cudasim/: a cuDNN without it
		echo "SKIP $m BatchNorm statistics from the convolution: GEN_STATS needs cuDNN's graph API, which this cuDNN does not have (MODEL_CHECK_NO_GRAPH_API=$MODEL_CHECK_NO_GRAPH_API)"
		nskip=$((nskip + 1))
		return 0
	fi
	for pr in fp32 fp16; do
		n="$m.cuda.T2.bns.$pr"
		for bm in separate conv; do
			MATRIX_ENGINE_BNSTATS=$bm
			export MATRIX_ENGINE_BNSTATS
			run "$n.$bm" cuda $MF $T2 --precision $pr
			unset MATRIX_ENGINE_BNSTATS
		done
		[ -f "$W/$n.conv.mxw" ] && [ -f "$W/$n.separate.mxw" ] || continue # a run failed and said so
		sum='s/.*cuda: BatchNorm statistics: \([0-9]*\) convolution(s) with GEN_STATS[^,]*, \([0-9]*\) fell back.*/\1 \2/p'
		set -- $(sed -n "$sum" "$W/$n.conv.log" | tail -n 1)
		go=${1:-} fb=${2:-}
		label="$m $pr BatchNorm statistics from the convolution"
		echo "   $label: GEN_STATS in ${go:-?} convolution(s), ${fb:-?} fell back"
		if ! grep -q 'cuda: BatchNorm statistics: MATRIX_ENGINE_BNSTATS=conv:' "$W/$n.conv.log" ||
			! grep -q 'cuda: BatchNorm statistics: MATRIX_ENGINE_BNSTATS=separate:' "$W/$n.separate.log" ||
			[ -z "$go" ] || grep -q "cuda: conv genstats '" "$W/$n.separate.log"; then
			echo "CHECK FAIL $label: the logs do not show the two modes"
			grep -h 'BatchNorm statistics' "$W/$n.conv.log" "$W/$n.separate.log" | sed 's/^/    /'
			note_fail "$label (modes)"
			continue
		fi
		if [ "${go:-0}" -eq 0 ]; then
			if [ $pr = fp16 ]; then
				echo "CHECK FAIL $label: no convolution took GEN_STATS; the reasons:"
				note_fail "$label (none taken)"
			else
				echo "SKIP $label: no convolution took GEN_STATS (comparison of two equal paths); the reasons:"
				nskip=$((nskip + 1))
			fi
			grep "cuda: conv genstats '" "$W/$n.conv.log" | sed 's/.*: not fused/    not fused/' | sort | uniq -c | head -n 5
		else
			npass=$((npass + 1))
			echo "CHECK OK   $label: $go convolution(s) with GEN_STATS"
		fi
		if [ $pr = fp32 ]; then tol=$tight fl=; else tol=$traj_fp16; floor_opts $pr T2; fi
		run "$m.cpu.T2" cpu $MF $T2 --threads 4
		compare "$label: conv vs separate" "$n.separate" "$n.conv" $tol
		compare "$label: conv vs cpu" "$m.cpu.T2" "$n.conv" $tol $fl
		# the GEN_STATS plans inside the step's CUDA Graph (captured at step
		# 2: the losses of steps 2-5 and the final weights come from replays)
		if [ $pr = fp16 ] && [ "${go:-0}" -gt 0 ]; then
			MATRIX_ENGINE_BNSTATS=conv
			export MATRIX_ENGINE_BNSTATS
			run "$n.conv.ro" cuda $MF --task train --steps 5 --channels-last on --compile reduce-overhead --precision $pr
			unset MATRIX_ENGINE_BNSTATS
			compare "$label: conv under reduce-overhead vs eager" "$n.conv" "$n.conv.ro" $tol
		fi
	done
}

# One launch for every SGD tensor: the CUDA Graph of a training step has
# N - 1 nodes fewer than with one kernel per op (measured runs: a dump
# writes no result file).
optim_graph_nodes() {
	G="--task train --steps 3 --warmup 0 --compile reduce-overhead"
	label="$m fp32 --compile reduce-overhead optimizer: CUDA Graph nodes"
	rc=0
	"$E" --device cuda --seed 7 $MF $G --result "$W/$m.graph.result" >"$W/$m.graph.log" 2>&1 || rc=$?
	MATRIX_ENGINE_OPTIM=per-tensor "$E" --device cuda --seed 7 $MF $G --result "$W/$m.graph.pt.result" \
		>"$W/$m.graph.pt.log" 2>&1 || rc=$?
	nt=$(sed -n 's/.*optimizer: \([0-9]*\) SGD tensors in one.*/\1/p' "$W/$m.graph.log")
	gf=$(key cuda_graph_nodes "$W/$m.graph.result" 2>/dev/null)
	gp=$(key cuda_graph_nodes "$W/$m.graph.pt.result" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ -n "$nt" ] && [ -n "$gf" ] && [ -n "$gp" ] && [ $((gp - gf)) -eq $((nt - 1)) ]; then
		echo "CHECK OK   $label: $gf, per-tensor $gp ($nt SGD tensors)"
		npass=$((npass + 1))
	else
		echo "CHECK FAIL $label: '$gf', per-tensor '$gp', want $((${nt:-0} - 1)) fewer ('$nt' SGD tensors; exit $rc)"
		tail -n 3 "$W/$m.graph.log" "$W/$m.graph.pt.log" | sed 's/^/    /'
		note_fail "$label"
	fi
}

# weights: the parameters both devices start from, $W/$m.w.mxw (the model's
# own at $MF, BatchNorm randomised), added to MF; 1 when it cannot be made
weights() {
	if [ ! -f "$W/$m.w.mxw" ]; then
		if ! "$E" --device cpu $MF --task infer --eval on --steps 1 --warmup 0 \
			--save-weights "$W/$m.w0.mxw" --result "$W/$m.w0.result" >"$W/$m.w0.log" 2>&1 ||
			! "$PY" "$CMP" --randomize-bn "$W/$m.w0.mxw" "$W/$m.w.mxw" >/dev/null; then
			echo "FAIL: cannot make the weights file for $m"
			note_fail "weights $m"
			return 1
		fi
	fi
	MF="$MF --weights $W/$m.w.mxw"
	return 0
}

# The settings (each with MF): train 5 steps (T), infer (I)
T1="--task train --steps 5 --channels-last off --compile none"
T2="--task train --steps 5 --channels-last on --compile default"
# ResNet-18 / -50's reduced precisions: 12 steps. fp16's loss scaling starts
# at 65536 and halves at each overflow; at batch 8, 64 px, with BatchNorm
# randomised, ResNet-50's step-1 gradients reach 48.6 (conv1.weight, fp32
# CPU), so fp16 overflows until the scale is 1024: on the simulator its 5
# steps were all skipped (nothing left to compare), ResNet-18's first one
T2L="--task train --steps 12 --channels-last on --compile default"
T3="--task train --steps 5 --channels-last on --compile none"
I1="--task infer --eval on --channels-last off --compile none"
I2="--task infer --eval on --inference-mode on --channels-last on --compile default"
I3="--task infer --eval off --channels-last off --compile default"

# Tolerance options by precision: tight for fp32, trajectories for the others.
tight="--rtol $FP32 --grad-rtol $FP32G --loss-rtol $FP32 --final-rtol $FP32"
tight_base=$tight
# ResNet-18 / -50 training in fp32: step 1 as tight (output, every gradient),
# the 5-step trajectory not. Millions of ReLU inputs and max-pool windows make
# a near-zero pre-activation or a near-tie likely; another summation order
# flips it, and from then on two right engines train apart. Measured on the
# CPU alone (resnet18, batch 8, 64 px, NHWC): OpenBLAS called from 4 threads
# against 1 (step-1 gradients 2e-7 apart) ends 3.2e-4 apart in the losses and
# 5.4e-3 in the final weights (conv1.weight); netlib's BLAS against
# OpenBLAS, 2.9e-5 after 2 steps; max-pool indices differ by step 3.
# A wrong gradient or update at steps 2-5 moves them by 1e-1 and more.
# Step 1's gradients too, since 2026-11-30: on the simulator, resnet18 T1
# (NCHW, compile none) against the CPU, one ReLU decision in channel 45 of
# layer1.0.bn1 went the other way (pre-activation near 0, another summation
# order): that channel's gradients moved by 6.9e-3 (layer1.0.conv1.weight,
# layer1.0.bn1.bias), the stem's it reaches by up to 2.2e-3, every other
# tensor by at most 1e-5 (T2, NHWC, had no flip: 9.8e-6); the losses by
# 2.1e-3 over 5 steps. So 2e-2 for the gradients (a wrong kernel is off by
# 1e-1 and more) and 1e-2 for the losses; a note counts the tensors beyond
# issue 11's 1e-4 (--grad-note-rtol), so a reader sees them.
tight_imagenet="--rtol $FP32 --grad-rtol 2e-2 --grad-note-rtol $FP32G --loss-rtol 1e-2 --final-rtol 2e-2"
# ResNet-50's training (batch 8, 64 px) is chaotic even in fp32: the CPU
# alone, from weights each moved by one ulp (compare_dumps.py --perturb-ulp),
# computes step-1 gradients up to 8.5e-2 apart (159 of 161 tensors beyond
# 1e-4), losses 4.8e-2 apart after 5 steps, final weights 0.72 (measured
# 2026-11-30; NCHW and NHWC alike, also at 128 px and with eval on: 1.5e-1,
# 1.4e-2). Its fp32 training runs are judged as trajectories against that
# one-ulp floor (floor_opts fp32): the output at 2e-4, the losses at
# max(1e-2, 4 x their floor) and their trend; step 1's gradients are not
# compared (judged per tensor against the floor, one run of the simulator
# passed at 0.31 and another at 0.94 of the tolerance: a coin toss, as one
# ulp-moved run samples the flips in other places than the engine's own).
# ResNet-50's convolutions are checked shape by shape, forward and backward,
# in ops_check's full-size cases; here, that the whole model trains alike.
chaotic="--trajectory --rtol $FP32 --loss-rtol 1e-2"
# BERT's final weights at the gradients' tolerance, as tests/engine/bert_ref.py:
# AdamW divides a noise-level gradient by sqrt(v) + eps (the attention key
# bias's gradient is zero in exact arithmetic, ~1e-11 computed), which turns
# 1e-11 differences into ~1e-7 per step (CPU against CPU with 4 and 2 threads,
# bert_tiny at sequence 512: 3.5e-4 of the 1e-3 floor)
# and, per tensor, at most 1e-3 of the final elements (at least 1) beyond it
# if within 2 lr a step (--adamw-lr: BERT trains at lr 1e-4): on the CPU
# alone, bert_base with 4 threads against 1 ends with one element of
# layers.4.ffn_in.bias 2.8e-3 away (0.03 lr) and every other within 7.8e-4
tight_bert="--rtol $FP32 --grad-rtol $FP32G --loss-rtol $FP32 --final-rtol 1e-3 --adamw-lr 1e-4"
# and step 1's gradients in the L2 norm (--traj-grad-rtol; not where fp16's
# loss scaling skipped step 1): see the tolerances above. traj_grads TF32G
# FP16G BF16G sets the three with those gradient tolerances.
traj_grads() {
	traj_tf32="--trajectory --rtol $TF32 --loss-rtol $TF32 --traj-grad-rtol $1"
	traj_fp16="--trajectory --rtol $FP16 --loss-rtol $FP16L --input-rtol 1e-3 --traj-grad-rtol $2"
	traj_bf16="--trajectory --rtol $BF16 --loss-rtol $BF16 --input-rtol 8e-3 --traj-grad-rtol $3"
	optim_tol_fp16=$traj_fp16
}
traj_grads "$TF32G" "$FP16G" "$BF16G"
# The networks with BatchNorm (resnet_tiny, resnet18, resnet50): step 1's
# gradients are ill-conditioned at batch 8, so rounding moves all of them,
# not a few elements. Measured (resnet_tiny, T2): the simulator's CUDA
# against the CPU, worst tensor (layer1.0.bn2.bias) 0.096 (tf32), 0.108
# (fp16; 0.141 with GEN_STATS), 0.376 (bf16), every tensor 5-22% off; the
# CPU alone, fp32, from weights moved by 1e-4 of themselves (random, about
# fp16's rounding): up to 0.060, median 0.028, and by 1e-3: up to 0.28.
# Tolerances 2.5x the worst for tf32 / fp16, 2x for bf16: a gradient that
# is zero, of the wrong sign or transposed (off by 1 or more) still fails; a
# partly wrong one is left to the 5-step trajectories. ResNet-18 / -50's
# reduced-precision gradients: not yet measured (their runs take 17 minutes
# on the simulator). MODEL_CHECK_BN_{TF32,FP16,BF16}_GRAD_RTOL override.
BN_TF32G=${MODEL_CHECK_BN_TF32_GRAD_RTOL:-2.5e-1} BN_FP16G=${MODEL_CHECK_BN_FP16_GRAD_RTOL:-3.5e-1}
BN_BF16G=${MODEL_CHECK_BN_BF16_GRAD_RTOL:-7.5e-1}
# Those are caps. Against the CPU, each tensor is held to its own measured
# sensitivity (floor_opts; compare_dumps.py --noise-ref): the CPU's fp32 T2
# run again from the weights rounded to the precision's mantissa (10 bits:
# tf32 / fp16; 7: bf16) moves each step-1 gradient by its "floor"; the
# tensor's tolerance is min(cap, max(base, 4 x floor)). Measured on the
# simulator (2026-11-30, T2): the CUDA run's error per tensor is 0.8-1.8x
# its floor wherever the floor is above 1e-3 (resnet_tiny, resnet18, all
# three precisions; 38 and 62 tensors), so 4 leaves 2x; base covers what no
# floor shows: rounding in the last layer (fc.bias: 2e-4 tf32 / fp16, 1e-3
# bf16) and isolated max-pool / ReLU flips (mnist_cnn conv2: 1.1e-2 against
# a floor of 3e-4): 5e-2 (tf32, fp16), 1.5e-1 (bf16). A tensor whose
# gradient barely depends on rounding is then judged at 5e-2, not 0.25-0.75;
# one whose floor is above half the cap is not judged (noted: ResNet-50 at
# batch 8, 64 px, 126 of 161 in tf32), and the output's and losses'
# tolerances become max(theirs, 4 x their floors) (ResNet-50: rounding the
# weights to tf32 moves its fp32 output by 3.6e-2, its losses by 4.4e-2).
# MODEL_CHECK_NOISE_K, MODEL_CHECK_BN_{TF32,FP16,BF16}_GRAD_BASE override;
# MODEL_CHECK_NOISE_K=0 turns the floor off (the caps alone).
NOISE_K=${MODEL_CHECK_NOISE_K:-4}
BN_TF32B=${MODEL_CHECK_BN_TF32_GRAD_BASE:-5e-2} BN_FP16B=${MODEL_CHECK_BN_FP16_GRAD_BASE:-5e-2}
BN_BF16B=${MODEL_CHECK_BN_BF16_GRAD_BASE:-1.5e-1}
# floor_opts PR SETTING: fl = the compare options of a BatchNorm network's
# PR run at SETTING (T2) against the CPU: the CPU run from the rounded
# weights ($m.cpu.SETTING.rBITS) and the base; empty for the others, under
# MODEL_CHECK_NOISE_K=0, or when that run fails (the caps alone, said)
floor_opts() {
	fl=
	[ "$bn" = 1 ] && [ "$NOISE_K" != 0 ] || return 0
	case $1 in
	bf16) nzb=7 nzbase=$BN_BF16B nzhow="--round-weights 7" ;;
	tf32) nzb=10 nzbase=$BN_TF32B nzhow="--round-weights 10" ;;
	fp32) nzb=ulp nzbase= nzhow=--perturb-ulp ;;
	*) nzb=10 nzbase=$BN_FP16B nzhow="--round-weights 10" ;;
	esac
	if [ ! -f "$W/$m.w.r$nzb.mxw" ] &&
		! "$PY" "$CMP" $nzhow "$W/$m.w.mxw" "$W/$m.w.r$nzb.mxw" >"$W/$m.w.r$nzb.log" 2>&1; then
		echo "FAIL: cannot make $m's weights for the floor ($nzhow): $(tail -n 1 "$W/$m.w.r$nzb.log")"
		note_fail "round weights $m"
		return 0
	fi
	eval "nzflags=\$$2"
	run "$m.cpu.$2.r$nzb" cpu $(echo "$MF" | sed "s|--weights $W/$m.w.mxw|--weights $W/$m.w.r$nzb.mxw|") $nzflags --threads 4 ||
		return 0
	fl="--noise-ref $W/$m.cpu.$2.r$nzb.mxw ${nzbase:+--noise-base $nzbase }--noise-k $NOISE_K"
}
# optim_check: bit-identical, else (a step that is not deterministic) these
exact="--rtol 0 --grad-rtol 0 --loss-rtol 0 --final-rtol 0"
optim_tol_fp32=$tight

for m in mnist_cnn resnet_tiny resnet18 resnet50; do
	selected || continue
	echo "== $m"
	full=1
	case $m in
	mnist_cnn) MF="--model mnist_cnn --batch 16" ;;
	resnet_tiny) MF="--model resnet_tiny --batch 8 --lr 0.001" ;;
	# the real ImageNet models, at a small image so the CPU reference is
	# quick; batch 8, not 2: layer4's BatchNorm sees 2x2 pixels, and over 2
	# samples (8 values a channel) training is so ill-conditioned that any
	# other summation order fails the fp32 checks by step 4 (the CPU itself,
	# from weights 8e-5 apart, computes step 5's gradients 19% apart; the
	# simulator's cuDNN engine 0, summing channel by channel, failed 3 seeds
	# of 3 at batch 2 and passed at 8: engine/NOTES.md)
	*) MF="--model $m --batch 8 --image-size 64 --lr 0.001"; full=0 ;;
	esac
	tight=$tight_base
	[ $full = 1 ] || tight=$tight_imagenet
	if [ $m = mnist_cnn ]; then bn=0; traj_grads "$TF32G" "$FP16G" "$BF16G"
	else bn=1; traj_grads "$BN_TF32G" "$BN_FP16G" "$BN_BF16G"; fi
	weights || continue

	# 1. fp32: CUDA against CPU (the ImageNet models: one train and two infer settings)
	cases="T1 T2 T3 I1 I2 I3"
	[ $full = 1 ] || cases="T1 T2 I1 I3"
	for c in $cases; do
		eval "flags=\$$c"
		run "$m.cpu.$c" cpu $MF $flags --threads 4
		run "$m.cuda.$c" cuda $MF $flags
		tol=$tight
		if [ $m = resnet50 ]; then # training: judged against its fp32 floor (chaotic, below)
			case $c in T*)
				floor_opts fp32 "$c"
				[ -z "$fl" ] || { tol="$chaotic $fl"; echo "note $m fp32 $c: step 1's gradients not compared (chaotic at batch 8, 64 px: see model_check.sh)"; } ;;
			esac
		fi
		compare "$m fp32 $c cuda vs cpu" "$m.cpu.$c" "$m.cuda.$c" $tol
	done
	if [ $m = resnet_tiny ]; then # BatchNorm on running statistics while training
		T4="--task train --steps 5 --eval on --channels-last off --compile default"
		run "$m.cpu.T4" cpu $MF $T4 --threads 4
		run "$m.cuda.T4" cuda $MF $T4
		compare "$m fp32 T4 (train, eval on) cuda vs cpu" "$m.cpu.T4" "$m.cuda.T4" $tight
		# batch 1 (BatchNorm over one sample: NCHW's per-plane and NHWC's
		# per-row sums with a single block of partials, convolutions and
		# their gradients at N = 1) and an odd batch, NCHW and NHWC
		for b in 1 3; do
			for c in T1 T2; do
				eval "flags=\$$c"
				run "$m.cpu.$c.b$b" cpu $MF $flags --batch $b --threads 4
				run "$m.cuda.$c.b$b" cuda $MF $flags --batch $b
				compare "$m fp32 $c batch $b cuda vs cpu" "$m.cpu.$c.b$b" "$m.cuda.$c.b$b" $tight
			done
		done
	fi
	case $m in mnist_cnn | resnet_tiny) optim_check ;; esac
	case $m in resnet_tiny | resnet18) bnrelu_check ;; esac
	case $m in resnet_tiny | resnet18) bnstats_check ;; esac

	if [ $full = 0 ]; then # the ImageNet models: the reduced precisions' trajectories only (T2L)
		run "$m.cpu.T2L" cpu $MF $T2L --threads 4
		for pr in tf32 fp16 bf16; do
			run "$m.cuda.T2L.$pr" cuda $MF $T2L --precision $pr
			eval "tol=\$traj_$pr"
			floor_opts $pr T2L
			compare "$m $pr T2L cuda vs cpu fp32" "$m.cpu.T2L" "$m.cuda.T2L.$pr" $tol $fl
		done
		continue
	fi

	# 2. reduced precisions against the CPU's fp32
	run "$m.cuda.T2.tf32" cuda $MF $T2 --precision tf32
	floor_opts tf32 T2
	compare "$m tf32 T2 cuda vs cpu fp32" "$m.cpu.T2" "$m.cuda.T2.tf32" $traj_tf32 $fl
	run "$m.cuda.T2.fp16" cuda $MF $T2 --precision fp16
	floor_opts fp16 T2
	compare "$m fp16 T2 cuda vs cpu fp32" "$m.cpu.T2" "$m.cuda.T2.fp16" $traj_fp16 $fl
	run "$m.cuda.T2.bf16" cuda $MF $T2 --precision bf16
	floor_opts bf16 T2
	compare "$m bf16 T2 cuda vs cpu fp32" "$m.cpu.T2" "$m.cuda.T2.bf16" $traj_bf16 $fl
	run "$m.cuda.I2.fp16" cuda $MF $I2 --precision fp16
	compare "$m fp16 I2 cuda vs cpu fp32" "$m.cpu.I2" "$m.cuda.I2.fp16" $traj_fp16
	run "$m.cuda.I2.bf16" cuda $MF $I2 --precision bf16
	compare "$m bf16 I2 cuda vs cpu fp32" "$m.cpu.I2" "$m.cuda.I2.bf16" $traj_bf16

	# 3. CUDA against CUDA: settings that must not change the numbers
	T1d="--task train --steps 5 --channels-last off --compile default"
	run "$m.cuda.T1d" cuda $MF $T1d
	compare "$m fp32 compile none vs default (unfused vs fused)" "$m.cuda.T1" "$m.cuda.T1d" $tight
	run "$m.cuda.T1ro" cuda $MF --task train --steps 5 --channels-last off --compile reduce-overhead
	compare "$m fp32 compile default vs reduce-overhead (eager vs CUDA Graph)" "$m.cuda.T1d" "$m.cuda.T1ro" $tight
	run "$m.cuda.T1b" cuda $MF $T1 --cudnn-benchmark on
	compare "$m fp32 cudnn-benchmark off vs on" "$m.cuda.T1" "$m.cuda.T1b" $tight
	compare "$m fp32 channels-last off vs on" "$m.cuda.T1" "$m.cuda.T3" $tight --same-input
	run "$m.cuda.I2ro" cuda $MF --task infer --eval on --inference-mode on --channels-last on --compile reduce-overhead
	compare "$m fp32 infer default vs reduce-overhead" "$m.cuda.I2" "$m.cuda.I2ro" $tight
	run "$m.cuda.I2ma" cuda $MF --task infer --eval on --inference-mode on --channels-last on --compile max-autotune
	compare "$m fp32 infer default vs max-autotune" "$m.cuda.I2" "$m.cuda.I2ma" $tight
	# the same in fp16 (fused epilogues round once less: fp16 tolerances)
	run "$m.cuda.T2.fp16ro" cuda $MF --task train --steps 5 --channels-last on --compile reduce-overhead --precision fp16
	compare "$m fp16 compile default vs reduce-overhead" "$m.cuda.T2.fp16" "$m.cuda.T2.fp16ro" $traj_fp16
	run "$m.cuda.T3.fp16" cuda $MF $T3 --precision fp16
	compare "$m fp16 compile none vs default" "$m.cuda.T3.fp16" "$m.cuda.T2.fp16" $traj_fp16
	run "$m.cuda.T2.fp16b" cuda $MF $T2 --precision fp16 --cudnn-benchmark on
	compare "$m fp16 cudnn-benchmark off vs on" "$m.cuda.T2.fp16" "$m.cuda.T2.fp16b" $traj_fp16
done
tight=$tight_base

# 4. Convolutions on cuDNN's graph API against the legacy API (MATRIX_ENGINE_CONV;
# engine/cuda/conv.cu): ResNet-18 / ResNet-50 inference at batch 1 and 8,
# fp16 NHWC with CUDA Graphs (the batch-1 latency setting), and ResNet-18
# batch 8 in fp32 NCHW; the logits of =graph against =legacy at the
# precision's tolerance. The fp16 graph runs must have put forwards on the
# graph API (conv_graph_ops > 0: on an H100 cuDNN has engines for them),
# the legacy runs none; an fp32 graph run with none is a skip (said), not a
# pass: its comparison would be legacy against legacy.
conv_graph() {
	echo "== convolutions: cuDNN graph API against the legacy API"
	for cg in "resnet18 1 fp16" "resnet18 8 fp16" "resnet50 1 fp16" "resnet50 8 fp16" "resnet18 8 fp32"; do
		set -- $cg
		m=$1 b=$2 pr=$3
		wf=""
		[ -f "$W/$m.w.mxw" ] && wf="--weights $W/$m.w.mxw"
		if [ $pr = fp16 ]; then
			CF="--model $m --batch $b $wf --task infer --eval on --inference-mode on --precision fp16 --channels-last on --compile reduce-overhead --steps 2"
			tol=$traj_fp16
		else
			CF="--model $m --batch $b $wf --task infer --eval on --precision fp32 --channels-last off --compile default --steps 2"
			tol=$tight
		fi
		n="$m.b$b.$pr.conv"
		for ce in legacy graph; do
			MATRIX_ENGINE_CONV=$ce
			export MATRIX_ENGINE_CONV
			run "$n.$ce" cuda $CF
			unset MATRIX_ENGINE_CONV
		done
		# a failed run said so (run); a --dump run writes no result file: the
		# counts from the logs (conv.cu's summary line, one line per forward)
		if [ ! -f "$W/$n.graph.mxw" ] || [ ! -f "$W/$n.legacy.mxw" ]; then continue; fi
		go=$(sed -n 's/.*cuda: convolutions: \([0-9]*\) forward(s) on the cuDNN graph API.*/\1/p' "$W/$n.graph.log" | tail -n 1)
		lo=$(grep -c "cuda: conv graph '.*: cuDNN graph API" "$W/$n.legacy.log")
		echo "   $m b$b $pr graph run: $(grep -h 'cuda: convolutions: ' "$W/$n.graph.log" | sed 's/.*cuda: //' | tr '\n' ' ')"
		if [ "${lo:-x}" != 0 ] || ! grep -q "MATRIX_ENGINE_CONV=legacy: cuDNN's legacy API only" "$W/$n.legacy.log"; then
			echo "CHECK FAIL $m b$b $pr: MATRIX_ENGINE_CONV=legacy ran $lo forwards on the graph API, or its log does not say legacy"
			note_fail "$m b$b $pr conv legacy"
		elif [ "${go:-0}" -eq 0 ]; then
			# nothing ran on the graph API: comparing would be legacy against legacy
			if [ $pr = fp16 ]; then
				echo "CHECK FAIL $m b$b $pr: MATRIX_ENGINE_CONV=graph put no forward on the graph API (so nothing was compared); the reasons:"
				note_fail "$m b$b $pr conv graph ops"
			else
				echo "SKIP $m b$b $pr: MATRIX_ENGINE_CONV=graph put no forward on the graph API, nothing to compare; the reasons:"
				nskip=$((nskip + 1))
			fi
			grep "cuda: conv graph '" "$W/$n.graph.log" | sed 's/.*: legacy/    legacy/' | sort | uniq -c | head -n 5
			continue
		else
			npass=$((npass + 1))
			echo "CHECK OK $m b$b $pr: $go forwards on the graph API, 0 with MATRIX_ENGINE_CONV=legacy"
		fi
		compare "$m batch $b $pr infer: convolutions on the graph API vs the legacy API" \
			"$n.legacy" "$n.graph" $tol
	done
}
selected_part conv_graph && conv_graph

# ---- BERT: bert_tiny and bert_base, sequence 16 and a longer one -----------------------------
# bert_cases: $m names the configuration, $MF its flags, $lvl is full or base
# (bert_base: fewer settings, its CPU reference is the slow part):
#  fp32, CUDA against the CPU (output, every gradient, 5 losses, final weights,
#   dropout masks bit for bit): full T1 T2 I1 I3, base T2 I1;
#  tf32 / fp16 / bf16 against the CPU's fp32 (output, loss trajectory,
#   dropout masks bit for bit): training T2 (attention dropout on: tf32 the
#   probabilities form on the engine's kernels; fp16 / bf16 the flash form
#   with the engine's keep flags, on cuDNN's composite SDPA graphs where they
#   have an engine, and against MATRIX_ENGINE_SDPA=kernel: dropout_sdpa),
#   inference I1 (eval on: fp16 / bf16 in the flash form, on cuDNN's fused
#   SDPA where it has an engine), full also I3 (eval off: dropout in
#   inference, fp16 / bf16 the flash form with keep flags);
#  fp16 / bf16 training without dropout (T5, eval on: the flash form, forward
#   and backward on cuDNN's SDPA where it has an engine) against the CPU, and
#   cuDNN against the engine's kernels (MATRIX_ENGINE_SDPA=kernel);
#  full: CUDA against CUDA: compile none vs default (unfused vs fused), default
#   vs reduce-overhead in fp32 and in fp16 T5 (cuDNN's SDPA inside the CUDA
#   Graph), max-autotune vs default (infer, fp32 and bf16).
# Which attention ran (cuDNN's SDPA or the engine's kernels, and why) is
# printed from the runs' logs (a dump writes no result file).
# drop NAME: bert_base's dumps are 1.3 GB each (every gradient and final
# weight): one no later check reads is removed (the CPU references stay)
drop() {
	case $m in bert_base*) rm -f "$W/$1.mxw" ;; esac
}

# cudnn_ran LABEL LOG [dropout]: 0 when the run of LOG gave at least one
# attention (with dropout: one with the engine's mask) to cuDNN's SDPA; else
# a SKIP naming LABEL with cuDNN's reasons (a comparison of cuDNN against
# the engine's kernels is then the kernels against themselves: vacuous)
cudnn_ran() {
	pat="cuda: attention [a-z]* '.*): cuDNN fused SDPA"
	[ "${3:-}" = dropout ] && pat="cuda: attention [a-z]* '.*, dropout): cuDNN fused SDPA"
	[ -f "$2" ] || return 1
	grep -q "$pat" "$2" && return 0
	echo "SKIP $1: cuDNN ran no attention here (the engine's kernels in both runs); the reasons:"
	grep "cuda: attention [a-z]* '.*the engine's own kernel" "$2" |
		sed 's/.*the engine.s own kernel: /    /' | sort | uniq -c | head -n 4
	nskip=$((nskip + 1))
	return 1
}

# dropout_sdpa: fp16 / bf16 training with attention dropout (T2, eval off:
# the flash form with the engine's keep flags, cuDNN's composite SDPA graphs
# taking them as their dropout mask where they have an engine; the masks
# were compared bit for bit with the CPU's just before) against the same run
# on the engine's kernels (MATRIX_ENGINE_SDPA=kernel); prints which route
# the dropout attention took, and cuDNN's reason when it is the kernels.
dropout_sdpa() {
	MATRIX_ENGINE_SDPA=kernel
	export MATRIX_ENGINE_SDPA
	run "$m.cuda.T2.$pr.kernel" cuda $MF $T2 --precision $pr
	sdpa_restore
	label="$m $pr T2 attention dropout: cuDNN SDPA with the engine's mask vs the engine's kernels"
	cudnn_ran "$label" "$W/$m.cuda.T2.$pr.log" dropout &&
		compare "$label" "$m.cuda.T2.$pr.kernel" "$m.cuda.T2.$pr" $tol
	drop "$m.cuda.T2.$pr.kernel"
	# a dump writes no result file: the route is read from the log (one line
	# per plan: "attention forward|backward '...' (B .., dropout): ...")
	lg="$W/$m.cuda.T2.$pr.log"
	[ -f "$lg" ] || return 0
	if ! grep -q "cuda: attention [a-z]* '.*, dropout): " "$lg"; then
		echo "CHECK FAIL $m $pr T2: no attention with dropout reached cuDNN's SDPA prepare (not in the flash form?)"
		note_fail "$m $pr T2 flash-form dropout"
		return 0
	fi
	npass=$((npass + 1))
	echo "CHECK OK   $m $pr T2: attention dropout in the flash form; route:"
	grep "cuda: attention [a-z]* '.*, dropout): " "$lg" | sed "s/.*cuda: attention \([a-z]*\) '[^']*' /\1 /" |
		sort | uniq -c | sed 's/^/    /'
}

# graph_dropout: training with dropout through the step's CUDA Graph. A dump
# with dropout runs op by op (its hook records the masks), so the dumps'
# "compile default vs reduce-overhead" comparison below never replays a
# graph with dropout. Measured runs do: 5 steps, the graph captured at step
# 2 and replayed for steps 3-5, whose last loss must match the eager run's
# (fp32: the probabilities form on the engine's kernels; fp16: the flash
# form, keep flags drawn in the graph, cuDNN's composite SDPA with them where
# it has an engine). Every replay must draw new masks (the step counter is
# read on the device): replays reusing step 2's masks moved bert_tiny's last
# loss by 5.6e-3 (relative, --lr 0.001; emulated on the CPU, 2026-11-24),
# 28x the fp32 tolerance and 5.6x fp16's 1e-3 (two fp16 runs of the same
# kernels differ only by atomics' order: two eager runs are compared first,
# and the check is skipped, saying so, when they already differ by 2.5e-4).
graph_dropout() {
	for pr in fp32 fp16; do
		label="$m $pr train with dropout: eager vs CUDA Graph replays (last loss)"
		G="--seed 7 --task train --steps 5 --warmup 0 --lr 0.001 --channels-last on --precision $pr"
		n="$m.gd.$pr"
		rc=0
		runs="default:e reduce-overhead:g"
		[ $pr = fp32 ] || runs="$runs default:e2"
		for cm in $runs; do
			"$E" --device cuda $MF $G --compile "${cm%:*}" --result "$W/$n.${cm#*:}.result" \
				>"$W/$n.${cm#*:}.log" 2>&1 || rc=$?
		done
		le=$(key loss "$W/$n.e.result" 2>/dev/null)
		lg=$(key loss "$W/$n.g.result" 2>/dev/null)
		l2=$(key loss "$W/$n.e2.result" 2>/dev/null)
		nodes=$(key cuda_graph_nodes "$W/$n.g.result" 2>/dev/null)
		if [ $pr = fp32 ]; then tol=$FP32; l2=$le; else tol=1e-3; fi
		if [ "$rc" -ne 0 ] || [ -z "$le" ] || [ -z "$lg" ] || [ -z "$l2" ] || [ "${nodes:-0}" -lt 1 ]; then
			echo "CHECK FAIL $label: exit $rc, losses '$le' '$lg', graph nodes '${nodes:-}'"
			tail -n 3 "$W/$n.e.log" "$W/$n.g.log" | sed 's/^/    /'
			note_fail "$label"
			continue
		fi
		v=$("$PY" -c 'import sys; a, b, c, t = map(float, sys.argv[1:]); f = lambda x, y: abs(x - y) / max(abs(x), 1e-3); print("skip" if f(a, c) > t / 4 else "ok" if f(a, b) <= t else "fail", "%.3g %.3g" % (f(a, b), f(a, c)))' "$le" "$lg" "$l2" "$tol")
		set -- $v
		case $1 in
		ok) echo "CHECK OK   $label: $le vs $lg (rel $2, tolerance $tol; $nodes graph nodes)"
			npass=$((npass + 1)) ;;
		skip) echo "SKIP $label: two eager runs differ by $3 already (tolerance $tol): not deterministic enough to decide"
			nskip=$((nskip + 1)) ;;
		*) echo "CHECK FAIL $label: $le vs $lg (rel $2, tolerance $tol): a replay draws other masks than the eager step?"
			note_fail "$label" ;;
		esac
	done
}

bert_cases() {
	T5="--task train --steps 5 --eval on --channels-last off --compile default"
	fp32="T1 T2 I1 I2 I3" red="T2 I1 I2 I3" # I2: inference_mode on (the plan bench_bert measures)
	[ "$lvl" = full ] || { fp32="T2 I1"; red="T2 I1"; }
	for c in $fp32; do
		eval "flags=\$$c"
		run "$m.cpu.$c" cpu $MF $flags --threads 4
		run "$m.cuda.$c" cuda $MF $flags
		compare "$m fp32 $c cuda vs cpu" "$m.cpu.$c" "$m.cuda.$c" $tight_bert
		[ "$lvl" = full ] || drop "$m.cuda.$c"
	done
	run "$m.cpu.T5" cpu $MF $T5 --threads 4
	for pr in tf32 fp16 bf16; do
		eval "tol=\$traj_$pr"
		for c in $red; do
			eval "flags=\$$c"
			run "$m.cpu.$c" cpu $MF $flags --threads 4
			run "$m.cuda.$c.$pr" cuda $MF $flags --precision $pr
			compare "$m $pr $c cuda vs cpu fp32" "$m.cpu.$c" "$m.cuda.$c.$pr" $tol
			[ $c = T2 ] && [ $pr != tf32 ] && dropout_sdpa
			drop "$m.cuda.$c.$pr"
		done
		[ $pr = tf32 ] && continue
		run "$m.cuda.T5.$pr" cuda $MF $T5 --precision $pr
		compare "$m $pr T5 (train, eval on: flash attention) cuda vs cpu fp32" "$m.cpu.T5" \
			"$m.cuda.T5.$pr" $tol
		MATRIX_ENGINE_SDPA=kernel
		export MATRIX_ENGINE_SDPA
		run "$m.cuda.T5.$pr.kernel" cuda $MF $T5 --precision $pr
		sdpa_restore
		label="$m $pr T5 flash attention: cuDNN SDPA vs the engine's kernels"
		cudnn_ran "$label" "$W/$m.cuda.T5.$pr.log" &&
			compare "$label" "$m.cuda.T5.$pr.kernel" "$m.cuda.T5.$pr" $tol
		drop "$m.cuda.T5.$pr.kernel"
		[ "$lvl" = full ] || drop "$m.cuda.T5.$pr"
		for r in I1 T5; do # a dump writes no result file: the plans' lines of the log
			[ -f "$W/$m.cuda.$r.$pr.log" ] || continue
			echo "   $r $pr attention:"
			grep "cuda: attention [a-z]* '" "$W/$m.cuda.$r.$pr.log" |
				sed "s/.*cuda: attention \([a-z]*\) '[^']*' /\1 /" | sort | uniq -c | sed 's/^/     /'
		done
	done
	[ "$lvl" = full ] || return 0
	compare "$m fp32 compile none vs default (unfused vs fused)" "$m.cuda.T1" "$m.cuda.T2" $tight_bert
	run "$m.cuda.T2ro" cuda $MF --task train --steps 5 --channels-last on --compile reduce-overhead
	# with dropout a dump runs op by op: this compares the passes, graph_dropout the graph
	compare "$m fp32 compile default vs reduce-overhead (dump with dropout: op by op, no graph)" \
		"$m.cuda.T2" "$m.cuda.T2ro" $tight_bert
	graph_dropout
	run "$m.cuda.T5.fp16ro" cuda $MF --task train --steps 5 --eval on --channels-last off \
		--compile reduce-overhead --precision fp16
	compare "$m fp16 T5 compile default vs reduce-overhead (flash attention in a CUDA Graph)" \
		"$m.cuda.T5.fp16" "$m.cuda.T5.fp16ro" $traj_fp16
	run "$m.cuda.I3ma" cuda $MF --task infer --eval off --channels-last off --compile max-autotune
	compare "$m fp32 infer default vs max-autotune" "$m.cuda.I3" "$m.cuda.I3ma" $tight_bert
	run "$m.cuda.I1.bf16ma" cuda $MF $I1 --precision bf16 --compile max-autotune
	compare "$m bf16 infer none vs max-autotune" "$m.cuda.I1.bf16" "$m.cuda.I1.bf16ma" $traj_bf16
}

traj_grads "$TF32G" "$FP16G" "$BF16G"
for m in bert_tiny bert_tiny_s512 bert_base bert_base_s128; do
	selected || continue
	echo "== $m"
	case $m in
	bert_tiny) MF="--model bert_tiny --batch 4 --seq-len 16"; lvl=full ;;
	bert_tiny_s512) MF="--model bert_tiny --batch 2 --seq-len 512"; lvl=full ;;
	bert_base) MF="--model bert_base --batch 2 --seq-len 16"; lvl=base ;;
	bert_base_s128) MF="--model bert_base --batch 2 --seq-len 128"; lvl=base ;;
	esac
	weights || continue
	bert_cases
	[ "$m" != bert_tiny ] || optim_check
done

# ---- BERT: what the engine accepts, run for real (no reference) ----------------------------
# accept NAME FLAGS...: one run of 2 steps on the GPU: exit 0, status=ok and,
# training, a finite loss; anything else fails with the engine's reason
accept() {
	name=$1
	shift
	rc=0
	timeout "$TMO" "$E" --device cuda --seed 7 --warmup 1 --steps 2 "$@" --result "$W/$name.result" \
		>"$W/$name.log" 2>&1 || rc=$?
	st=$(key status "$W/$name.result" 2>/dev/null)
	loss=$(key loss "$W/$name.result" 2>/dev/null)
	case "$rc:$st:$loss" in
	0:ok:*[nN][aA][nN]* | 0:ok:*[iI][nN][fF]*)
		echo "ACCEPT FAIL $name: loss $loss"
		note_fail "accept $name (loss $loss)" ;;
	0:ok:*)
		echo "ACCEPT OK   $name: $(key throughput "$W/$name.result") seq/s, peak $(key peak_mem_bytes "$W/$name.result") bytes${loss:+, loss $loss}"
		npass=$((npass + 1)) ;;
	*)
		echo "ACCEPT FAIL $name: exit $rc, status ${st:-none}: $(key reason "$W/$name.result" 2>/dev/null)"
		tail -n 3 "$W/$name.log" | sed 's/^/    /'
		note_fail "accept $name (exit $rc)" ;;
	esac
}

# bert_large (too big for CPU references here) at the longest sequence, every
# precision and compile mode, train and infer; bert_base at sequence 512 in
# every precision under CUDA Graphs. Sequence 128 at full size: bench_bert.sh.
if selected_part bert_accept; then
	echo "== BERT: accepted and run on the GPU (2 steps each)"
	for pr in fp32 tf32 fp16 bf16; do
		for c in none reduce-overhead max-autotune; do
			accept "bert_large.s512.$pr.$c.infer" --model bert_large --batch 2 --seq-len 512 --precision $pr \
				--compile $c --task infer --eval on --inference-mode on
			accept "bert_large.s512.$pr.$c.train" --model bert_large --batch 2 --seq-len 512 --precision $pr \
				--compile $c --task train
		done
		accept "bert_base.s512.$pr.reduce-overhead.train" --model bert_base --batch 4 --seq-len 512 \
			--precision $pr --compile reduce-overhead --task train
		accept "bert_base.s512.$pr.reduce-overhead.infer" --model bert_base --batch 4 --seq-len 512 \
			--precision $pr --compile reduce-overhead --task infer --eval off
	done
fi

echo "model_check: $npass checks passed, $nfail failed, $nskip skipped${outdir:+ (dumps and logs in $W)}"
if [ "$nfail" -gt 0 ]; then
	echo "failed:$failed_list"
	exit 1
fi
exit 0
