#!/bin/sh
# conv_search.sh - the timed search of cudnn_benchmark (engine/cuda/conv.cu)
# against algorithms of known speed, with no GPU: on the simulator's cuDNN
# (tests/cudasim/cudnn.cc) CUDASIM_DNN_DELAY gives each algorithm a device
# time per call, far above the CPU's own time for these small convolutions,
# so the right decision is known. The rule it must follow (issue 11, item 2):
# the heuristics' choice (algorithm 1, IMPLICIT_PRECOMP_GEMM / ALGO_1) is
# kept unless another is faster by more than 2% beyond the noise, and the
# fastest one is taken when it is. ops_check's convolution cases in its
# fp32-nchw-search configuration (every direction, fused forwards too); the
# same rule between cuDNN graph plans and the legacy forward (fp16-nhwc-search,
# the simulated graph API's engines given times too); then two mnist_cnn
# training runs: the second takes the first's choices from the plan cache,
# untimed.
set -u
NAME=conv_search
. "${top_srcdir:?}/tests/cudasim/setup.sh"

# $1 label, $2 CUDASIM_DNN_DELAY, $3 the algorithm every timed convolution
# must end on (a pattern of the log's name: IMPLICIT_GEMM|ALGO_0), $4 kept
# (the heuristics' choice) or replaced
search() {
  log=$W/$1.log
  if ! CUDASIM_DNN_DELAY=$2 MATRIX_ENGINE_CUDA="$M" "$P" -q --no-full-size --no-graph-api --precision fp32 --layout nchw \
    --op conv >"$log" 2>&1; then
    grep -E '^FAIL|^ops_check|cudasim:' "$log" | head -20
    fail "$1: ops_check failed"
  fi
  timed=$(grep -c "conv '.*ms median" "$log")
  good=$(grep "conv '.*ms median" "$log" | grep -c -E ": ($3) fma( \(cached\))?: [0-9.]+ ms median, $(
    [ "$4" = kept ] && echo "kept the heuristics' choice" || echo "heuristics' ")")
  if [ "$timed" -lt 20 ] || [ "$good" != "$timed" ]; then
    grep "conv '.*ms median" "$log" | grep -v -E ": ($3) fma" | head -5
    fail "$1 (delays $2): $good of $timed timed convolutions on $3, $4"
  else
    echo "ok: $1 (delays $2 ms): all $timed timed convolutions on $3, $4"
  fi
}

search within-noise "1=100,0=99.5,2=99.5" "IMPLICIT_PRECOMP_GEMM|ALGO_1" kept
search heuristics-fastest "0=100,2=100" "IMPLICIT_PRECOMP_GEMM|ALGO_1" kept
search another-faster "1=100,0=95,2=99" "IMPLICIT_GEMM|ALGO_0" replaced

# the same rule between cuDNN graph plans and the legacy forward (auto with
# the search, fp16 NHWC: the heuristics' verified plans of engines 1, 2 and 0
# race the legacy call as the step makes it; tests/cudasim/cudnngraph.cc's
# CUDASIM_DNNG_DELAY gives each engine its time): within the noise the legacy
# call stays, a graph plan twice as fast is taken
graph_race() { # $1 label, $2 CUDASIM_DNNG_DELAY, $3 the pattern every forward's decision matches
  log=$W/$1.log
  if ! CUDASIM_DNN_DELAY="0=100,1=100,2=100" CUDASIM_DNNG_DELAY=$2 MATRIX_ENGINE_CUDA="$M" "$P" -q --no-full-size \
    --config fp16-nhwc-search --op conv >"$log" 2>&1; then
    grep -E '^FAIL|^ops_check|cudasim:' "$log" | head -20
    fail "$1: ops_check failed"
  fi
  n=$(grep -c "conv graph '" "$log")
  good=$(grep "conv graph '" "$log" | grep -c -e "$3")
  if [ "$n" -lt 20 ] || [ "$good" != "$n" ]; then
    grep "conv graph '" "$log" | grep -v -e "$3" | head -5
    fail "$1 (graph delays $2): $good of $n forward convolutions decided as expected"
  else
    echo "ok: $1 (graph delays $2 ms, legacy 100 ms): all $n forward convolutions"
  fi
}
graph_race graph-within-noise "1=99.5,2=99.5,0=99.5" \
  ': legacy (graph: slower: legacy 100\.[0-9]* ms median, 5 timed'
graph_race graph-faster "1=99.5,2=50,0=99.5" \
  ': cuDNN graph API, engine 2, verified .*; 50\.[0-9]* ms median, legacy 100\.[0-9]* ms (5 timed)'

if [ -x "$E" ]; then
  XDG_CACHE_HOME=$W/cache
  export XDG_CACHE_HOME
  for run in first cached; do
    CUDASIM_DNN_DELAY="1=100,0=95,2=99" MATRIX_ENGINE_CUDA="$M" MATRIX_ENGINE_CONV=legacy "$E" --device cuda \
      --model mnist_cnn --batch 16 --task train --precision fp32 --cudnn-benchmark on --steps 2 --warmup 1 \
      --result "$W/$run.result" >"$W/$run.log" 2>&1 || fail "mnist_cnn $run run: exit $? ($(tail -1 "$W/$run.log"))"
  done
  n1=$(grep -c "conv '.*heuristics' " "$W/first.log")
  n2=$(grep -c "conv '.*(plan cache): .*heuristics' " "$W/cached.log")
  if [ "$n1" -ge 3 ] && [ "$n1" = "$n2" ] && grep -q 'plan cache: 0 hits' "$W/first.log" &&
    grep -q 'plan cache: [1-9][0-9]* hits, 0 misses' "$W/cached.log"; then
    echo "ok: mnist_cnn: $n1 convolutions searched and replaced, the same $n2 from the plan cache next run"
  else
    grep -E "conv '|plan cache:" "$W/first.log" "$W/cached.log"
    fail "mnist_cnn plan cache: $n1 replaced in the first run, $n2 from the cache in the second"
  fi
else
  echo "SKIP (plan cache part): no $E"
fi
[ $rc = 0 ] && echo "conv_search: all passed"
exit $rc
