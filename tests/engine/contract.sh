#!/bin/sh
# contract.sh - matrix-engine's command-line and result-file contract:
# exit codes and messages of bad flags, unsupported combinations (exit 3,
# status=unsupported), settings listed in ignored=, the keys of a result,
# and the effect of the passes on what runs and on peak memory.
set -eu
E=${MATRIX_ENGINE:?}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }
key() { sed -n "s/^$1=//p" "$2"; }

# expect_exit CODE EXPECTED_STDERR ARGS...
expect_exit() {
  code=$1 msg=$2; shift 2
  rc=0; "$E" "$@" >"$W/out" 2>"$W/err" || rc=$?
  if [ "$rc" -eq "$code" ] && printf '%s\n' "$msg" | cmp -s - "$W/err"; then ok "exit $code: $*"
  else ko "exit $code: $* (got $rc: $(cat "$W/err"))"; fi
}

expect_exit 2 "matrix-engine: unknown flag '--bogus'
usage: matrix-engine [flags] --result FILE (see --help)" --bogus 1
expect_exit 2 "matrix-engine: --precision: unknown level 'fp8' (levels: fp32 tf32 fp16 bf16 int8)
usage: matrix-engine [flags] --result FILE (see --help)" --precision fp8
expect_exit 2 "matrix-engine: --batch: 0 is out of range (1 to 1073741824)
usage: matrix-engine [flags] --result FILE (see --help)" --batch 0
expect_exit 2 "matrix-engine: flag '--model' needs a value
usage: matrix-engine [flags] --result FILE (see --help)" --model
expect_exit 2 "matrix-engine: unknown model 'vgg' (see --list-models)" --model vgg
# a near miss gets the model it most likely meant; an ambiguous one none
expect_exit 2 "matrix-engine: unknown model 'mnist' (did you mean 'mnist_cnn'? see --list-models)" --model mnist
expect_exit 2 "matrix-engine: unknown model 'bert_bse' (did you mean 'bert_base'? see --list-models)" --model bert_bse
expect_exit 2 "matrix-engine: unknown model 'resnet' (see --list-models)" --model resnet
# --NAME=VALUE reads as --NAME VALUE (issue 21): the same messages, a suggestion for a typo
expect_exit 2 "matrix-engine: --batch: 0 is out of range (1 to 1073741824)
usage: matrix-engine [flags] --result FILE (see --help)" --batch=0
expect_exit 2 "matrix-engine: unknown model 'vgg' (see --list-models)" --model=vgg
expect_exit 2 "matrix-engine: unknown flag '--bach=3' (did you mean '--batch'?)
usage: matrix-engine [flags] --result FILE (see --help)" --bach=3
expect_exit 2 "matrix-engine: flag '--list-models' takes no value (got '--list-models=yes')
usage: matrix-engine [flags] --result FILE (see --help)" --list-models=yes
rc=0; "$E" --model=mnist_cnn --batch=3 --task=train --steps=2 --warmup=1 --threads=1 --result="$W/joined" >/dev/null 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && [ "$(key batch "$W/joined")" = 3 ] && [ "$(key task "$W/joined")" = train ] &&
   [ "$(key samples "$W/joined")" = 2 ] && [ "$(key threads "$W/joined")" = 1 ]
then ok "--NAME=VALUE: a real point"; else ko "--NAME=VALUE: a real point (rc $rc)"; fi
expect_exit 2 "matrix-engine: --warmup: 'soon' is neither a duration (0.2s) nor a step count (10)
usage: matrix-engine [flags] --result FILE (see --help)" --warmup soon
expect_exit 2 "matrix-engine: --lr: 'nan' is not a finite non-negative number
usage: matrix-engine [flags] --result FILE (see --help)" --lr nan
expect_exit 2 "matrix-engine: --rel-ci: 'inf' is not a finite non-negative number
usage: matrix-engine [flags] --result FILE (see --help)" --rel-ci inf
expect_exit 2 "matrix-engine: --min-time: 'nan' is not a duration (e.g. 0.5s, 200ms)
usage: matrix-engine [flags] --result FILE (see --help)" --min-time nan
# --lr 0 took the model's rate; --max-time below --min-time was raised to it, as no recipe may say
expect_exit 2 "matrix-engine: --lr: '0' is not a positive learning rate
usage: matrix-engine [flags] --result FILE (see --help)" --lr 0
expect_exit 2 "matrix-engine: --max-time: 0.1s is below --min-time 0.5s
usage: matrix-engine [flags] --result FILE (see --help)" --max-time 0.1s --min-time 0.5s

