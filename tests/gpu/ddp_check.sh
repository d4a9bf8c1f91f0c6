#!/bin/sh
# ddp_check.sh - data-parallel ranks of the native engine on GPUs (NCCL),
# the GPU twin of tests/engine/ddp_cpu.sh:
#   1 GPU:   MATRIX_ENGINE_DP=1 (one rank started by the engine's local
#            launcher, no MPI: NCCL bootstrapped over the shm host
#            communicator, buckets and an NCCL all-reduce of one) gives the
#            plain run's gradients, losses and final weights (fp32,
#            resnet_tiny, 5 steps), and the log and result say
#            launcher=local, comm=nccl, comm_host=shm; the same rank under
#            MATRIX_ENGINE_LAUNCH=mpirun (NCCL bootstrapped over MPI) gives
#            the same (skipped, with the reason, where MPI cannot start it:
#            the lent machine's bundle has no Open MPI); the same with
#            --syncbn on (BN on batch statistics, each BN's sums through an
#            NCCL all-reduce of one rank) against the plain run on batch
#            statistics, outputs too; a measured SyncBN point under
#            --compile reduce-overhead (NCCL inside the CUDA Graph) runs,
#            and its dump (steps 2.. replay the graph) equals the plain
#            run's under reduce-overhead at 1e-6;
#   2+ GPUs: 2 ranks x 6 against one process x 12 (BN on running
#            statistics): gradients and losses at 1e-4, final weights at 1e-3;
#            SyncBN (tests/engine/ddp_cpu.sh's check on GPUs): 2 ranks x 6
#            with --syncbn on against one process x 12 on batch statistics,
#            gradients, losses and rank 0's outputs (the first 6 rows) at
#            1e-4, final weights at 1e-3, and the control (without SyncBN the
#            gradients differ; a failed run or a broken dump is a failure,
#            not a difference); a measured ResNet-50 fp16 point: same weights
#            on every rank, and the scale efficiency throughput(2) / (2 x
#            throughput(1)) printed (the seeds' "scale factor", 0.90-0.95 on
#            their machines); the same point with SyncBN (same weights, its
#            throughput beside the one without); 2 ranks with SyncBN under
#            --compile reduce-overhead (NCCL calls of both kinds in the
#            CUDA Graph) end with the same weights, with synced BN ops, and
#            their dump equals 1 x 12's under reduce-overhead at 1e-4 (the
#            same weights alone hold whatever SyncBN computes).
# The 1-rank comparisons are at 1e-6, not bit for bit: two runs may differ in
# the last bits where cuDNN picks a non-deterministic algorithm (the BN op
# alone, synchronised over one rank, is bit-identical: tests/gpu/ops_check).
#   sh tests/gpu/ddp_check.sh [OUTDIR]
# The ranks are started by the local launcher (MATRIX_ENGINE_LAUNCH unset:
# auto), so nothing here needs MPI but the one mpirun comparison.
# Exit 0 / 1; 77 without a GPU (or an engine that cannot run ranks). The
# 2-GPU part is skipped, with the reason, on a machine with one GPU.
# DDP_CHECK_GPUS overrides the count nvidia-smi gives, DDP_CHECK_SMALL puts
# the measured points on resnet_tiny (tests/cudasim/ddp_check.sh: two
# simulated devices, NCCL between processes).
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

