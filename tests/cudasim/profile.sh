#!/bin/sh
# profile.sh - --profile on the CUDA backend (issue 19, item 4), on the CPU
# simulator: each op of the 20 profiled steps between a pair of CUDA events
# (be_prof_mark / be_prof_read), the times read back per op. mnist_cnn
# training and resnet_tiny inference (fp16, channels-last, after a CUDA
# Graph's timed steps): one row per op of the step in the plan's order,
# 20 calls each, total = calls x mean, no negative time, percentages that
# sum to 100, the record's profile keys. The simulator's event times are its
# host clock, so what this shows is the plumbing, not a GPU's op times.
set -u
NAME=profile
. "${top_srcdir:?}/tests/cudasim/setup.sh"
key() { sed -n "s/^$1=//p" "$2" | head -1; }
# check CSV OPS: one row per op, the columns consistent
check() {
  n=$(($(wc -l <"$1") - 1))
  [ "$n" = "$2" ] || fail "$1: $n rows, the step has $2 ops"
  [ "$(head -n 1 "$1")" = "op,kind,calls,total_ms,mean_ms,pct_step,mem_bytes" ] || fail "$1: header $(head -n 1 "$1")"
  awk -F, 'NR > 1 {
    if ($3 != 20) { print "calls " $3 " in: " $0; bad = 1 }
    if ($4 < 0 || $5 < 0 || $7 < 0) { print "negative: " $0; bad = 1 }
    d = $4 - $3 * $5; if (d < 0) d = -d
    if (d > 1e-4 * $4 + 1e-6) { print "total != calls x mean: " $0; bad = 1 }
    pct += $6; tot += $4 }
    END { if (pct < 99.5 || pct > 100.5) { print "percentages sum to " pct; bad = 1 }
          if (tot <= 0) { print "no time at all"; bad = 1 }
          exit bad }' "$1" >"$1.bad" || fail "$1: rows inconsistent: $(head -3 "$1.bad")"
}
cd "$W"
if MATRIX_ENGINE_CUDA=$M "$E" --device cuda --model mnist_cnn --task train --batch 8 --warmup 1 --steps 2 \
    --profile t.csv --result rt >t.log 2>&1; then
  check t.csv "$(key ops_per_step rt)"
  [ "$(sed -n 2p t.csv | cut -d, -f1-3)" = "conv1,conv,20" ] || fail "mnist_cnn: first row $(sed -n 2p t.csv)"
  has t.csv "^conv1,conv_bwd,20," "mnist_cnn: a backward op"
  [ "$(key profile rt)" = t.csv ] || fail "mnist_cnn: profile key $(key profile rt)"
  [ "$(key profile_steps rt)" = 20 ] || fail "mnist_cnn: profile_steps $(key profile_steps rt)"
  [ "$(key device rt)" = cuda ] || fail "mnist_cnn: ran on $(key device rt)"
else
  cat t.log; fail "mnist_cnn training with --profile on the CUDA backend"
fi
if MATRIX_ENGINE_CUDA=$M "$E" --device cuda --model resnet_tiny --task infer --batch 2 --precision fp16 \
    --channels-last on --compile reduce-overhead --warmup 1 --steps 2 --profile i.csv --result ri >i.log 2>&1; then
  check i.csv "$(key ops_per_step ri)"
  [ "$(key device ri)" = cuda ] || fail "resnet_tiny: ran on $(key device ri)"
else
  cat i.log; fail "resnet_tiny fp16 NHWC inference in a CUDA Graph with --profile on the CUDA backend"
fi
[ $rc = 0 ] && echo "profile: the CUDA backend's per-op profiles consistent (mnist_cnn training, resnet_tiny fp16 NHWC graph inference)"
exit $rc