# unsupported: exit 3, status and reason in the result file
unsup() {
  reason=$1; shift
  rc=0; "$E" "$@" --result "$W/r" >/dev/null 2>&1 || rc=$?
  if [ "$rc" -eq 3 ] && [ "$(key status "$W/r")" = unsupported ] && [ "$(key reason "$W/r")" = "$reason" ]
  then ok "unsupported: $*"; else ko "unsupported: $* (rc $rc, reason '$(key reason "$W/r" 2>/dev/null)')"; fi
  rm -f "$W/r"
}
# (--device cuda: tests/engine/cuda_nogpu.sh)
unsup "fp16 is not implemented in the CPU backend" --device cpu --precision fp16
unsup "SyncBN needs more than one GPU (gpus: 1 has nothing to synchronise with)" --device cpu --syncbn on
MATRIX_MPIRUN=/nonexistent/mpirun MATRIX_ENGINE_LAUNCH=mpirun; export MATRIX_MPIRUN MATRIX_ENGINE_LAUNCH
unsup "MATRIX_ENGINE_LAUNCH=mpirun needs MPI to start 2 ranks: mpirun not found (install openmpi-bin, set MATRIX_MPIRUN, or leave the ranks to the local launcher)" --device cpu --gpus 2
unset MATRIX_MPIRUN MATRIX_ENGINE_LAUNCH
if grep -qw -e avx512_bf16 -e amx_bf16 /proc/cpuinfo; then
  unsup "bf16 is not implemented in the CPU backend (the CPU has avx512_bf16/amx_bf16)" --device cpu --precision bf16
else
  unsup "bf16 needs avx512_bf16 or amx_bf16, which this CPU lacks" --device cpu --precision bf16
fi

# a measured point: every key of the contract, ignored settings listed
"$E" --device cpu --model mnist_cnn --task train --batch 16 --threads 1 --precision tf32 --cudnn-benchmark on \
  --compile reduce-overhead --warmup 2 --min-time 0.05s --max-time 0.2s --rel-ci 0.05 --result "$W/r"
for k in status throughput unit step_ms step_ms_lo step_ms_hi samples startup_s peak_mem_bytes \
         flops_per_step tflops device engine ignored model task batch threads cpu; do
  if grep -q "^$k=" "$W/r"; then ok "key $k"; else ko "key $k missing"; fi
done
[ "$(key status "$W/r")" = ok ] && ok "status=ok" || ko "status=$(key status "$W/r")"
[ "$(key ignored "$W/r")" = "precision,cudnn_benchmark,compile:cuda_graphs" ] && ok "ignored list" \
  || ko "ignored='$(key ignored "$W/r")'"
awk -F= '$1=="step_ms"{m=$2} $1=="step_ms_lo"{l=$2} $1=="step_ms_hi"{h=$2}
  END{exit !(l>0 && l<=m && m<=h)}' "$W/r" && ok "lo <= median <= hi" || ko "median outside its interval"
[ -z "$(ls "$W" | grep tmp || true)" ] && ok "no temporary file left" || ko "temporary file left"
# start-up in phases (issue 18): to the plan, the plan (nothing to plan on
# the cpu), the first step; with the rest of the warm-up they make startup_s
for k in startup_ms plan_ms first_step_ms plan_cache; do
  if grep -q "^$k=" "$W/r"; then ok "key $k"; else ko "key $k missing"; fi
done
[ "$(key plan_ms "$W/r")" = 0 ] && [ "$(key plan_cache "$W/r")" = none ] && ok "cpu: plan_ms=0, plan_cache=none" \
  || ko "cpu: plan_ms=$(key plan_ms "$W/r") plan_cache=$(key plan_cache "$W/r")"
phases() { # FILE WARMED: the phases are positive and fit in startup_s
  awk -F= -v w="$2" '$1=="startup_ms"{a=$2} $1=="plan_ms"{p=$2} $1=="first_step_ms"{f=$2} $1=="startup_s"{t=$2*1000}
    END{s = a + p + (w ? f : 0); exit !(a > 0 && p >= 0 && f > 0 && s <= t * 1.0001 + 0.001)}' "$1"
}
phases "$W/r" 1 && ok "startup_ms + plan_ms + first_step_ms <= startup_s (warm-up 2 steps)" \
  || ko "phases: $(grep -E '^(startup|plan_ms|first_step)' "$W/r" | tr '\n' ' ')"

