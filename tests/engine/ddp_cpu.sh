#!/bin/sh
# ddp_cpu.sh - data-parallel ranks of the native engine on the CPU: the same
# data-parallel code the CUDA backend runs with NCCL, with each host
# communicator: shm (the engine's local launcher, MATRIX_ENGINE_LAUNCH=local,
# no MPI) and MPI (Open MPI's mpirun started by the engine,
# MATRIX_ENGINE_LAUNCH=mpirun).
#
# resnet_tiny, global batch 12, fp32, 5 training steps at --lr 0.001, the
# single process against 2 ranks x 6 and 3 ranks x 4 (each rank's inputs are
# its rows of the global batch), under each launcher:
#   - BN on running statistics (--eval on): the gradients of step 1 after
#     the all-reduce, and the losses of the 5 steps (mean over the ranks),
#     equal the single process's at 1e-5 relative; final weights at 1e-3;
#   - SyncBN (--syncbn on, batch statistics): the same, and rank 0's output
#     equals the single process's first rows: BatchNorm over the global
#     batch; one rank through the data-parallel path, with and without
#     SyncBN (its all-reduces of one), equals the plain process bit for bit;
#   - the SyncBN runs with gradient buckets of 64 KiB (MATRIX_ENGINE_BUCKET_KB:
#     many buckets, each all-reduced after the op that completes it), the
#     BN runs with the default 25 MiB (one bucket);
#   - with --ema on (BN on running statistics), the EMA of the weights
#     (final.ema.*) of 2 ranks x 6 equals the single process's at 1e-4;
#   - every rank ends with the same parameters (ranks_same_weights=1), the
#     result has ranks, global_batch, the slowest rank's step time (step_ms
#     is it; the fastest's no larger), the share of the step waiting for the
#     others (0 to 1), comm and launcher; a rank that changes a weight (MATRIX_ENGINE_DIE_RANK=1:skew)
#     fails the point: "the 2 ranks ended with different parameters";
#   - a rank killed by a signal takes the point down: the engine dies of
#     the same signal (the runner's `crashed`), no rank left running;
#   - bert_tiny (MLM head, decoder tied to the word table), 2 ranks x 2
#     sequences against 1 x 4, shm ranks: gradients, losses, output at
#     1e-5, final weights at 1e-3 (the attention key biases left out);
# shm ranks against MPI ranks: the same dumps at the same tolerances (and
# whether they are bit for bit the same is printed); the control: batch
# statistics without SyncBN must differ (BN over each rank's slice), so the
# comparison can fail.
# The MPI part is skipped, with the reason, when the engine was built
# without MPI or mpirun is missing; the shm part always runs.
set -eu
E=${MATRIX_ENGINE:?}
CMP=${DUMP_CMP:-${top_builddir:-.}/tests/engine/dump_cmp}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
# under AddressSanitizer (.ci/run's second pass): no leak check in MPI's
# ranks, whose only leaks are Open MPI's own, in components it unloads
# before LeakSanitizer can name them (the shm ranks are checked as every
# single-process test is)
mpi_asan=${ASAN_OPTIONS:-}
if ldd "$E" 2>/dev/null | grep -q libasan; then
	mpi_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
