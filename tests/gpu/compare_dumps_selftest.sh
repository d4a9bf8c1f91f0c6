#!/bin/sh
# compare_dumps_selftest.sh - tests/gpu/compare_dumps.py on dumps made here
# (no GPU): identical dumps pass; a gradient off by more than the tolerance
# fails; an fp16 run whose loss scaling skipped its first update ("skipped")
# passes --trajectory against fp32 with the steps paired by the updates
# applied, and fails when its losses do not follow, when it skipped all but
# one, or without --trajectory; inf gradients in both runs of an exact
# comparison at the same places pass, inf against a finite value fails;
# with --adamw-lr, one final element beyond the tolerance but within 2 lr a
# step passes (noted), 2% of a tensor's elements or one beyond 2 lr a step
# fail.
. "${top_srcdir:?}/tests/setup"
PY=${PYTHON_TORCH:-}
if [ -z "$PY" ] || ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	echo "SKIP: no python3 that imports torch (PYTHON_TORCH='$PY')"
	exit 77
fi
C="$top_srcdir/tests/gpu/compare_dumps.py"
"$PY" - "$top_srcdir" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/engine")
import mxw
import torch

g = torch.Generator().manual_seed(1)
base = {"init.w": torch.randn(4, 3, generator=g), "output": torch.randn(2, 5, generator=g),
        "grad.w": torch.randn(4, 3, generator=g), "final.w": torch.randn(4, 3, generator=g),
        "losses": torch.tensor([7.0, 6.0, 5.0, 4.0, 3.0])}
mxw.save("ref.mxw", base)
mxw.save("same.mxw", base)
mxw.save("badgrad.mxw", dict(base, **{"grad.w": base["grad.w"] * 1.01}))
sk = torch.tensor([1.0, 0.0, 0.0, 0.0, 0.0])
mxw.save("skip1.mxw", dict(base, losses=torch.tensor([7.0, 7.0, 6.01, 5.0, 4.0]), skipped=sk))
mxw.save("skipbad.mxw", dict(base, losses=torch.tensor([7.0, 7.0, 6.8, 6.6, 6.4]), skipped=sk))
mxw.save("skipall.mxw", dict(base, losses=torch.tensor([7.0, 7.0, 7.0, 7.0, 6.0]),
                             skipped=torch.tensor([1.0, 1.0, 1.0, 1.0, 0.0])))
# AdamW (lr 1e-3, 5 steps: 2 lr a step = 1e-2): final.b of 4000 elements
# around 1; one element off by 5e-3 (beyond 1e-3 of max|w|, within 1e-2),
# or 2% of them, or one by 5e-2
big = 1 + 0.1 * torch.randn(4000, generator=g)
mxw.save("adam_ref.mxw", dict(base, **{"final.b": big}))
one, many, far = big.clone(), big.clone(), big.clone()
one[7] += 5e-3
many[:80] += 5e-3
far[7] += 5e-2
mxw.save("adam_one.mxw", dict(base, **{"final.b": one}))
mxw.save("adam_many.mxw", dict(base, **{"final.b": many}))
mxw.save("adam_far.mxw", dict(base, **{"final.b": far}))
inf = base["grad.w"].clone()
inf[0, 0] = float("inf")
mxw.save("inf_a.mxw", dict(base, **{"grad.w": inf}))
mxw.save("inf_b.mxw", dict(base, **{"grad.w": inf.clone()}))
# reduced precision: one gradient element of 12 moved whole (a flipped
# max-pool decision: 20% of the L2 norm or so), and the gradient wrong
flip = base["grad.w"].clone()
flip[1, 1] += 0.2 * base["grad.w"].norm()
mxw.save("traj_flip.mxw", dict(base, **{"grad.w": flip}))
mxw.save("traj_wrong.mxw", dict(base, **{"grad.w": -base["grad.w"]}))
mxw.save("traj_skip1.mxw", dict(base, **{"grad.w": inf}, losses=torch.tensor([7.0, 7.0, 6.01, 5.0, 4.0]), skipped=sk))
# --noise-ref: grad.a well-conditioned (rounding moves it by 1e-3 of its
# norm), grad.b ill-conditioned (by 0.2); GOT within each's own tolerance,
# then grad.a off by 0.1 (over max(0.05, 4 x 1e-3), under the cap 0.5)
na, nb = torch.randn(40, generator=g), torch.randn(40, generator=g)
two = dict(base, **{"grad.a": na, "grad.b": nb})
del two["grad.w"]
def moved(t, r):
    d = torch.randn(t.shape, generator=g)
    return t + r * t.norm() * d / d.norm()