# --steps: exactly that many timed steps; the stopping rule's flags say they change nothing
"$E" --device cpu --model mnist_cnn --batch 4 --threads 1 --steps 7 --warmup 0 --min-time 1s --rel-ci 0.1 --result "$W/r" 2>"$W/err"
[ "$(key samples "$W/r")" = 7 ] && ok "--steps 7 gives 7 samples" || ko "samples=$(key samples "$W/r")"
[ "$(grep -c '^matrix-engine: --\(min-time\|rel-ci\) changes nothing here: --steps 7 times exactly that many steps$' "$W/err")" = 2 ] \
  && ok "--steps: --min-time and --rel-ci said to change nothing" || ko "--steps with --min-time, --rel-ci: $(cat "$W/err")"
# flags that do not apply to the model or the task are listed in ignored, as the PyTorch engine lists seq_len
"$E" --device cpu --model mnist_cnn --batch 2 --threads 1 --steps 1 --warmup 0 --seq-len 64 --image-size 32 --lr 0.1 --result "$W/r"
[ "$(key ignored "$W/r")" = lr,seq_len,image_size ] && ok "mnist_cnn infer: lr, seq_len, image_size ignored" \
  || ko "mnist_cnn infer --seq-len --image-size --lr: ignored='$(key ignored "$W/r")'"
"$E" --device cpu --model bert_tiny --batch 2 --seq-len 8 --threads 1 --steps 1 --warmup 0 --task train --lr 0.01 --image-size 32 --result "$W/r"
[ "$(key ignored "$W/r")" = image_size ] && ok "bert_tiny train: image_size ignored, seq_len and lr not" \
  || ko "bert_tiny train: ignored='$(key ignored "$W/r")'"
"$E" --device cpu --model resnet_tiny --batch 2 --threads 1 --steps 1 --warmup 0 --image-size 32 --seq-len 8 --result "$W/r"
[ "$(key ignored "$W/r")" = seq_len ] && ok "resnet_tiny: seq_len ignored, image_size not" \
  || ko "resnet_tiny: ignored='$(key ignored "$W/r")'"
# without a warm-up the first step is the first timed one: startup_s ends where it begins
phases "$W/r" 0 && ok "no warm-up: startup_ms + plan_ms <= startup_s, first_step_ms > 0" \
  || ko "phases without warm-up: $(grep -E '^(startup|plan_ms|first_step)' "$W/r" | tr '\n' ' ')"

# --plan-cache: the cpu backend searches nothing, so it is listed in ignored
"$E" --device cpu --model mnist_cnn --batch 4 --threads 1 --steps 1 --warmup 0 --plan-cache "$W/plans" --result "$W/r"
[ "$(key ignored "$W/r")" = plan_cache ] && [ ! -e "$W/plans" ] && ok "cpu: --plan-cache ignored, nothing written" \
  || ko "cpu --plan-cache: ignored='$(key ignored "$W/r")'"
expect_exit 2 "matrix-engine: --plan-cache: an empty name (expected a directory or off)
usage: matrix-engine [flags] --result FILE (see --help)" --plan-cache ""

# inference_mode on plans memory: lower peak than off (which keeps what a
# backward would read, as autograd does), same model
"$E" --device cpu --model resnet_tiny --batch 16 --threads 1 --steps 2 --warmup 0 --inference-mode off --result "$W/off"
"$E" --device cpu --model resnet_tiny --batch 16 --threads 1 --steps 2 --warmup 0 --inference-mode on --result "$W/on"
poff=$(key peak_mem_bytes "$W/off") pon=$(key peak_mem_bytes "$W/on")
[ "$pon" -lt "$poff" ] && ok "inference_mode on: peak $pon bytes < off: $poff bytes" \
  || ko "inference_mode on: peak $pon bytes, off: $poff bytes"
[ "$(key memory_plan "$W/on")" = reuse ] && [ "$(key memory_plan "$W/off")" = autograd-saved ] && ok "memory_plan keys" \
  || ko "memory_plan keys"