. "$(dirname "$0")/probe.sh"
gpu_probe "$W"
ngpu=${DDP_CHECK_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
[ "$ngpu" -ge 1 ] 2>/dev/null || ngpu=1

B="--device cuda --model resnet_tiny --task train --steps 5 --warmup 0 --lr 0.001"
C="$B --eval on"
# cmp_dumps LABEL REF GOT TOL_GRAD [EXTRA "PREFIX TOL"...]
cmp_dumps() {
	label=$1 ref=$2 got=$3 tol=$4; shift 4
	if [ ! -x "$CMP" ]; then # the GPU bundle builds no test program: session.sh compiles it, or DUMP_CMP
		fail "$label: no dump_cmp at '$CMP' (make tests/engine/dump_cmp, or set DUMP_CMP)"; return
	fi
	for spec in "grad. $tol" "losses $tol" "final. 1e-3" "$@"; do
		set -- $spec
		if "$CMP" "$ref" "$got" "$2" "$1" >"$W/cmp.out" 2>&1; then pass "$label: $1 within $2 ($(tail -n 1 "$W/cmp.out"))"
		else fail "$label: $1 beyond $2"; grep -v '^ok' "$W/cmp.out" | head -n 5; fi
	done
}
# synced LOG: the engine said it synchronises at least one BatchNorm op
synced() { grep -q 'syncbn: [1-9][0-9]* BatchNorm ops' "$1"; }

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
# who started it and what carried the host side: the measured point says
MATRIX_ENGINE_DP=1 "$E" $C --batch 12 --steps 3 --warmup 1 --result "$W/dp1r" >"$W/dp1r.log" 2>&1
if [ "$(key status "$W/dp1r")" = ok ] && [ "$(key launcher "$W/dp1r")" = local ] &&
	[ "$(key comm "$W/dp1r")" = nccl ] && [ "$(key comm_host "$W/dp1r")" = shm ] &&
	grep -q 'launcher=local' "$W/dp1r.log"; then
	pass "1 rank, local launcher: launcher=local comm=nccl comm_host=shm, $(key nccl_version "$W/dp1r")"
else
	fail "1 rank, local launcher: status $(key status "$W/dp1r") launcher $(key launcher "$W/dp1r") comm $(key comm "$W/dp1r") comm_host $(key comm_host "$W/dp1r") (see $W/dp1r.log)"
fi
# the same rank under mpirun: NCCL's id broadcast over MPI instead
rc=0
MATRIX_ENGINE_LAUNCH=mpirun MATRIX_ENGINE_DP=1 "$E" $C --batch 12 --dump "$W/dp1m.mxw" >"$W/dp1m.log" 2>&1 || rc=$?
if [ $rc -eq 3 ]; then
	echo "SKIP 1 rank under mpirun (NCCL bootstrapped over MPI): $(grep unsupported "$W/dp1m.log" | head -n 1)"
elif [ $rc -ne 0 ]; then
	fail "1 rank under mpirun: exit $rc"; tail -n 5 "$W/dp1m.log"
else
	cmp_dumps "1 rank under mpirun through NCCL vs plain" "$W/plain.mxw" "$W/dp1m.mxw" 1e-6
fi

# SyncBN over one rank: each BN's sums through an NCCL all-reduce of one
"$E" $B --batch 12 --dump "$W/plain_bn.mxw" >"$W/plain_bn.log" 2>&1 || fail "plain run, batch statistics (see $W/plain_bn.log)"
if MATRIX_ENGINE_DP=1 "$E" $B --batch 12 --syncbn on --dump "$W/sb1.mxw" >"$W/sb1.log" 2>&1 && synced "$W/sb1.log"; then
	cmp_dumps "1 rank SyncBN through NCCL vs plain" "$W/plain_bn.mxw" "$W/sb1.mxw" 1e-6 "output 1e-6"
else
	fail "1 rank SyncBN through NCCL: exit or log (see $W/sb1.log)"; tail -n 5 "$W/sb1.log"
fi
# the same in a measured step captured into a CUDA Graph (NCCL calls inside)
MATRIX_ENGINE_DP=1 "$E" $B --batch 12 --syncbn on --compile reduce-overhead --steps 20 --warmup 2 \
	--result "$W/sbg1" >"$W/sbg1.log" 2>&1
if [ "$(key status "$W/sbg1")" = ok ] && [ "$(key syncbn_ops "$W/sbg1")" -gt 0 ] 2>/dev/null &&
	[ "$(key cuda_graph "$W/sbg1")" = on ]; then
	pass "1 rank SyncBN under reduce-overhead: $(key syncbn_ops "$W/sbg1") BN ops synced, $(key throughput "$W/sbg1") img/s"
else
	fail "1 rank SyncBN under reduce-overhead: status $(key status "$W/sbg1") (see $W/sbg1.log)"; tail -n 5 "$W/sbg1.log"
fi
# and its numbers: steps 2.. of a dump replay the captured graph (no
# dropout: whole steps), against the plain run with the same graph passes
"$E" $B --batch 12 --compile reduce-overhead --dump "$W/plain_bng.mxw" >"$W/plain_bng.log" 2>&1 ||
	fail "plain run under reduce-overhead (see $W/plain_bng.log)"
if MATRIX_ENGINE_DP=1 "$E" $B --batch 12 --syncbn on --compile reduce-overhead --dump "$W/sbg1.mxw" \
	>"$W/sbg1d.log" 2>&1 && synced "$W/sbg1d.log"; then
	cmp_dumps "1 rank SyncBN in a CUDA Graph vs plain" "$W/plain_bng.mxw" "$W/sbg1.mxw" 1e-6 "output 1e-6"
else
	fail "1 rank SyncBN in a CUDA Graph: exit or log (see $W/sbg1d.log)"; tail -n 5 "$W/sbg1d.log"
fi

if [ "$ngpu" -lt 2 ]; then
	echo "SKIP: the 2-rank checks need 2 GPUs; $ngpu visible"
else
	if "$E" $C --batch 6 --gpus 2 --dump "$W/dp2.mxw" >"$W/dp2.log" 2>&1; then
		cmp_dumps "2 ranks x 6 vs 1 x 12" "$W/plain.mxw" "$W/dp2.mxw" 1e-4
	else
		fail "2 ranks: exit $?"; tail -n 5 "$W/dp2.log"
	fi
	if "$E" $B --batch 6 --gpus 2 --syncbn on --dump "$W/sb2.mxw" >"$W/sb2.log" 2>&1 && synced "$W/sb2.log"; then
		cmp_dumps "2 ranks x 6 SyncBN vs 1 x 12" "$W/plain_bn.mxw" "$W/sb2.mxw" 1e-4 "output 1e-4"
	else
		fail "2 ranks SyncBN: exit or log (see $W/sb2.log)"; tail -n 5 "$W/sb2.log"
	fi
	# control: batch statistics per rank differ from the global batch's
	# (dump_cmp: 1 differs; 2, a missing or broken dump, is no evidence)
	rc=0
	if "$E" $B --batch 6 --gpus 2 --dump "$W/nosync2.mxw" >"$W/nosync2.log" 2>&1; then
		"$CMP" "$W/plain_bn.mxw" "$W/nosync2.mxw" 1e-4 grad. >/dev/null 2>&1 || rc=$?
	else
		rc=$?
		fail "control: 2 ranks without SyncBN: exit $rc (see $W/nosync2.log)"; rc=-1
	fi
	if [ $rc -eq 0 ]; then
		fail "control: BN over each rank's slice matched the global batch (the SyncBN check cannot fail)"
	elif [ $rc -eq 1 ]; then
		pass "control: without SyncBN the gradients differ from the global batch's"
	elif [ $rc -ne -1 ]; then
		fail "control: dump_cmp exit $rc (see $W/plain_bn.log, $W/nosync2.log)"
	fi
	P="--device cuda --model resnet50 --batch 64 --task train --precision fp16 --channels-last on --max-time 3s"
	if [ -n "${DDP_CHECK_SMALL:-}" ]; then # tests/cudasim/: ResNet-50 at batch 64 would take hours on a CPU
		P="--device cuda --model resnet_tiny --batch 4 --task train --precision fp16 --channels-last on --steps 3 --warmup 1"
		echo "   (DDP_CHECK_SMALL=$DDP_CHECK_SMALL: the measured points on resnet_tiny batch 4, not resnet50 batch 64)"
	fi
	"$E" $P --result "$W/r1" >"$W/r1.log" 2>&1
	"$E" $P --gpus 2 --result "$W/r2" >"$W/r2.log" 2>&1
	t1=$(key throughput "$W/r1") t2=$(key throughput "$W/r2")
	if [ "$(key status "$W/r2")" = ok ] && [ "$(key ranks_same_weights "$W/r2")" = 1 ]; then
		pass "$(echo $P | sed 's/.*--model \([^ ]*\) --batch \([0-9]*\).*/\1 fp16 b\2/') x 2 GPUs: $t2 img/s, 1 GPU $t1 img/s, scale efficiency $(awk -v a="$t2" -v b="$t1" 'BEGIN { printf "%.3f", a / (2 * b) }')"
	else
		fail "$(echo $P | sed 's/.*--model \([^ ]*\).*/\1/') 2 GPUs: status $(key status "$W/r2"), same weights $(key ranks_same_weights "$W/r2")"
	fi
	"$E" $P --gpus 2 --syncbn on --result "$W/r2s" >"$W/r2s.log" 2>&1
	if [ "$(key status "$W/r2s")" = ok ] && [ "$(key ranks_same_weights "$W/r2s")" = 1 ] &&
		[ "$(key syncbn_ops "$W/r2s")" -gt 0 ] 2>/dev/null; then
		pass "$(echo $P | sed 's/.*--model \([^ ]*\) --batch \([0-9]*\).*/\1 fp16 b\2/') x 2 GPUs with SyncBN ($(key syncbn_ops "$W/r2s") BN ops): $(key throughput "$W/r2s") img/s, without $t2 img/s"
	else
		fail "$(echo $P | sed 's/.*--model \([^ ]*\).*/\1/') 2 GPUs SyncBN: status $(key status "$W/r2s"), same weights $(key ranks_same_weights "$W/r2s") (see $W/r2s.log)"
	fi
	# SyncBN's and the buckets' NCCL calls of 2 ranks inside one CUDA Graph
	"$E" $B --batch 6 --gpus 2 --syncbn on --compile reduce-overhead --steps 20 --warmup 2 \
		--result "$W/sbg2" >"$W/sbg2.log" 2>&1
	if [ "$(key status "$W/sbg2")" = ok ] && [ "$(key ranks_same_weights "$W/sbg2")" = 1 ] &&
		[ "$(key cuda_graph "$W/sbg2")" = on ] && [ "$(key syncbn_ops "$W/sbg2")" -gt 0 ] 2>/dev/null; then
		pass "2 ranks SyncBN under reduce-overhead: same weights, $(key throughput "$W/sbg2") img/s"
	else
		fail "2 ranks SyncBN under reduce-overhead: status $(key status "$W/sbg2"), syncbn_ops $(key syncbn_ops "$W/sbg2") (see $W/sbg2.log)"; tail -n 5 "$W/sbg2.log"
	fi
	# same weights hold whatever SyncBN computes (the gradient all-reduce
	# makes them so): the numbers, 2 x 6 in a CUDA Graph against 1 x 12 in one
	if "$E" $B --batch 6 --gpus 2 --syncbn on --compile reduce-overhead --dump "$W/sbg2.mxw" \
		>"$W/sbg2d.log" 2>&1 && synced "$W/sbg2d.log"; then
		cmp_dumps "2 ranks x 6 SyncBN in a CUDA Graph vs 1 x 12" "$W/plain_bng.mxw" "$W/sbg2.mxw" 1e-4 "output 1e-4"
	else
		fail "2 ranks SyncBN in a CUDA Graph: exit or log (see $W/sbg2d.log)"; tail -n 5 "$W/sbg2d.log"
	fi
fi
echo "ddp_check: $npass passed, $nfail failed${1:+ (dumps and logs in $W)}"
[ "$nfail" -eq 0 ]