mxw.save("nz_ref.mxw", two)
mxw.save("nz_noise.mxw", dict(two, **{"grad.a": moved(na, 1e-3), "grad.b": moved(nb, 0.2)}))
mxw.save("nz_ok.mxw", dict(two, **{"grad.a": moved(na, 0.03), "grad.b": moved(nb, 0.3)}))
mxw.save("nz_bad.mxw", dict(two, **{"grad.a": moved(na, 0.1), "grad.b": moved(nb, 0.3)}))
mxw.save("nz_b_over.mxw", dict(two, **{"grad.a": moved(na, 0.03), "grad.b": moved(nb, 0.6)}))
# an ill-conditioned output and loss: rounding moves them by 3% (of the
# output's largest, of the first loss), GOT by 5%: within 4 x the floor
ob, lb = two["output"], two["losses"]
mxw.save("nz_noise_out.mxw", dict(two, **{"grad.a": moved(na, 1e-3), "grad.b": moved(nb, 0.2)},
                                  output=ob + 0.03 * ob.abs().max(), losses=lb + 0.03 * lb[0]))
mxw.save("nz_out.mxw", dict(two, output=ob + 0.05 * ob.abs().max(), losses=lb - 0.05 * lb[0]))
# grad.b's floor above half the cap: not judged (noted), grad.a still is
mxw.save("nz_noise_loose.mxw", dict(two, **{"grad.a": moved(na, 1e-3), "grad.b": moved(nb, 0.3)}))
mxw.save("nz_b_far.mxw", dict(two, **{"grad.a": moved(na, 0.03), "grad.b": moved(nb, 0.9)}))
mxw.save("nz_a_far.mxw", dict(two, **{"grad.a": moved(na, 0.1), "grad.b": moved(nb, 0.9)}))
# floors so large that 4 x them would pass anything: the output not judged,
# the losses held at 0.5; a rounding run with a NaN gradient: a failure
mxw.save("nz_noise_big.mxw", dict(two, **{"grad.a": moved(na, 1e-3), "grad.b": moved(nb, 0.2)},
                                  output=ob + 0.2 * ob.abs().max(), losses=lb + 0.2 * lb[0]))
nan_a = na.clone()
nan_a[0] = float("nan")
mxw.save("nz_noise_nan.mxw", dict(two, **{"grad.a": nan_a, "grad.b": moved(nb, 0.2)}))
# --round-weights 10: 1 + 2^-10 kept, 1 + 2^-11 (a tie) to 1 (even),
# 1 + 3 x 2^-11 (a tie) to 1 + 2^-9 (even), -1 - 2^-12 to -1, int kept
mxw.save("rw_in.mxw", {"w": torch.tensor([1 + 2.0**-10, 1 + 2.0**-11, 1 + 3 * 2.0**-11, -1 - 2.0**-12]),
                       "ids": torch.tensor([3, 4], dtype=torch.int32)})