# compile default fuses: fewer ops per step
"$E" --device cpu --model mnist_cnn --batch 8 --threads 1 --steps 2 --warmup 0 --compile default --result "$W/c"
[ "$(key ops_per_step "$W/c")" -lt "$(key ops_per_step "$W/off")" ] && [ "$(key ops_fused "$W/c")" -gt 0 ] \
  && ok "compile default: $(key ops_per_step "$W/c") ops < $(key ops_per_step "$W/off") ops" \
  || ko "compile default did not fuse"

# BN folding: eval + compile default folds every BN of resnet_tiny into its conv
"$E" --device cpu --model resnet_tiny --batch 4 --threads 1 --steps 2 --warmup 0 --eval on --compile none --result "$W/f0"
"$E" --device cpu --model resnet_tiny --batch 4 --threads 1 --steps 2 --warmup 0 --eval on --compile default --result "$W/f1"
[ "$(key bn_folded "$W/f1")" = 12 ] && [ "$(key bn_folded "$W/f0")" = 0 ] \
  && [ "$(key ops_per_step "$W/f1")" -lt "$(key ops_per_step "$W/f0")" ] \
  && [ "$(key peak_mem_bytes "$W/f1")" -lt "$(key peak_mem_bytes "$W/f0")" ] \
  && ok "BN folding: 12 BN folded, $(key ops_per_step "$W/f1") ops < $(key ops_per_step "$W/f0") ops" \
  || ko "BN folding: folded $(key bn_folded "$W/f1"), ops $(key ops_per_step "$W/f1") vs $(key ops_per_step "$W/f0")"
# eval off: no folding (BN on batch statistics), even with compile default
"$E" --device cpu --model resnet_tiny --batch 4 --threads 1 --steps 2 --warmup 0 --compile default --result "$W/f2"
[ "$(key bn_folded "$W/f2")" = 0 ] && ok "no BN folding with eval off" || ko "BN folded with eval off"

# a BN's fused ReLU: its backward folds into the BN backward (pass_bn_relu_bwd)
# unless MATRIX_ENGINE_BN_BWD=separate; the same gradients, bit for bit
for k in fused separate; do
  MATRIX_ENGINE_BN_BWD=$k "$E" --device cpu --model resnet_tiny --batch 2 --threads 1 --steps 2 --warmup 0 --task train \
    --compile default --result "$W/bn.$k" 2>"$W/bn.$k.err"
  MATRIX_ENGINE_BN_BWD=$k "$E" --device cpu --model resnet_tiny --batch 2 --threads 1 --steps 2 --warmup 0 --task train \
    --compile default --channels-last on --dump "$W/bn.$k.dump" 2>/dev/null
done
[ "$(key bn_relu_bwd_folded "$W/bn.fused")" = 9 ] && [ "$(key bn_relu_bwd_folded "$W/bn.separate")" = 0 ] \
  && [ "$(key ops_per_step "$W/bn.fused")" -eq $(($(key ops_per_step "$W/bn.separate") - 9 - 4)) ] \
  && grep -q '^matrix-engine: bn backward: 9 of 9 ReLU backwards folded into BatchNorm backward (MATRIX_ENGINE_BN_BWD=fused; 5 recompute the mask, 4 with a residual input read it from y' "$W/bn.fused.err" \
  && grep -q '^matrix-engine: bn backward: 0 of 9 .*(MATRIX_ENGINE_BN_BWD=separate)$' "$W/bn.separate.err" \
  && ok "BN backward: 9 of 9 ReLU backwards folded, 13 ops fewer (4 residual copies), logged" \
  || ko "BN backward: folded $(key bn_relu_bwd_folded "$W/bn.fused") / $(key bn_relu_bwd_folded "$W/bn.separate"), ops $(key ops_per_step "$W/bn.fused") / $(key ops_per_step "$W/bn.separate"), log: $(cat "$W/bn.fused.err" "$W/bn.separate.err")"
cmp -s "$W/bn.fused.dump" "$W/bn.separate.dump" && ok "BN backward folded: dump (gradients, losses, weights) bit-identical" \
  || ko "BN backward folded: the dump differs from MATRIX_ENGINE_BN_BWD=separate"
