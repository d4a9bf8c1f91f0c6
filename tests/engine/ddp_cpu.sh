#!/bin/sh
# ddp_cpu.sh - data-parallel ranks of the native engine on the CPU, with a
# real MPI (Open MPI's mpirun, started by the engine for --gpus N): the
# same data-parallel code the CUDA backend runs with NCCL.
#
# resnet_tiny, global batch 12, fp32, 5 training steps at --lr 0.001, the
# single process against 2 ranks x 6 and 3 ranks x 4 (each rank's inputs are
# its rows of the global batch):
#   - BN on running statistics (--eval on): the gradients of step 1 after
#     the all-reduce, and the losses of the 5 steps (mean over the ranks),
#     equal the single process's at 1e-5 relative; final weights at 1e-3;
#   - SyncBN (--syncbn on, batch statistics): the same, and rank 0's output
#     equals the single process's first rows: BatchNorm over the global
#     batch; one rank through the data-parallel path with SyncBN (its
#     all-reduces of one) equals the plain process bit for bit;
#   - control: batch statistics without SyncBN must differ (BN over each
#     rank's slice), so the comparison can fail;
#   - every rank ends with the same parameters (ranks_same_weights=1), the
#     result has ranks, global_batch, the slowest rank's step time;
#   - a rank killed by a signal takes the point down: the engine dies of
#     the same signal (the runner's `crashed`), no rank left running.
# SKIP (77) when the engine was built without MPI or mpirun is missing.
set -eu
E=${MATRIX_ENGINE:?}
CMP=${DUMP_CMP:-${top_builddir:-.}/tests/engine/dump_cmp}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
# under AddressSanitizer (.ci/run's second pass): no leak check in the ranks,
# whose only leaks are Open MPI's own, in components it unloads before
# LeakSanitizer can name them (the engine's leaks are checked by every
# single-process test)
if ldd "$E" 2>/dev/null | grep -q libasan; then
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; export ASAN_OPTIONS
fi
ok() { echo "ok   $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }
key() { sed -n "s/^$1=//p" "$2"; }

rc=0
"$E" --device cpu --model mnist_cnn --batch 2 --gpus 2 --threads 1 --steps 1 --warmup 0 \
	--result "$W/probe" >"$W/probe.log" 2>&1 || rc=$?
if [ "$rc" -eq 3 ]; then
	echo "SKIP: $(key reason "$W/probe")"
	exit 77
fi
[ "$rc" -eq 0 ] || { cat "$W/probe.log"; echo "FAIL: the 2-rank probe exited $rc"; exit 1; }

C="--device cpu --model resnet_tiny --task train --steps 5 --warmup 0 --lr 0.001 --threads 1"
# cmp LABEL REF GOT: gradients and losses at 1e-5, final weights at 1e-3
cmp_dumps() {
	label=$1 ref=$2 got=$3; shift 3
	for spec in "grad. 1e-5" "losses 1e-5" "final. 1e-3" "$@"; do
		set -- $spec
		if "$CMP" "$ref" "$got" "$2" "$1" >"$W/cmp.out" 2>&1; then
			ok "$label: $1 within $2 ($(tail -n 1 "$W/cmp.out"))"
		else
			ko "$label: $1 beyond $2"; grep -v '^ok' "$W/cmp.out" | head -n 5
		fi
	done
}

"$E" $C --batch 12 --eval on --dump "$W/single_eval.mxw" >"$W/s1.log" 2>&1
"$E" $C --batch 12 --dump "$W/single_bn.mxw" >"$W/s2.log" 2>&1
# one rank through the data-parallel path (mpirun, buckets, all-reduce of 1)
# is the plain path exactly
if MATRIX_ENGINE_DP=1 "$E" $C --batch 12 --dump "$W/dp1.mxw" >"$W/dp1.log" 2>&1 &&
	"$CMP" "$W/single_bn.mxw" "$W/dp1.mxw" 0 grad. losses final. output >"$W/cmp.out" 2>&1; then
	ok "1 rank through MPI equals the plain process bit for bit ($(tail -n 1 "$W/cmp.out"))"
else
	ko "1 rank through MPI differs from the plain process"; grep -v '^ok' "$W/cmp.out" | head -n 5
fi
# the same with SyncBN: the 1-rank all-reduce of its sums changes nothing
if MATRIX_ENGINE_DP=1 "$E" $C --batch 12 --syncbn on --dump "$W/dp1sb.mxw" >"$W/dp1sb.log" 2>&1 &&
	grep -q 'syncbn: [1-9][0-9]* BatchNorm ops' "$W/dp1sb.log" &&
	"$CMP" "$W/single_bn.mxw" "$W/dp1sb.mxw" 0 grad. losses final. output >"$W/cmp.out" 2>&1; then
	ok "1 rank through MPI with SyncBN equals the plain process bit for bit ($(tail -n 1 "$W/cmp.out"))"
else
	ko "1 rank through MPI with SyncBN differs from the plain process"; tail -n 3 "$W/dp1sb.log"; grep -v '^ok' "$W/cmp.out" | head -n 5
fi
for n in 2 3; do
	b=$((12 / n))
	if "$E" $C --batch $b --gpus $n --eval on --dump "$W/dp$n.mxw" >"$W/dp$n.log" 2>&1; then
		cmp_dumps "$n ranks x $b, BN running statistics" "$W/single_eval.mxw" "$W/dp$n.mxw"
	else
		ko "$n ranks x $b: exit $? (see below)"; tail -n 5 "$W/dp$n.log"
	fi
	if "$E" $C --batch $b --gpus $n --syncbn on --dump "$W/sb$n.mxw" >"$W/sb$n.log" 2>&1; then
		cmp_dumps "$n ranks x $b, SyncBN" "$W/single_bn.mxw" "$W/sb$n.mxw" "output 1e-5"
	else
		ko "$n ranks x $b SyncBN: exit $?"; tail -n 5 "$W/sb$n.log"
	fi
done
# control: batch statistics per rank differ from the global batch's
"$E" $C --batch 6 --gpus 2 --dump "$W/nosync.mxw" >"$W/nosync.log" 2>&1
if "$CMP" "$W/single_bn.mxw" "$W/nosync.mxw" 1e-5 grad. >/dev/null 2>&1; then
	ko "control: BN over each rank's slice matched the global batch (the check cannot fail)"
else
	ok "control: without SyncBN the gradients differ from the global batch's"
fi

# the result of a measured point
"$E" --device cpu --model resnet_tiny --task train --batch 4 --gpus 2 --threads 1 --steps 4 \
	--warmup 1 --result "$W/r" >"$W/r.log" 2>&1 || true
if [ "$(key status "$W/r")" = ok ] && [ "$(key ranks "$W/r")" = 2 ] &&
	[ "$(key global_batch "$W/r")" = 8 ] && [ "$(key ranks_same_weights "$W/r")" = 1 ] &&
	[ -n "$(key rank_step_ms_max "$W/r")" ] && [ "$(key comm "$W/r")" = mpi ] &&
	[ "$(key samples "$W/r")" = 4 ]; then
	ok "2-rank result: ranks=2 global_batch=8 same weights, slowest rank $(key rank_step_ms_max "$W/r") ms, comm wait share $(key comm_wait_share "$W/r")"
else
	ko "2-rank result:"; cat "$W/r" "$W/r.log" | head -n 40
fi

# a rank that dies takes the point down as a signal, no rank left behind
rc=0
MATRIX_ENGINE_DIE_RANK=1 "$E" --device cpu --model resnet_tiny --task train --batch 4 --gpus 2 \
	--threads 1 --steps 50 --warmup 0 --result "$W/k" >"$W/k.log" 2>&1 || rc=$?
if [ "$rc" -eq 137 ] && [ ! -f "$W/k" ]; then
	ok "a rank killed by SIGKILL: the engine dies of SIGKILL (exit $rc), no result"
else
	ko "a killed rank: exit $rc, result $(ls "$W/k" 2>/dev/null)"; tail -n 5 "$W/k.log"
fi
sleep 1
if pgrep -f "$W/k" >/dev/null 2>&1; then ko "ranks left running after a rank died"; else ok "no rank left running"; fi

echo "ddp_cpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