EOF
[ -f ref.mxw ] || fail "the dumps were not made"
ok() { "$PY" "$C" "$@" >out 2>&1 || { cat out >&2; fail "compare_dumps.py $*: exit $?, expected 0"; }; }
ko() {
	want=$1; shift
	rc=0; "$PY" "$C" "$@" >out 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || { cat out >&2; fail "compare_dumps.py $*: exit $rc, expected 1"; }
	grep -q -- "$want" out || { cat out >&2; fail "compare_dumps.py $*: no '$want'"; }
}
ok --rtol 1e-6 ref.mxw same.mxw
# --grad-note-rtol: within --grad-rtol, the tensors beyond a tighter bound counted in a note
ok --rtol 1e-3 --grad-rtol 2e-2 --grad-note-rtol 1e-4 ref.mxw badgrad.mxw
expect_grep "note .*grads: 1 of 1 tensor(s) beyond 1e-04 (the largest 1.000e-02, grad.w), within 2e-02" out "the tighter bound's note"
ko 'CHECK FAIL .* grads' --rtol 1e-3 ref.mxw badgrad.mxw
ok --trajectory --rtol 1e-2 --loss-rtol 2e-2 ref.mxw skip1.mxw
expect_grep 'GOT skipped step(s) \[1\], REF none (dynamic loss scaling); compared by the updates applied before each step: 4 pair' out "the pairing note"
ko 'CHECK FAIL .* losses: 4 step' --trajectory --rtol 1e-2 --loss-rtol 2e-2 ref.mxw skipbad.mxw
ko 'left to compare, want 2' --trajectory --rtol 1e-2 --loss-rtol 2e-2 ref.mxw skipall.mxw
ko 'skipped different updates' --rtol 1e-2 ref.mxw skip1.mxw
ok --rtol 0 --grad-rtol 0 --loss-rtol 0 --final-rtol 0 inf_a.mxw inf_b.mxw
ko 'CHECK FAIL .* grads: .* inf' --rtol 1e-3 ref.mxw inf_a.mxw
ko 'CHECK FAIL .* final' --rtol 1e-3 adam_ref.mxw adam_one.mxw
ok --rtol 1e-3 --adamw-lr 1e-3 adam_ref.mxw adam_one.mxw
expect_grep 'final.b: 1 of 4000 element(s) beyond the tolerance' out "the AdamW outlier's note"
ko '80 of 4000 element(s) beyond the tolerance (at most 4)' --rtol 1e-3 --adamw-lr 1e-3 adam_ref.mxw adam_many.mxw
ko 'largest |diff| 0.05' --rtol 1e-3 --adamw-lr 1e-3 adam_ref.mxw adam_far.mxw
# --trajectory --traj-grad-rtol: step 1's gradients in the L2 norm; an
# element moved whole within it passes, a wrong gradient fails, a skipped
# step 1 (inf gradients) is a note; without the option they are not compared
ok --trajectory --rtol 1e-2 --loss-rtol 2e-2 --traj-grad-rtol 3e-1 ref.mxw traj_flip.mxw
expect_grep 'grads: 1 tensor(s), worst relative L2 difference' out "the trajectory's gradient check"
ko 'CHECK FAIL .* grads: 1 tensor(s), worst relative L2 difference 2' --trajectory --rtol 1e-2 --loss-rtol 2e-2 --traj-grad-rtol 3e-1 ref.mxw traj_wrong.mxw
ok --trajectory --rtol 1e-2 --loss-rtol 2e-2 ref.mxw traj_wrong.mxw
ok --trajectory --rtol 1e-2 --loss-rtol 2e-2 --traj-grad-rtol 3e-1 ref.mxw traj_skip1.mxw
expect_grep "grads: not compared: loss scaling skipped step 1's update" out "the skipped step 1's note"
# --noise-ref: each gradient against min(cap, max(base, k x its floor))
nz="--trajectory --rtol 1e-2 --loss-rtol 2e-2 --traj-grad-rtol 0.5 --noise-base 0.05 --noise-k 4"
ok $nz --noise-ref nz_noise.mxw nz_ref.mxw nz_ok.mxw
expect_grep 'grads: 2 tensor(s), each within min(0.5, max(0.05, 4 x its rounding floor)).* 1 tolerance(s) above 0.05 by their floor, 1 at 0.5' out "the floor's summary"
ko 'CHECK FAIL .* grads: .*worst 2.00 of its tolerance (grad.a: relative L2 difference 1.000e-01, floor 1.000e-03, tolerance 5.000e-02)' \
	$nz --noise-ref nz_noise.mxw nz_ref.mxw nz_bad.mxw