rc=0; MATRIX_ENGINE_BN_BWD=yes "$E" --device cpu --model resnet_tiny --batch 2 --steps 1 --result "$W/bn.bad" 2>"$W/err" || rc=$?
[ "$rc" = 2 ] && grep -qx "matrix-engine: MATRIX_ENGINE_BN_BWD='yes' is not one of fused, separate (default fused)" "$W/err" && [ ! -e "$W/bn.bad" ] \
  && ok "MATRIX_ENGINE_BN_BWD=yes: exit 2" || ko "MATRIX_ENGINE_BN_BWD=yes: exit $rc, $(cat "$W/err")"

# inference_mode on lowers the peak for every model family
for m in resnet_tiny bert_tiny; do
  "$E" --device cpu --model $m --batch 4 --seq-len 32 --threads 1 --steps 2 --warmup 0 --inference-mode off --result "$W/m0"
  "$E" --device cpu --model $m --batch 4 --seq-len 32 --threads 1 --steps 2 --warmup 0 --inference-mode on --result "$W/m1"
  [ "$(key peak_mem_bytes "$W/m1")" -lt "$(key peak_mem_bytes "$W/m0")" ] \
    && ok "$m inference_mode on: peak $(key peak_mem_bytes "$W/m1") bytes < $(key peak_mem_bytes "$W/m0") bytes" \
    || ko "$m inference_mode: peak $(key peak_mem_bytes "$W/m1") vs $(key peak_mem_bytes "$W/m0") bytes"
done

# channels-last does not apply to BERT: listed, not silent
"$E" --device cpu --model bert_tiny --batch 2 --seq-len 8 --threads 1 --steps 1 --warmup 0 --channels-last on --result "$W/r"
[ "$(key ignored "$W/r")" = channels_last ] && ok "bert: channels_last ignored" || ko "bert ignored='$(key ignored "$W/r")'"
unsup "--seq-len 1024 exceeds BERT's 512 positions" --model bert_tiny --seq-len 1024

# out of memory: status=oom, the size in the reason, exit 1
rc=0; "$E" --device cpu --model resnet_tiny --batch 1000000000 --result "$W/r" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] && [ "$(key status "$W/r")" = oom ] && grep -q '^reason=out of memory: failed to allocate 12288000000000 bytes' "$W/r" \
  && ok "oom: status, reason with the size, exit 1" || ko "oom: rc $rc, $(cat "$W/r" 2>/dev/null | head -2)"

# a weights or dump file that cannot be written: exit 2 before the run (under ASan: without a leak;
# tests/engine/outputs.sh tries more paths)
expect_exit 2 "matrix-engine: --save-weights: the directory '$W/none' does not exist" --device cpu --model resnet_tiny \
  --batch 2 --threads 1 --steps 1 --warmup 0 --save-weights "$W/none/w" --result "$W/r"
expect_exit 2 "matrix-engine: --dump: the directory '$W/none' does not exist" --device cpu --model resnet_tiny --batch 2 \
  --threads 1 --dump "$W/none/d"
# EMA: one more op per parameter and buffer in training; listed as ignored in inference
"$E" --device cpu --model resnet_tiny --task train --batch 2 --threads 1 --steps 2 --warmup 0 --result "$W/e0"
"$E" --device cpu --model resnet_tiny --task train --batch 2 --threads 1 --steps 2 --warmup 0 --ema on --result "$W/e1"
[ "$(key ops_per_step "$W/e1")" -eq $(( $(key ops_per_step "$W/e0") + 62 )) ] \
  && ok "ema on: 62 EMA ops (38 parameters + 24 BN buffers)" \
  || ko "ema on: $(key ops_per_step "$W/e1") ops vs $(key ops_per_step "$W/e0") ops"
"$E" --model resnet_tiny --batch 2 --threads 1 --steps 1 --warmup 0 --ema on --device auto --result "$W/r"
# auto: cuda where a GPU and the CUDA module are present, else cpu
want=cpu ign=ema
[ -e /dev/nvidia0 ] && [ -e "$(dirname "$E")/matrix-engine-cuda.so" ] && want=cuda ign=threads,ema
[ "$(key ignored "$W/r")" = $ign ] && [ "$(key device "$W/r")" = $want ] && ok "infer: ema ignored, device auto is $want" \
  || ko "infer ema: ignored='$(key ignored "$W/r")' device=$(key device "$W/r") (want $want)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