ok() { echo "ok   $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }
key() { sed -n "s/^$1=//p" "$2"; }
# runl LAUNCHER CMD...: CMD with the ranks started by LAUNCHER (local, mpirun)
runl() {
	l=$1; shift
	if [ "$l" = mpirun ]; then env MATRIX_ENGINE_LAUNCH=mpirun ASAN_OPTIONS="$mpi_asan" "$@"
	else env MATRIX_ENGINE_LAUNCH=local "$@"; fi
}
# the communicator each launcher gives
comm_of() { if [ "$1" = mpirun ]; then echo mpi; else echo shm; fi; }

rc=0
runl local "$E" --device cpu --model mnist_cnn --batch 2 --gpus 2 --threads 1 --steps 1 --warmup 0 \
	--result "$W/probe" >"$W/probe.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { cat "$W/probe.log"; echo "FAIL: the 2-rank probe (local launcher) exited $rc"; exit 1; }
launchers=local
rc=0
runl mpirun "$E" --device cpu --model mnist_cnn --batch 2 --gpus 2 --threads 1 --steps 1 --warmup 0 \
	--result "$W/probe" >"$W/probe.log" 2>&1 || rc=$?
if [ "$rc" -eq 3 ]; then
	echo "SKIP the MPI ranks: $(key reason "$W/probe")"
elif [ "$rc" -ne 0 ]; then
	cat "$W/probe.log"; echo "FAIL: the 2-rank probe (mpirun) exited $rc"; exit 1
else
	launchers="local mpirun"
fi

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
"$E" $C --batch 12 --eval on --ema on --dump "$W/single_ema.mxw" >"$W/s3.log" 2>&1
for L in $launchers; do
	cm=$(comm_of $L)
	# one rank through the data-parallel path (buckets, all-reduce of 1) is
	# the plain path exactly; with SyncBN too (the 1-rank all-reduce of its
	# sums changes nothing)
	if runl $L env MATRIX_ENGINE_DP=1 "$E" $C --batch 12 --dump "$W/dp1$cm.mxw" >"$W/dp1$cm.log" 2>&1 &&
		"$CMP" "$W/single_bn.mxw" "$W/dp1$cm.mxw" 0 grad. losses final. output >"$W/cmp.out" 2>&1; then
		ok "1 rank through $cm equals the plain process bit for bit ($(tail -n 1 "$W/cmp.out"))"
	else
		ko "1 rank through $cm differs from the plain process"; tail -n 3 "$W/dp1$cm.log"; grep -v '^ok' "$W/cmp.out" | head -n 5
	fi
	if runl $L env MATRIX_ENGINE_DP=1 "$E" $C --batch 12 --syncbn on --dump "$W/dp1sb$cm.mxw" >"$W/dp1sb$cm.log" 2>&1 &&
		grep -q 'syncbn: [1-9][0-9]* BatchNorm ops' "$W/dp1sb$cm.log" &&
		"$CMP" "$W/single_bn.mxw" "$W/dp1sb$cm.mxw" 0 grad. losses final. output >"$W/cmp.out" 2>&1; then
		ok "1 rank through $cm with SyncBN equals the plain process bit for bit ($(tail -n 1 "$W/cmp.out"))"
	else
		ko "1 rank through $cm with SyncBN differs from the plain process"; tail -n 3 "$W/dp1sb$cm.log"; grep -v '^ok' "$W/cmp.out" | head -n 5
	fi
	for n in 2 3; do
		b=$((12 / n))
		if runl $L "$E" $C --batch $b --gpus $n --eval on --dump "$W/dp$n$cm.mxw" >"$W/dp$n$cm.log" 2>&1; then
			cmp_dumps "$n $cm ranks x $b, BN running statistics" "$W/single_eval.mxw" "$W/dp$n$cm.mxw"
		else
			ko "$n $cm ranks x $b: exit $? (see below)"; tail -n 5 "$W/dp$n$cm.log"
		fi
		# SyncBN with buckets of 64 KiB: resnet_tiny's gradients (1.2 MB) in many
		# buckets, each all-reduced after the op that completes it (the 25 MiB
		# default holds them all in one, as in the BN case above)
		if runl $L env MATRIX_ENGINE_BUCKET_KB=64 "$E" $C --batch $b --gpus $n --syncbn on \
			--dump "$W/sb$n$cm.mxw" >"$W/sb$n$cm.log" 2>&1; then
			cmp_dumps "$n $cm ranks x $b, SyncBN, 64 KiB buckets" "$W/single_bn.mxw" "$W/sb$n$cm.mxw" "output 1e-5"
			nb=$(sed -n 's/^matrix-engine: data-parallel: \([0-9]*\) gradient bucket(s) of about 64 KiB (MATRIX_ENGINE_BUCKET_KB).*/\1/p' "$W/sb$n$cm.log")
			nb1=$(sed -n 's/^matrix-engine: data-parallel: \([0-9]*\) gradient bucket(s) of about 25600 KiB.*/\1/p' "$W/dp$n$cm.log")
			if [ "${nb:-0}" -gt 1 ] && [ "${nb1:-0}" -eq 1 ]; then
				ok "$n $cm ranks: $nb gradient buckets of 64 KiB, 1 of the default 25 MiB (logged)"
			else
				ko "$n $cm ranks: buckets '$nb' of 64 KiB (want more than 1), '$nb1' of 25 MiB (want 1)"
			fi
		else
			ko "$n $cm ranks x $b SyncBN: exit $?"; tail -n 5 "$W/sb$n$cm.log"
		fi
	done

	# EMA of the weights (--ema on): per rank, from the same updates: every
	# rank ends with the same (ranks_same_weights hashes them too), equal to
	# the single process's (final.ema.*, BN running statistics: --eval on)
	if runl $L "$E" $C --batch 6 --gpus 2 --eval on --ema on --dump "$W/ema2$cm.mxw" >"$W/ema2$cm.log" 2>&1; then
		cmp_dumps "2 $cm ranks x 6, EMA" "$W/single_ema.mxw" "$W/ema2$cm.mxw" "final.ema. 1e-4"
	else
		ko "2 $cm ranks x 6, EMA: exit $?"; tail -n 5 "$W/ema2$cm.log"
	fi

	# the result of a measured point
	runl $L "$E" --device cpu --model resnet_tiny --task train --batch 4 --gpus 2 --threads 1 --steps 4 \
		--warmup 1 --result "$W/r$cm" >"$W/r$cm.log" 2>&1 || true
	if [ "$(key status "$W/r$cm")" = ok ] && [ "$(key ranks "$W/r$cm")" = 2 ] &&
		[ "$(key global_batch "$W/r$cm")" = 8 ] && [ "$(key ranks_same_weights "$W/r$cm")" = 1 ] &&
		[ -n "$(key rank_step_ms_max "$W/r$cm")" ] && [ "$(key comm "$W/r$cm")" = $cm ] &&
		[ "$(key comm_host "$W/r$cm")" = $cm ] && [ "$(key launcher "$W/r$cm")" = $L ] &&
		[ "$(key samples "$W/r$cm")" = 4 ] && grep -q "launcher=$L" "$W/r$cm.log" &&
		awk -v mx="$(key rank_step_ms_max "$W/r$cm")" -v mn="$(key rank_step_ms_min "$W/r$cm")" \
			-v st="$(key step_ms "$W/r$cm")" -v sh="$(key comm_wait_share "$W/r$cm")" \
			'BEGIN { exit !(mx > 0 && mn > 0 && mn <= mx && st == mx && sh != "" && sh >= 0 && sh <= 1) }'; then
		ok "2-rank result ($L, $cm): ranks=2 global_batch=8 same weights, slowest rank $(key rank_step_ms_max "$W/r$cm") ms, comm wait share $(key comm_wait_share "$W/r$cm")"
	else
		ko "2-rank result ($L):"; cat "$W/r$cm" "$W/r$cm.log" | head -n 40
	fi

	# ranks that end with different weights: the point fails, with the reason
	rc=0
	runl $L env MATRIX_ENGINE_DIE_RANK=1:skew "$E" --device cpu --model resnet_tiny --task train --batch 4 --gpus 2 \
		--threads 1 --steps 5 --warmup 0 --result "$W/skew$cm" >"$W/skew$cm.log" 2>&1 || rc=$?
	if [ "$rc" -eq 1 ] && [ "$(key status "$W/skew$cm")" = failed ] &&
		[ "$(key reason "$W/skew$cm")" = "the 2 ranks ended with different parameters" ] &&
		grep -q 'rank 1 changes a weight at step 3' "$W/skew$cm.log"; then
		ok "a rank whose weights differ ($L): exit 1, status failed, '$(key reason "$W/skew$cm")'"
	else
		ko "a rank whose weights differ ($L): exit $rc, status '$(key status "$W/skew$cm")'"; tail -n 5 "$W/skew$cm.log"
	fi

	# a rank that dies takes the point down as a signal, no rank left behind
	rc=0
	runl $L env MATRIX_ENGINE_DIE_RANK=1 "$E" --device cpu --model resnet_tiny --task train --batch 4 --gpus 2 \
		--threads 1 --steps 50 --warmup 0 --result "$W/k$cm" >"$W/k$cm.log" 2>&1 || rc=$?
	if [ "$rc" -eq 137 ] && [ ! -f "$W/k$cm" ]; then
		ok "a rank killed by SIGKILL ($L): the engine dies of SIGKILL (exit $rc), no result"
	else
		ko "a killed rank ($L): exit $rc, result $(ls "$W/k$cm" 2>/dev/null)"; tail -n 5 "$W/k$cm.log"
	fi
	i=0
	while pgrep -f "$W/k$cm" >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	if pgrep -f "$W/k$cm" >/dev/null 2>&1; then ko "ranks left running after a rank died ($L)"; else ok "no rank left running ($L)"; fi
done

# shm ranks against MPI ranks: the tests' tolerances; bit for bit or not, said
if [ "$launchers" = "local mpirun" ]; then
	for d in dp2 dp3 sb2 sb3; do
		cmp_dumps "$d: shm vs mpi ranks" "$W/${d}mpi.mxw" "$W/${d}shm.mxw" "output 1e-5"
		if "$CMP" "$W/${d}mpi.mxw" "$W/${d}shm.mxw" 0 grad. losses final. output >"$W/cmp.out" 2>&1; then
			echo "note $d: shm and mpi ranks bit for bit the same"
		else
			echo "note $d: shm and mpi ranks not bit for bit the same: $(grep -v '^ok' "$W/cmp.out" | head -n 1)"
		fi
	done
fi

# BERT (the MLM head): 2 ranks of 2 sequences against 1 process of 4 (eval
# on: no dropout). Each rank takes its sequences' masked positions and
# targets; the decoder's weight is the word table, so its gradient has two
# writers and its bucket must wait for the second (the embedding's). The
# attention key biases are left out of the final weights: their gradient is
# 0 up to rounding (softmax ignores a per-row constant) and AdamW steps on
# that noise.
B="--device cpu --model bert_tiny --task train --seq-len 16 --steps 5 --warmup 0 --lr 0.001 --threads 1 --eval on"
"$E" $B --batch 4 --dump "$W/bert1.mxw" >"$W/bert1.log" 2>&1 || ko "bert_tiny, 1 process: exit $?"
if runl local env MATRIX_ENGINE_BUCKET_KB=256 "$E" $B --batch 2 --gpus 2 --dump "$W/bert2.mxw" >"$W/bert2.log" 2>&1; then
	fin="final.word final.position final.token_type final.emb_norm final.mlm"
	for l in 0 1; do
		for p in attention.query attention.key.weight attention.value attn_out attn_norm ffn_in ffn_out ffn_norm; do
			fin="$fin final.layers.$l.$p"
		done
	done
	for spec in "grad. 1e-5" "losses 1e-5" "output 1e-5" "$fin 1e-3"; do
		tol=${spec##* }
		# shellcheck disable=SC2086 # the prefixes are words
		if "$CMP" "$W/bert1.mxw" "$W/bert2.mxw" "$tol" ${spec% *} >"$W/cmp.out" 2>&1; then
			ok "bert_tiny 2 ranks x 2 vs 1 x 4: ${spec%% *}... within $tol ($(tail -n 1 "$W/cmp.out"))"
		else
			ko "bert_tiny 2 ranks x 2 vs 1 x 4: ${spec%% *}... beyond $tol"; grep -v '^ok' "$W/cmp.out" | head -n 5
		fi
	done
else
	ko "bert_tiny, 2 ranks: exit $?"; tail -n 3 "$W/bert2.log"
fi

# control: batch statistics per rank differ from the global batch's
"$E" $C --batch 6 --gpus 2 --dump "$W/nosync.mxw" >"$W/nosync.log" 2>&1
rc=0
"$CMP" "$W/single_bn.mxw" "$W/nosync.mxw" 1e-5 grad. >"$W/cmp.out" 2>&1 || rc=$?
if [ "$rc" -eq 1 ]; then # 1: beyond the tolerance (2 would be an unreadable dump)
	ok "control: without SyncBN the gradients differ from the global batch's"
else
	ko "control: dump_cmp exit $rc (want 1: BN over each rank's slice differs from the global batch's)"; tail -n 3 "$W/cmp.out"
fi

echo "ddp_cpu: $pass passed, $fail failed (launchers: $launchers)"
[ "$fail" -eq 0 ]