ok --trajectory --rtol 1e-2 --loss-rtol 2e-2 --traj-grad-rtol 0.5 nz_ref.mxw nz_bad.mxw # the cap alone: passes
ko 'CHECK FAIL .* grads: .*(grad.b: relative L2 difference 6.000e-01, floor 2.000e-01, tolerance 5.000e-01)' \
	$nz --noise-ref nz_noise.mxw nz_ref.mxw nz_b_over.mxw
ok $nz --noise-ref nz_noise_out.mxw nz_ref.mxw nz_out.mxw
expect_grep 'rounding floors .*: output 3.000e-02, losses 3.000e-02 of the first loss: tolerances output 1.20e-01, losses 1.20e-01' out "the output's and losses' floors"
ko 'CHECK FAIL .* output: .*tolerance 1.0e-02' $nz --noise-ref nz_noise.mxw nz_ref.mxw nz_out.mxw # floors 0
ok $nz --noise-ref nz_noise_loose.mxw nz_ref.mxw nz_b_far.mxw
expect_grep "grads: 1 of 2 tensor(s) not judged: rounding the weights alone moves them by more than half the cap 0.5 .*3.000e-01, grad.b" out "the ill-conditioned tensor's note"
expect_grep "grads: 1 tensor(s), each within .*; 1 not judged (above)" out "the judged tensor's check"
ko 'CHECK FAIL .* grads: 1 tensor(s), .*grad.a' $nz --noise-ref nz_noise_loose.mxw nz_ref.mxw nz_a_far.mxw
ok $nz --noise-ref nz_noise_big.mxw nz_ref.mxw nz_out.mxw
expect_grep "output: not judged: rounding the weights alone moves it by 2.000e-01" out "an output floor past the cap"
expect_grep "losses: 4 x the floor is 8.00e-01, above 0.5: judged at 0.5" out "a loss floor past the cap"
if grep -q 'CHECK OK .* output:' out; then fail "the output judged at a tolerance that cannot fail"; fi
ko 'CHECK FAIL .* grads: the rounding run has no finite gradient grad.a' $nz --noise-ref nz_noise_nan.mxw nz_ref.mxw nz_ok.mxw
rc=0; "$PY" "$C" --trajectory --traj-grad-rtol 0.5 --noise-ref nz_noise.mxw nz_ref.mxw nz_ok.mxw >out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'needs --trajectory, and --noise-base with --traj-grad-rtol' out || fail "--noise-ref without --noise-base: exit $rc, $(cat out)"
ok --round-weights 10 rw_in.mxw rw_out.mxw
ok --perturb-ulp rw_in.mxw pu_out.mxw
"$PY" - "$top_srcdir" <<'EOF' || fail "--perturb-ulp: not one ulp each"
import sys
sys.path.insert(0, sys.argv[1] + "/tests/engine")
import mxw
import numpy as np
a, b = mxw.load_np("rw_in.mxw"), mxw.load_np("pu_out.mxw")
d = np.abs(a["w"].view(np.int32).astype(np.int64) - b["w"].view(np.int32).astype(np.int64))
assert (d == 1).all(), d
assert list(b["ids"]) == [3, 4], b["ids"]
EOF
"$PY" - "$top_srcdir" <<'EOF' || fail "--round-weights: wrong values"
import sys
sys.path.insert(0, sys.argv[1] + "/tests/engine")
import mxw
w = mxw.load_np("rw_out.mxw")
want = [1 + 2.0**-10, 1.0, 1 + 2.0**-9, -1.0]
got = [float(x) for x in w["w"]]
assert got == want, (got, want)
assert list(w["ids"]) == [3, 4], w["ids"]
EOF
echo "ok: compare_dumps.py: tolerances, loss-scaling skips, matching infs, AdamW outliers, trajectory gradients, rounding floors, --round-weights"
