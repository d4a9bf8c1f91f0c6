#!/bin/sh
# ddp_check.sh - data-parallel ranks of the native engine on GPUs (NCCL),
# the GPU twin of tests/engine/ddp_cpu.sh:
#   1 GPU:   MATRIX_ENGINE_DP=1 (one rank through mpirun, buckets and an NCCL
#            all-reduce of one) gives the plain run's gradients, losses and
#            final weights (fp32, resnet_tiny, 5 steps);
#   2+ GPUs: 2 ranks x 6 against one process x 12 (BN on running
#            statistics): gradients and losses at 1e-4, final weights at 1e-3;
#            a measured ResNet-50 fp16 point: same weights on every rank, and
#            the scale efficiency throughput(2) / (2 x throughput(1)) printed
#            (the seeds' "scale factor", 0.90-0.95 on their machines).
#   sh tests/gpu/ddp_check.sh [OUTDIR]
# Exit 0 / 1; 77 without a GPU or without MPI. The 2-GPU part is skipped,
# with the reason, on a machine with one GPU.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${MATRIX_ENGINE:-}" ]; then
	if [ -n "${top_builddir:-}" ]; then MATRIX_ENGINE=$top_builddir/engine/matrix-engine
	else MATRIX_ENGINE=$(pwd)/engine/matrix-engine; fi
fi
E=$MATRIX_ENGINE
CMP=${DUMP_CMP:-$(dirname "$E")/../tests/engine/dump_cmp}
if [ -n "${1:-}" ]; then W=$1; mkdir -p "$W"; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi
key() { sed -n "s/^$1=//p" "$2" | head -n 1; }
npass=0 nfail=0
pass() { npass=$((npass + 1)); echo "PASS $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL $*"; }
: "$here"

"$E" --device cuda --model mnist_cnn --batch 8 --steps 1 --warmup 0 --result "$W/probe" >"$W/probe.log" 2>&1
if [ $? -eq 3 ]; then echo "SKIP: no GPU ($(key reason "$W/probe"))"; exit 77; fi
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$ngpu" -ge 1 ] 2>/dev/null || ngpu=1

C="--device cuda --model resnet_tiny --task train --steps 5 --warmup 0 --lr 0.001 --eval on"
# cmp_dumps LABEL REF GOT TOL_GRAD
cmp_dumps() {
	for spec in "grad. $4" "losses $4" "final. 1e-3"; do
		set -- "$1" "$2" "$3" "$4" $spec
		if "$CMP" "$2" "$3" "$6" "$5" >"$W/cmp.out" 2>&1; then pass "$1: $5 within $6 ($(tail -n 1 "$W/cmp.out"))"
		else fail "$1: $5 beyond $6"; grep -v '^ok' "$W/cmp.out" | head -n 5; fi
	done
}

"$E" $C --batch 12 --dump "$W/plain.mxw" >"$W/plain.log" 2>&1 || fail "plain run (see $W/plain.log)"
rc=0
MATRIX_ENGINE_DP=1 "$E" $C --batch 12 --dump "$W/dp1.mxw" >"$W/dp1.log" 2>&1 || rc=$?
if [ $rc -eq 3 ]; then
	echo "SKIP: $(grep unsupported "$W/dp1.log" | head -n 1)"
	exit 77
elif [ $rc -ne 0 ]; then
	fail "1 rank through NCCL: exit $rc"; tail -n 5 "$W/dp1.log"
else
	cmp_dumps "1 rank through NCCL vs plain" "$W/plain.mxw" "$W/dp1.mxw" 1e-6
fi

if [ "$ngpu" -lt 2 ]; then
	echo "SKIP: the 2-rank checks need 2 GPUs; $ngpu visible"
else
	if "$E" $C --batch 6 --gpus 2 --dump "$W/dp2.mxw" >"$W/dp2.log" 2>&1; then
		cmp_dumps "2 ranks x 6 vs 1 x 12" "$W/plain.mxw" "$W/dp2.mxw" 1e-4
	else
		fail "2 ranks: exit $?"; tail -n 5 "$W/dp2.log"
	fi
	P="--device cuda --model resnet50 --batch 64 --task train --precision fp16 --channels-last on --max-time 3s"
	"$E" $P --result "$W/r1" >"$W/r1.log" 2>&1
	"$E" $P --gpus 2 --result "$W/r2" >"$W/r2.log" 2>&1
	t1=$(key throughput "$W/r1") t2=$(key throughput "$W/r2")
	if [ "$(key status "$W/r2")" = ok ] && [ "$(key ranks_same_weights "$W/r2")" = 1 ]; then
		pass "resnet50 fp16 b64 x 2 GPUs: $t2 img/s, 1 GPU $t1 img/s, scale efficiency $(awk -v a="$t2" -v b="$t1" 'BEGIN { printf "%.3f", a / (2 * b) }')"
	else
		fail "resnet50 2 GPUs: status $(key status "$W/r2"), same weights $(key ranks_same_weights "$W/r2")"
	fi
fi
echo "ddp_check: $npass passed, $nfail failed${1:+ (dumps and logs in $W)}"
[ "$nfail" -eq 0 ]
