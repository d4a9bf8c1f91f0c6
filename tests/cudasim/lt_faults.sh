#!/bin/sh
# lt_faults.sh - the CUDA engine's defences against a wrong cuBLASLt
# algorithm, with no GPU: on the simulator (tests/cudasim/cublaslt.cc) whose
# algorithms are made wrong on demand (one element of D, the last, off by
# more than its sum of |terms|: what a bad edge tile does), the engine must
# reject each wrong one (a "WRONG ... skipped" line), run the product on the
# next right algorithm, else on its own kernel, drop a cuBLASLt epilogue no
# algorithm gets right, and still compute every op right (ops_check's
# linear cases, linear on cuBLASLt: --no-graph-api). Then the plan cache: a
# second run takes every choice from it, a third whose algorithms have all
# gone wrong rejects the cached choices and trains the same model
# (bert_tiny, 3 steps, fp32: output, losses, gradients and final weights
# within 1e-4 of the first run's). CUDASIM_KEEP=1 keeps the logs.
set -u
NAME=lt_faults
. "${top_srcdir:?}/tests/cudasim/setup.sh"

# ops_check with faults: $1 a label, $2 the configurations (ops_check
# --config), the rest the environment. The timed search (PREC-nchw-search)
# orders the candidates by time and keeps the heuristics' first unless
# clearly slower: one wrong algorithm in fp32 is checked with and without
# it (fp32-nchw-search is the NCHW one); the rejections past that (all
# wrong, the epilogues, none at all) take the same path in either order,
# and run without it (about 25 s less)
ops() {
  label=$1 cfgs=$2
  shift 2
  log=$W/ops.$label.log
  if env "$@" MATRIX_ENGINE_CUDA="$M" "$P" -q --no-full-size --no-graph-api --config "$cfgs" --op linear >"$log" 2>&1; then
    echo "ok: $label: $(grep -c 'is WRONG' "$log") wrong algorithm(s) rejected; $(grep '^ops_check [a-z]' "$log")"
  else
    grep -E '^FAIL|^ops_check|cudasim:' "$log" | head -20
    fail "$label: ops_check failed ($log)"
  fi
}

for prec in fp32 fp16; do
  search=
  [ $prec = fp32 ] && search=,fp32-nchw-search
  ops "$prec-algo0-wrong" "$prec-nchw$search" CUDASIM_LT_WRONG=0
  l=$W/ops.$prec-algo0-wrong.log
  has "$l" 'cuBLASLt algorithm 0 of 3 is WRONG' "$prec algorithm 0 wrong"
  has "$l" 'cuBLASLt algorithm 1 of 3 (heuristics), verified' "$prec algorithm 0 wrong"
  hasnt "$l" 'cuBLASLt algorithm 0 of 3 (heuristics)' "$prec algorithm 0 wrong"
  if [ -n "$search" ]; then # timed: the heuristics' first, within the noise, is wrong and stays out
    has "$l" 'cuBLASLt algorithm [12] of 3, [0-9.]* ms median' "$prec algorithm 0 wrong, timed"
    hasnt "$l" 'cuBLASLt algorithm 0 of 3, [0-9.]* ms median' "$prec algorithm 0 wrong, timed"
  fi

  ops "$prec-all-wrong" "$prec-nchw" CUDASIM_LT_WRONG=all
  l=$W/ops.$prec-all-wrong.log
  has "$l" 'no cuBLASLt algorithm is right: the engine.s own kernel' "$prec all wrong"
  hasnt "$l" 'verified on' "$prec all wrong"
done

ops fp16-epilogue-wrong fp16-nchw CUDASIM_LT_WRONG=0,1,2 CUDASIM_LT_WRONG_EPI=1
l=$W/ops.fp16-epilogue-wrong.log
has "$l" 'lt epilogue BGRADB): cuBLASLt algorithm 2 of 3 is WRONG' "epilogues wrong"
has "$l" 'f16 -> f32): cuBLASLt algorithm 0 of 3 (heuristics), verified' "epilogues wrong (dw without BGRADB)"
hasnt "$l" 'lt epilogue [A-Z_]*[^:]*): cuBLASLt algorithm [0-9] of 3 (heuristics)' "epilogues wrong"

ops fp16-no-algorithm fp16-nchw CUDASIM_LT_NOALGO=1
has "$W/ops.fp16-no-algorithm.log" 'cuBLASLt has no algorithm: the engine.s own kernel' "no algorithm"

# the plan cache across runs, and its choices rejected once they are wrong
if [ -x "$E" ]; then
  XDG_CACHE_HOME=$W/cache
  export XDG_CACHE_HOME
  run() { # $1 label, the rest the environment
    label=$1
    shift
    env "$@" MATRIX_ENGINE_CUDA="$M" MATRIX_ENGINE_CONV=kernel MATRIX_ENGINE_SDPA=kernel "$E" --device cuda \
      --model bert_tiny --batch 4 --seq-len 16 --task train --precision fp32 --steps 3 --warmup 0 \
      --dump "$W/$label.mxw" >"$W/run.$label.log" 2>&1 ||
      fail "$label: matrix-engine exit $? ($(tail -1 "$W/run.$label.log"))"
  }
  run first X=1
  has "$W/run.first.log" 'plan cache: 0 hits, [1-9][0-9]* misses .* [1-9][0-9]* stored' "first run"
  has "$W/run.first.log" "attention: 2 forward and 2 backward op(s) on the engine's own kernels: not of a form cuDNN's fused SDPA takes" \
    "first run (fp32 attention: which kernels ran is said)"
  run cached X=1
  has "$W/run.cached.log" 'cuBLASLt algorithm from the plan cache, verified' "second run"
  has "$W/run.cached.log" 'plan cache: [1-9][0-9]* hits, 0 misses' "second run"
  run rejected CUDASIM_LT_WRONG=all
  has "$W/run.rejected.log" 'cached choice rejected (WRONG in the verification)' "third run, algorithms wrong"
  has "$W/run.rejected.log" 'no cuBLASLt algorithm is right: the engine.s own kernel' "third run, algorithms wrong"
  if "$B/tests/engine/dump_cmp" "$W/first.mxw" "$W/rejected.mxw" 1e-4 output losses grad final >"$W/cmp.log" 2>&1; then
    echo "ok: plan cache: stored, reused, rejected when wrong; $(tail -1 "$W/cmp.log") (own kernel vs cuBLASLt)"
  else
    cat "$W/cmp.log"
    fail "the run on the engine's own kernel differs from the cuBLASLt one"
  fi
else
  echo "SKIP (plan cache part): no $E"
fi
[ $rc = 0 ] && echo "lt_faults: all passed"
exit $rc
