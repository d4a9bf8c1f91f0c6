#!/bin/sh
# data_upload.sh - --data's two uploads on a GPU (issue 18 item 1, "no host
# synchronisation inside a step"; engine/NOTES.md "The pinned --data
# upload"): MATRIX_ENGINE_DATA_UPLOAD=pinned (the default: batch k+1 made in
# pinned memory and copied on a second stream while step k runs, then copied
# device to device into the inputs before step k+1) against =pageable (the
# old path: made in the step, copied from pageable memory and waited for).
# mnist_cnn fp32 batch 16 on a 64-image set from tests/engine/mkidx.py
# (4 steps an epoch, so 12 steps cross two epoch boundaries):
#
#   1. --dump of 12 training steps (op by op): every input.S, target.S and
#      data_index.S bit for bit, the losses and gradients within 1e-5;
#   2. the same as inference (the labels used by no op: their host copy);
#   3. 12 timed training steps, --compile none and reduce-overhead (the
#      steps replayed as one CUDA Graph reading fixed input addresses), with
#      --save-weights: the weights after the run within 1e-5, the same loss
#      and data_batches, data_upload=pinned / pageable in the results;
#   4. the default is pinned, and MATRIX_ENGINE_DATA_UPLOAD=bogus is exit 2;
#   5. as 3 at batch 1024 on a 2,048-image set (2 steps an epoch), 8 timed
#      steps under reduce-overhead: 3.2 MB copies on the second stream
#      overlapping steps of milliseconds, an epoch boundary every 2 steps
#      (at batch 16: 50 KB copies, sub-millisecond steps). The engine's loop
#      waits for each step, so the ring's event waits are satisfied when
#      reached at either size; this checks the sizes and the overlap.
#
# A batch copied into the inputs while a step still read them, or read
# before its copy landed, trains on the wrong images: 1 and 3 see it.
#
#   sh tests/gpu/data_upload.sh [OUTDIR]
#
# Last line "data_upload: N passed, N failed"; exit 0, 1 when a check fails,
# 77 without a GPU. Under a minute on one H100. On the CPU simulator
# (tests/cudasim/data_upload.sh, DATA_UPLOAD_SMALL=1: parts 1-4) 16 checks
# pass in 8 s.
set -u
if [ -z "${MATRIX_ENGINE:-}" ]; then
	if [ -n "${top_builddir:-}" ]; then MATRIX_ENGINE=$top_builddir/engine/matrix-engine
	else MATRIX_ENGINE=$(pwd)/engine/matrix-engine; fi
fi
E=$MATRIX_ENGINE
SRC=${top_srcdir:-$(dirname "$0")/../..}
CMP=${DUMP_CMP:-$(dirname "$E")/../tests/engine/dump_cmp}
if [ -n "${1:-}" ]; then W=$1; mkdir -p "$W"; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi
npass=0 nfail=0

. "$(dirname "$0")/probe.sh"
gpu_probe "$W"
if [ ! -x "$CMP" ]; then
	echo "FAIL: $CMP not built (make tests/engine/dump_cmp)"
	exit 1
fi
python3 "$SRC/tests/engine/mkidx.py" "$W/mnist" >/dev/null || { echo "FAIL: mkidx.py"; exit 1; }

key() { sed -n "s/^$1=//p" "$2" | head -n 1; }
pass() { npass=$((npass + 1)); echo "PASS $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL $*"; }

# pt MODE NAME FLAGS...: one point with MATRIX_ENGINE_DATA_UPLOAD=MODE
# pt MODE NAME FLAGS...: one point on $PT_DATA at batch $PT_BATCH, $PT_STEPS steps
PT_DATA=$W/mnist PT_BATCH=16 PT_STEPS=12
pt() {
	m=$1 n=$2; shift 2
	if ! MATRIX_ENGINE_DATA_UPLOAD=$m "$E" --device cuda --model mnist_cnn --batch $PT_BATCH --precision fp32 \
		--data "$PT_DATA" --steps $PT_STEPS --warmup 0 "$@" >"$W/$n.log" 2>&1; then
		echo "     point $n failed; see $W/$n.log"
		return 1
	fi
}
# same WHAT A B RTOL PREFIX...: dump_cmp of two files
same() {
	what=$1 a=$2 b=$3 tol=$4; shift 4
	if "$CMP" "$a" "$b" "$tol" "$@" >"$W/cmp.out" 2>&1; then pass "$what ($(tail -n 1 "$W/cmp.out"))"
	else fail "$what:"; grep -v ' ok' "$W/cmp.out" | head -n 5; fi
}

