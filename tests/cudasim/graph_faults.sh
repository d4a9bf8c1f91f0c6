#!/bin/sh
# graph_faults.sh - the CUDA engine's defences against a wrong cuDNN graph
# plan, with no GPU: on the simulated graph API (tests/cudasim/cudnngraph.cc)
# whose engines are made wrong on demand (CUDASIM_DNNG_WRONG: the last
# element of every output off by more than its value, what a bad edge tile
# does), the engine must reject each wrong plan in its check, use the next
# engine that verifies, else the legacy call or its own kernel, and still
# compute every op right (ops_check):
#   convolution, fp16: engine 1 (both knob choices) wrong -> engine 0
#   convolution, fp16: every engine wrong -> the legacy forward
#   GEN_STATS: only the sums wrong -> the statistics from the separate
#     kernel (ops_check's genstats count fails, as it must: the only FAIL)
#   attention (bert_tiny, bf16): cuDNN's composite graphs (training, with
#     dropout) and unified forward node (inference) against the engine's
#     kernels; the composite engine wrong -> training on the kernels, equal
#     to MATRIX_ENGINE_SDPA=kernel; the unified one wrong -> the kernel
# Then the plan cache: a second mnist_cnn run takes its graph plans from it,
# a third whose engines have all gone wrong rejects them and trains the
# same model (fp16, 3 steps: output, losses, gradients, weights within 1e-2
# of the first). CUDASIM_KEEP=1 keeps the logs.
set -u
NAME=graph_faults
. "${top_srcdir:?}/tests/cudasim/setup.sh"

# ops_check with faults: $1 a label, $2 the configuration, $3 the op filter,
# $4 1 when a FAIL of the genstats count is expected, the rest the environment
ops() {
  label=$1 cfg=$2 op=$3 gs=$4
  shift 4
  log=$W/ops.$label.log
  env "$@" MATRIX_ENGINE_CUDA="$M" "$P" -q --no-full-size --config "$cfg" --op "$op" >"$log" 2>&1
  st=$?
  other=$(grep -E '^FAIL' "$log" | grep -cv '^FAIL genstats')
  if [ "$other" = 0 ] && { [ $st = 0 ] || [ "$gs" = 1 ]; }; then
    echo "ok: $label: $(grep '^ops_check [a-z]' "$log" | head -1)"
  else
    grep -E '^FAIL|^ops_check|cudasim:' "$log" | head -20
    fail "$label: ops_check failed ($log)"
  fi
}

ops conv-engine1-wrong fp16-nhwc conv 0 CUDASIM_DNNG_WRONG=1
l=$W/ops.conv-engine1-wrong.log
has "$l" 'cuDNN graph API, engine 0, verified' "engine 1 wrong"
hasnt "$l" 'cuDNN graph API, engine 1' "engine 1 wrong"
has "$l" 'convolutions: [1-9][0-9]* forward(s) on the cuDNN graph API' "engine 1 wrong"

ops conv-all-wrong fp16-nhwc conv 0 CUDASIM_DNNG_WRONG=all
l=$W/ops.conv-all-wrong.log
has "$l" 'legacy (graph: verify failed max_rel_err' "every engine wrong"
has "$l" 'convolutions: 0 forward(s) on the cuDNN graph API; legacy: 0 no engine, [1-9][0-9]* failed the check' \
  "every engine wrong"

ops genstats-sums-wrong fp16-nhwc-bnstats-conv genstats 1 CUDASIM_DNNG_WRONG=all CUDASIM_DNNG_WRONG_UID=6
l=$W/ops.genstats-sums-wrong.log
has "$l" 'GEN_STATS sums: 1 of [0-9]* channels outside the tolerance' "GEN_STATS sums wrong"
has "$l" '^FAIL genstats .*conv_genstats_ops=0 conv_genstats_fallback=[1-9]' "GEN_STATS sums wrong"

