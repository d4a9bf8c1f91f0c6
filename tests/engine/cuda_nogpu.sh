#!/bin/sh
# cuda_nogpu.sh - the CUDA side of matrix-engine's contract on a machine
# without a GPU, and the property that CPU points never load the CUDA
# libraries:
#   - built with the CUDA backend (matrix-engine-cuda.so next to the engine)
#     and no GPU: --device cuda exits 3, status=unsupported, a reason that
#     names the missing GPU;
#   - built without it: exit 3, reason "built without the CUDA backend ...";
#   - --device cpu (and --device auto without a GPU) maps no libcudart,
#     libcublas(Lt), libcudnn, libnccl, libcuda nor the module itself: checked
#     with LD_DEBUG=files (every library the loader opens, dlopen included)
#     and in /proc/PID/maps of a running point;
#   - with a GPU (/dev/nvidia0 or nvidia-smi): the CPU-point check runs, then
#     exit 77, as the rest is `make check-gpu`'s.
# ok and ko always succeed, so "test && ok || ko" is an if-then-else here
# shellcheck disable=SC2015
set -eu
E=${MATRIX_ENGINE:?}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
unset MATRIX_ENGINE_CUDA # the module next to the engine, as a user gets it
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }
key() { sed -n "s/^$1=//p" "$2"; }
have_gpu() { [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; }

module=$(dirname "$E")/matrix-engine-cuda.so
built=no
[ -f "$module" ] && built=yes
cfg=${top_builddir:-$(dirname "$(dirname "$E")")}/config.h
if [ $built = no ] && grep -q '^#define HAVE_CUDA 1' "$cfg" 2>/dev/null; then
  ko "configure built the CUDA backend (HAVE_CUDA in $cfg) but there is no $module"
fi

# ---- CPU points load no CUDA library --------------------------------------------
cuda_libs='libcudart|libcublas|libcublasLt|libcudnn|libnccl|libcuda\.so|libnvrtc|matrix-engine-cuda'
cpu_point() {
  dev=$1
  rc=0
  LD_DEBUG=files "$E" --device "$dev" --model mnist_cnn --batch 4 --threads 1 --warmup 0 --steps 2 \
    --result "$W/cpu.result" >"$W/ld.out" 2>"$W/ld.err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    ko "--device $dev point exited $rc: $(tail -n 1 "$W/ld.err")"
    return
  fi
  if ! grep -q 'file=' "$W/ld.err"; then
    echo "note LD_DEBUG=files printed nothing (a static or set-uid engine?): loader check skipped"
  elif grep -E "file=[^ ]*($cuda_libs)" "$W/ld.err" >"$W/cuda.loaded"; then
    ko "--device $dev loads CUDA libraries: $(sed -n 's/.*file=\([^ ;]*\).*/\1/p' "$W/cuda.loaded" | sort -u | tr '\n' ' ')"
  else
    ok "--device $dev loads no CUDA library ($(grep -c 'file=' "$W/ld.err") files opened by the loader)"
  fi
  [ "$(key device "$W/cpu.result")" = cpu ] && ok "--device $dev runs on the cpu" \
    || ko "--device $dev: device=$(key device "$W/cpu.result")"
}
cpu_point cpu
have_gpu || cpu_point auto

# the same in the maps of a point that is running
"$E" --device cpu --model mnist_cnn --batch 4 --threads 1 --warmup 0 --min-time 2s --max-time 2s \
  --result "$W/maps.result" >/dev/null 2>&1 &
pid=$!
sleep 1
if cp "/proc/$pid/maps" "$W/maps" 2>/dev/null && [ -s "$W/maps" ]; then
  if grep -Eq "$cuda_libs" "$W/maps"; then
    ko "a running --device cpu point maps: $(grep -Eo "[^ /]*($cuda_libs)[^ ]*" "$W/maps" | sort -u | tr '\n' ' ')"
  else
    ok "a running --device cpu point maps no CUDA library ($(wc -l <"$W/maps") mappings)"
  fi
else
  echo "note the point ended before its maps could be read: maps check skipped"
fi
wait "$pid" || ko "the --device cpu point of the maps check failed"

# ---- --device cuda without a GPU ------------------------------------------------------
if have_gpu; then
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ] || exit 1
  echo "SKIP: a GPU is present; --device cuda is checked by make check-gpu"
  exit 77
fi
rc=0
"$E" --device cuda --model mnist_cnn --batch 4 --steps 1 --warmup 0 --result "$W/cuda.result" \
  >/dev/null 2>"$W/cuda.err" || rc=$?
status=$(key status "$W/cuda.result" 2>/dev/null || true)
reason=$(key reason "$W/cuda.result" 2>/dev/null || true)
[ "$rc" -eq 3 ] && ok "--device cuda without a GPU exits 3" || ko "--device cuda without a GPU exited $rc"
[ "$status" = unsupported ] && ok "status=unsupported" || ko "status='$status'"
[ "$(key device "$W/cuda.result" 2>/dev/null || true)" = cuda ] && ok "device=cuda in the record" \
  || ko "device='$(key device "$W/cuda.result" 2>/dev/null || true)'"
if [ $built = yes ]; then
  # the module loads and its setup finds no device: the reason names the GPU,
  # not a library that failed to load
  case $reason in
  "built without"* | "unable to load"*) ko "built with CUDA, reason '$reason' (expected the missing GPU)" ;;
  *[Gg][Pp][Uu]*) ok "reason names the missing GPU: $reason" ;;
  *) ko "reason '$reason' does not name the missing GPU" ;;
  esac
else
  case $reason in
  "built without the CUDA backend"*) ok "reason: $reason" ;;
  *) ko "built without CUDA, reason '$reason' (expected 'built without the CUDA backend')" ;;
  esac
fi
grep -q "unsupported: $reason" "$W/cuda.err" && ok "the reason on stderr too" \
  || ko "stderr: $(cat "$W/cuda.err")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