# 1, 2: dumps, op by op
for task in train infer; do
	if pt pinned d_pin_$task --task $task --dump "$W/d_pin_$task.mxw" &&
		pt pageable d_pag_$task --task $task --dump "$W/d_pag_$task.mxw"; then
		same "$task dump: the batches bit for bit" "$W/d_pag_$task.mxw" "$W/d_pin_$task.mxw" 0 \
			input. target. data_index.
		same "$task dump: everything else within 1e-5" "$W/d_pag_$task.mxw" "$W/d_pin_$task.mxw" 1e-5 ""
	else
		fail "$task dump: a point failed"
	fi
done

# 3: timed steps, eager and one CUDA Graph per step
for c in none reduce-overhead; do
	if pt pinned t_pin_$c --task train --compile $c --save-weights "$W/w_pin_$c.mxw" --result "$W/t_pin_$c" &&
		pt pageable t_pag_$c --task train --compile $c --save-weights "$W/w_pag_$c.mxw" --result "$W/t_pag_$c"; then
		same "compile $c: weights after 12 timed steps within 1e-5" "$W/w_pag_$c.mxw" "$W/w_pin_$c.mxw" 1e-5 ""
		for k in loss data_batches data_epochs_started; do
			a=$(key $k "$W/t_pag_$c") b=$(key $k "$W/t_pin_$c")
			if [ -n "$a" ] && [ "$a" = "$b" ]; then pass "compile $c: $k $a in both"
			else fail "compile $c: $k pageable '$a', pinned '$b'"; fi
		done
		a=$(key data_upload "$W/t_pag_$c") b=$(key data_upload "$W/t_pin_$c")
		if [ "$a" = pageable ] && [ "$b" = pinned ]; then pass "compile $c: data_upload=$a / $b"
		else fail "compile $c: data_upload '$a' / '$b', expected pageable / pinned"; fi
		g=$(key cuda_graph "$W/t_pin_$c")
		echo "     compile $c: cuda_graph=$g; step_ms pageable $(key step_ms "$W/t_pag_$c"), pinned $(key step_ms "$W/t_pin_$c") (12 steps: indicative only)"
	else
		fail "compile $c: a point failed"
	fi
done

# 4: the default, and a bad value
if pt "" t_default --task train --result "$W/t_default" && [ "$(key data_upload "$W/t_default")" = pinned ]; then
	pass "the default is data_upload=pinned"
else
	fail "the default: data_upload='$(key data_upload "$W/t_default" 2>/dev/null)', expected pinned"
fi
MATRIX_ENGINE_DATA_UPLOAD=bogus "$E" --device cuda --model mnist_cnn --batch 16 --data "$W/mnist" --steps 1 \
	--warmup 0 --result "$W/t_bad" >"$W/t_bad.log" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "MATRIX_ENGINE_DATA_UPLOAD='bogus' is not one of pinned, pageable" "$W/t_bad.log"; then
	pass "MATRIX_ENGINE_DATA_UPLOAD=bogus: exit 2, named"
else
	fail "MATRIX_ENGINE_DATA_UPLOAD=bogus: exit $rc: $(head -n 2 "$W/t_bad.log")"
fi

# 5. large copies overlapping long steps: batch 1024, 2 steps an epoch, 8 timed steps in a CUDA Graph
# (not with DATA_UPLOAD_SMALL=1: tests/cudasim/, where a step of batch 1024 takes the CPU minutes)
if [ -n "${DATA_UPLOAD_SMALL:-}" ]; then
	echo "     batch 1024: not run (DATA_UPLOAD_SMALL)"
elif python3 "$SRC/tests/engine/mkidx.py" "$W/mnist_big" --n 2048 >/dev/null; then
	PT_DATA=$W/mnist_big PT_BATCH=1024 PT_STEPS=8
	c=reduce-overhead
	if pt pinned b_pin --task train --compile $c --save-weights "$W/wb_pin.mxw" --result "$W/b_pin" &&
		pt pageable b_pag --task train --compile $c --save-weights "$W/wb_pag.mxw" --result "$W/b_pag"; then
		same "batch 1024 $c: weights after 8 timed steps within 1e-5" "$W/wb_pag.mxw" "$W/wb_pin.mxw" 1e-5 ""
		for k in loss data_batches data_epochs_started; do
			a=$(key $k "$W/b_pag") b=$(key $k "$W/b_pin")
			if [ -n "$a" ] && [ "$a" = "$b" ]; then pass "batch 1024 $c: $k $a in both"
			else fail "batch 1024 $c: $k pageable '$a', pinned '$b'"; fi
		done
		echo "     batch 1024 $c: step_ms pageable $(key step_ms "$W/b_pag"), pinned $(key step_ms "$W/b_pin") (indicative only)"
	else
		fail "batch 1024 $c: a point failed"
	fi
else
	fail "mkidx.py --n 2048"
fi

echo "data_upload: $npass passed, $nfail failed"
[ $nfail -eq 0 ]