# attention on bert_tiny (bf16, T 16, training with dropout: the composite
# forward and backward graphs; inference: the unified forward node)
bert() { # $1 label, $2 task, the rest the environment (inference: --eval on, no dropout)
  label=$1 task=$2 ev=off
  shift 2
  [ "$task" = infer ] && ev=on
  env "$@" MATRIX_ENGINE_CUDA="$M" "$E" --device cuda --model bert_tiny --batch 4 --seq-len 16 --task "$task" --eval $ev \
    --precision bf16 --steps 2 --warmup 0 --dump "$W/$label.mxw" >"$W/run.$label.log" 2>&1 ||
    fail "$label: matrix-engine exit $? ($(tail -1 "$W/run.$label.log"))"
}
same() { # $1 $2 dumps, $3 tolerance, $4 what
  if "$B/tests/engine/dump_cmp" "$W/$1.mxw" "$W/$2.mxw" "$3" $5 >"$W/cmp.$1.$2.log" 2>&1; then
    echo "ok: $4: $(tail -1 "$W/cmp.$1.$2.log")"
  else
    cat "$W/cmp.$1.$2.log"
    fail "$4: $1 and $2 differ"
  fi
}
bert train-kernel train MATRIX_ENGINE_SDPA=kernel
bert train-cudnn train X=1
has "$W/run.train-cudnn.log" "attention backward 'layers.1.attention' (B 4, H 2, T 16, d 64, bf16, dropout): cuDNN fused SDPA (flash attention), composite graph" \
  "bert_tiny training"
has "$W/run.train-cudnn.log" 'attention backward: cuDNN plan workspace [0-9]* bytes, checked against the engine.s kernels with the same dropout mask' \
  "bert_tiny training"
# (not the final weights: AdamW's first steps turn near-zero bias gradients
# into steps of the learning rate whatever their rounding)
same train-kernel train-cudnn 5e-2 "bert_tiny bf16 training, cuDNN's composite graphs against the engine's kernels" \
  "output losses grad"
bert train-wrong train CUDASIM_DNNG_WRONG=9
has "$W/run.train-wrong.log" "attention forward 'layers.0.attention' (B 4, H 2, T 16, d 64, bf16, dropout): the engine's own kernel: composite graph with our dropout mask: scale then mask: O differs" \
  "the composite engine wrong (forward)"
has "$W/run.train-wrong.log" "attention backward 'layers.1.attention' (B 4, H 2, T 16, d 64, bf16, dropout): the engine's own kernel: d[QKV] of batch element" \
  "the composite engine wrong (backward)"
same train-kernel train-wrong 0 "the composite engine wrong: the engine's kernels, as MATRIX_ENGINE_SDPA=kernel" \
  "output losses grad final"
bert infer-kernel infer MATRIX_ENGINE_SDPA=kernel
bert infer-cudnn infer X=1
has "$W/run.infer-cudnn.log" "attention forward 'layers.0.attention' (B 4, H 2, T 16, d 64, bf16): cuDNN fused SDPA (flash attention)\$" \
  "bert_tiny inference"
same infer-kernel infer-cudnn 5e-2 "bert_tiny bf16 inference, cuDNN's unified SDPA node against the engine's kernels" output
bert infer-wrong infer CUDASIM_DNNG_WRONG=8
has "$W/run.infer-wrong.log" "attention forward 'layers.0.attention' (B 4, H 2, T 16, d 64, bf16): the engine's own kernel: O differs" \
  "the unified forward wrong"
for f in "$W"/run.*.log; do hasnt "$f" 'attention .*not checked' "${f##*/}"; done

# the plan cache across runs, and its graph plans rejected once they are wrong
XDG_CACHE_HOME=$W/cache
export XDG_CACHE_HOME
run() { # $1 label, the rest the environment
  label=$1
  shift
  env "$@" MATRIX_ENGINE_CUDA="$M" "$E" --device cuda --model mnist_cnn --batch 8 --task train \
    --precision fp16 --channels-last on --steps 3 --warmup 0 --dump "$W/$label.mxw" >"$W/run.$label.log" 2>&1 ||
    fail "$label: matrix-engine exit $? ($(tail -1 "$W/run.$label.log"))"
}
run first X=1
has "$W/run.first.log" 'cuDNN graph API, engine 1:2=0, verified' "first run"
run cached X=1
has "$W/run.cached.log" 'cuDNN graph API, engine 1:2=0 (plan cache), verified' "second run"
run rejected CUDASIM_DNNG_WRONG=all
has "$W/run.rejected.log" 'legacy (graph: verify failed' "third run, engines wrong"
if "$B/tests/engine/dump_cmp" "$W/first.mxw" "$W/rejected.mxw" 1e-2 output losses grad final >"$W/cmp.log" 2>&1; then
  echo "ok: plan cache: stored, reused, rejected when wrong; $(tail -1 "$W/cmp.log") (legacy vs graph plans)"
else
  cat "$W/cmp.log"
  fail "the run on the legacy API differs from the graph plans' one"
fi
[ $rc = 0 ] && echo "graph_faults: all passed"
exit $rc
