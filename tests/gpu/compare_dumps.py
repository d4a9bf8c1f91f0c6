"""compare_dumps.py - compare two `matrix-engine --dump` files (engine/weights.h),
a reference REF (the CPU backend, or a CUDA run with other settings) and GOT.

    compare_dumps.py [options] REF GOT
    compare_dumps.py --randomize-bn IN OUT
    compare_dumps.py --round-weights BITS IN OUT

Groups of tensors, each checked when REF has it (a group REF has and GOT lacks
fails):

  inputs   input (--input-rtol; 0 = bit-identical), target (identical)
  init     init.* : the parameters both runs started from (identical)
  output   output of step 1: max|got - ref| / max|ref| <= --rtol
  grads    grad.* of step 1: per tensor max|got - ref| / max(max|ref|, 1e-3 *
           the largest max|ref| of the group) <= --grad-rtol (the floor keeps a
           nearly-zero gradient, such as the bias of a BatchNorm followed by
           another, from failing on noise; the same rule as resnet_ref.py)
  losses   every step: finite, |got - ref| / |ref| <= --loss-rtol; runs whose
           dynamic loss scaling skipped different updates ("skipped", fp16
           on the GPU) fail, except under --trajectory, which pairs the steps
           by the updates applied before them
  final    final.* after the last step: as grads, with --final-rtol; not the
           attention key biases (*.attention.key.bias), whose gradient is 0
           up to rounding (softmax is invariant to adding q . b to a row of
           scores) and which AdamW therefore moves by rounding noise scaled to
           steps of the learning rate: their largest difference is printed as
           a note, their gradients are compared in grads; with --adamw-lr LR, per
           tensor at most 1e-3 of the elements (at least 1) may be beyond the
           tolerance, each within 2 LR a step, listed in notes (AdamW moves an
           element by about LR a step whatever its gradient, so one whose
           gradient is rounding noise may differ by that much)
  masks    mask.<op>.<step>: bit-identical (same --seed, same generator)

--trajectory (mixed precision against fp32): inputs, init, output (--rtol),
masks, and the losses: finite, within --loss-rtol of REF's relative to REF's
first loss, and when REF's loss moved by more than that over the run, GOT's
moved the same way by 0.5x to 2x as much. Final weights are not compared (at
fp32 they are); the gradients (step 1's) only with --traj-grad-rtol, in the L2
norm per tensor (a max-pool or ReLU decision that rounding flips moves single
elements whole), and not when GOT's step 1 update was skipped by loss scaling
(its gradients overflowed: a note says so). With --noise-ref NOISE (REF's
engine run again from the weights rounded to GOT's precision, --round-weights)
each gradient's tolerance is min(--traj-grad-rtol, max(--noise-base,
--noise-k x |NOISE - REF| / |REF|)): rounding alone moves an ill-conditioned
tensor far (BatchNorm at batch 8) and a well-conditioned one little, so each
is judged against its own measured sensitivity. The output's and the losses'
tolerances become max(--rtol / --loss-rtol, --noise-k x their floor) (a note
gives the floors): at batch 8 and 64 px, rounding ResNet-50's weights to tf32
moves its fp32 output by 3.6% and its losses by 4.4%.

--same-input: when the two runs saw different inputs (NCHW against NHWC: the
engine fills the input in memory order), print SKIP and exit 3 instead of
failing.

--randomize-bn rewrites a weights file with non-trivial BatchNorm affine
parameters and running statistics, so that eval-mode runs test them.

Prints one line per group ("CHECK OK|FAIL label group detail") and exits 0
when every check holds, 1 otherwise (2: usage, unreadable file; 3: skipped,
see --same-input)."""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engine"))
import mxw  # noqa: E402  (tests/engine/mxw.py: the tensor file reader)
import numpy as np  # noqa: E402  (numpy, not torch: importing torch took 1.2 s of each call)


# --noise-ref: an output or loss tolerance that k x its floor would put above
# this is held here (losses) or not judged (the output, said): beyond it a
# check could not fail
NOISE_OUT_CAP = 0.5


class Report:
    def __init__(self, label):
        self.label = label
        self.passed = 0
        self.failed = 0

    def check(self, group, ok, detail):
        print("CHECK %s %s %s: %s" % ("OK  " if ok else "FAIL", self.label, group, detail))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


def f64(t):
    return np.asarray(t, dtype=np.float64)


def maxabs(t):
    return float(np.abs(t).max()) if t.size else 0.0


def same_tensor(a, b):
    """torch.equal's rule: the same shape and every element equal (a NaN equals
    nothing; -0.0 equals 0.0)."""
    return a.shape == b.shape and bool(np.array_equal(a, b))


def rel_err(got, ref, floor):
    """max |got - ref| / max(max |ref|, floor) over the finite elements; inf
    when the shapes differ or got has a NaN / inf where ref has not the same
    (an fp16 step whose scaled gradients overflowed holds inf in both runs
    of an exact comparison)."""
    if got.size != ref.size:
        return math.inf
    got = f64(got).reshape(ref.shape)
    ref = f64(ref)
    bad = ~np.isfinite(got)
    if bad.any():
        same = np.isinf(got) & np.isinf(ref) & (np.sign(got) == np.sign(ref))
        if not (bad <= same).all() or (np.isfinite(got) != np.isfinite(ref)).any():
            return math.inf
        keep = np.isfinite(got)
        got, ref = got[keep], ref[keep]
    if ref.size == 0:
        return 0.0
    return float(np.abs(got - ref).max()) / max(maxabs(ref), floor, 1e-30)


def present(rep, name, got, keys):
    """keys is not empty and got has every one of them (else a failed check)."""
    missing = [k for k in keys if k not in got]
    if missing:
        rep.check(name, False, "%d tensor(s) missing from the second dump (%s%s)"
                  % (len(missing), ", ".join(missing[:3]), ", ..." if len(missing) > 3 else ""))
    return bool(keys) and not missing


def group(rep, name, ref, got, keys, rtol, floor_frac=1e-3):
    """Every tensor of keys within rtol, relative to its own largest magnitude
    or to floor_frac of the group's largest, whichever is larger."""
    if not present(rep, name, got, keys):
        return
    gmax = max(maxabs(f64(ref[k])) for k in keys)
    worst, wk = max((rel_err(got[k], ref[k], floor_frac * gmax), k) for k in keys)
    rep.check(name, worst <= rtol, "%d tensor(s), worst relative maxdiff %.3e (%s), tolerance %.1e"
              % (len(keys), worst, wk, rtol))


def l2_errs(ref, other, keys, floor_frac=1e-3):
    """Per tensor of keys: |other - ref| / |ref| in the L2 norm, |ref| at least
    floor_frac of the group's largest norm; inf where other lacks the tensor,
    its shape differs or it is not finite."""
    norms = {k: float(np.linalg.norm(f64(ref[k]).ravel())) for k in keys}
    gmax = max(norms.values())
    out = {}
    for k in keys:
        if k not in other or other[k].size != ref[k].size:
            out[k] = math.inf
            continue
        d = float(np.linalg.norm((f64(other[k]).reshape(ref[k].shape) - f64(ref[k])).ravel()))
        out[k] = d / max(norms[k], floor_frac * gmax, 1e-30) if math.isfinite(d) else math.inf
    return out


def group_l2(rep, name, ref, got, keys, rtol, noise=None, base=None, k_noise=4.0):
    """Every tensor of keys within rtol in the L2 norm: |got - ref| / |ref|,
    |ref| at least 1e-3 of the group's largest norm (reduced precision:
    a max-pool or ReLU decision that rounding flips moves a few elements
    whole, which the elementwise maximum would take for a wrong gradient).
    With noise (the reference engine's run from the weights rounded to GOT's
    precision: how far rounding alone moves each tensor, its floor), each
    tensor's tolerance is min(rtol, max(base, k_noise x its floor)): a
    well-conditioned tensor is held to base, an ill-conditioned one gets up
    to rtol as its measured floor says; one whose floor is above rtol / 2
    is not judged (a note names how many and the worst)."""
    if not present(rep, name, got, keys):
        return
    err = l2_errs(ref, got, keys)
    if noise is None:
        worst, wk = max((err[k], k) for k in keys)
        rep.check(name, worst <= rtol, "%d tensor(s), worst relative L2 difference %.3e (%s), tolerance %.1e"
                  % (len(keys), worst, wk, rtol))
        return
    floor = l2_errs(ref, noise, keys)
    bad = [k for k in keys if not math.isfinite(floor[k])]
    if bad:
        rep.check(name, False, "the rounding run has no finite gradient %s (%d tensor(s)): no floor to judge by"
                  % (bad[0], len(bad)))
        return
    # a tensor that rounding alone moves by more than half the cap cannot be
    # held to the cap (the engine's error is up to about twice its floor):
    # not judged, counted and named; the trajectory judges the run
    loose = sorted((k for k in keys if floor[k] > rtol / 2), key=lambda k: -floor[k])
    judged = [k for k in keys if k not in loose]
    if loose:
        print("note %s: %s: %d of %d tensor(s) not judged: rounding the weights alone moves them by more than "
              "half the cap %.2g (ill-conditioned; the largest floor %.3e, %s)"
              % (rep.label, name, len(loose), len(keys), rtol, floor[loose[0]], loose[0]))
    if not judged:
        rep.check(name, True, "no tensor judged: every one's rounding floor is above half the cap %.2g" % rtol)
        return
    tol = {k: min(rtol, max(base, k_noise * floor[k])) for k in judged}
    worst, wk = max((err[k] / tol[k], k) for k in judged)
    wide = sum(1 for k in judged if tol[k] > base)
    capped = sum(1 for k in judged if tol[k] >= rtol)
    emax, ek = max((err[k], k) for k in judged)
    rep.check(name, worst <= 1.0,
              "%d tensor(s), each within min(%.2g, max(%.2g, %g x its rounding floor)); worst %.2f of its "
              "tolerance (%s: relative L2 difference %.3e, floor %.3e, tolerance %.3e); largest difference "
              "%.3e (%s, tolerance %.3e); %d tolerance(s) above %.2g by their floor, %d at %.2g%s"
              % (len(judged), rtol, base, k_noise, worst, wk, err[wk], floor[wk], tol[wk], emax, ek, tol[ek],
                 wide, base, capped, rtol, "; %d not judged (above)" % len(loose) if loose else ""))


def final_adamw(rep, ref, got, keys, rtol, lr, steps, floor_frac=1e-3):
    """final weights of an AdamW run: as group(), except that per tensor at
    most max(1, 1e-3 of its elements) may be beyond rtol, each within 2 lr a
    step (AdamW moves an element by about lr a step whatever its gradient, so
    an element whose gradient is rounding noise may differ by that much
    between two right runs; a wrong gradient or update moves whole tensors)."""
    if not present(rep, "final", got, keys):
        return
    gmax = max(maxabs(f64(ref[k])) for k in keys)
    bound = 2.0 * lr * steps
    worst, wk, nout, bad = 0.0, keys[0], 0, []
    for k in keys:
        e = rel_err(got[k], ref[k], floor_frac * gmax)
        if e <= rtol:
            if e > worst:
                worst, wk = e, k
            continue
        if not math.isfinite(e):
            bad.append("%s: not finite or another shape" % k)
            continue
        g, r = f64(got[k]).reshape(ref[k].shape), f64(ref[k])
        floor = max(maxabs(r), floor_frac * gmax, 1e-30)
        d = np.abs(g - r)
        over = d > rtol * floor
        n, allowed, dmax = int(over.sum()), max(1, int(1e-3 * d.size)), float(d.max())
        rest = float((d * ~over).max()) / floor
        if rest > worst:
            worst, wk = rest, k
        if n > allowed or dmax > bound:
            bad.append("%s: %d of %d element(s) beyond the tolerance (at most %d), largest |diff| %.3g = %.3g lr"
                       % (k, n, d.size, allowed, dmax, dmax / lr))
        else:
            nout += n
            print("note %s: final: %s: %d of %d element(s) beyond the tolerance, largest |diff| %.3g = %.3g lr "
                  "(AdamW on a gradient at rounding level; allowed: %d, each within 2 lr a step)"
                  % (rep.label, k, n, d.size, dmax, dmax / lr, allowed))
    detail = "%d tensor(s), worst relative maxdiff %.3e (%s) with %d AdamW outlier element(s) set apart, tolerance %.1e" % (
        len(keys), worst, wk, nout, rtol)
    rep.check("final", not bad, detail + ("" if not bad else "; " + "; ".join(bad[:3])))


def exact(rep, name, ref, got, keys):
    if not present(rep, name, got, keys):
        return
    bad = [k for k in keys if not same_tensor(got[k], ref[k])]
    detail = "%d tensor(s) bit-identical" % len(keys) if not bad else "%d of %d differ (%s%s; max |diff| %.3e)" % (
        len(bad), len(keys), ", ".join(bad[:3]), ", ..." if len(bad) > 3 else "",
        max(float(np.abs(f64(got[k]) - f64(ref[k])).max()) if got[k].shape == ref[k].shape and got[k].size
            else 0.0 if got[k].shape == ref[k].shape else math.inf for k in bad))
    rep.check(name, not bad, detail)


def losses_close(rep, ref, got, rtol, trajectory):
    if "losses" not in ref:
        return
    if "losses" not in got:
        rep.check("losses", False, "the second dump has no losses")
        return
    a, b = f64(got["losses"]).ravel(), f64(ref["losses"]).ravel()
    if a.size != b.size:
        rep.check("losses", False, "%d steps vs %d" % (a.size, b.size))
        return
    # steps whose update loss scaling skipped (fp16: "skipped", 1 per such
    # step; none in a dump without it)
    sk_a = [int(v) for v in got["skipped"].ravel().tolist()] if "skipped" in got else [0] * a.size
    sk_b = [int(v) for v in ref["skipped"].ravel().tolist()] if "skipped" in ref else [0] * b.size
    if sk_a != sk_b:
        where = "GOT skipped step(s) %s, REF %s" % ([i + 1 for i, v in enumerate(sk_a) if v] or "none",
                                                    [i + 1 for i, v in enumerate(sk_b) if v] or "none")
        if not trajectory:
            rep.check("losses", False, "the runs skipped different updates (%s): not the same training" % where)
            return
        # pair the steps by the updates applied before them: a step after k
        # skips sees the weights REF had k steps earlier (GradScaler's skips,
        # which a run without loss scaling never makes)
        def first_by_updates(sk):
            first, u = {}, 0
            for i, v in enumerate(sk):
                first.setdefault(u, i)
                u += 0 if v else 1
            return first
        fa, fb = first_by_updates(sk_a), first_by_updates(sk_b)
        common = sorted(set(fa) & set(fb))
        print("note %s: losses: %s (dynamic loss scaling); compared by the updates applied before each step: "
              "%d pair(s)" % (rep.label, where, len(common)))
        if len(common) < min(2, b.size):
            rep.check("losses", False, "%s: %d step(s) left to compare, want 2 or more" % (where, len(common)))
            return
        a = np.array([a[fa[u]] for u in common], dtype=np.float64)
        b = np.array([b[fb[u]] for u in common], dtype=np.float64)
    fin = bool(np.isfinite(a).all())
    shown = " ".join("%.5g" % v for v in a.tolist())
    refshown = " ".join("%.5g" % v for v in b.tolist())
    if not fin:
        rep.check("losses", False, "not finite: %s (reference %s)" % (shown, refshown))
        return
    if not trajectory:
        worst = float((np.abs(a - b) / np.maximum(np.abs(b), 1e-6)).max())
        rep.check("losses", worst <= rtol, "%d step(s), worst relative diff %.3e, tolerance %.1e (%s vs %s)"
                  % (a.size, worst, rtol, shown, refshown))
        return
    scale = max(abs(float(b[0])), 1e-6)
    worst = float((np.abs(a - b) / scale).max())
    rep.check("losses", worst <= rtol, "%d step(s), worst diff %.3e of the first loss, tolerance %.1e (%s vs %s)"
              % (a.size, worst, rtol, shown, refshown))
    dref, dgot = float(b[0] - b[-1]), float(a[0] - a[-1])
    if abs(dref) > rtol * scale and a.size > 1:
        ratio = dgot / dref
        rep.check("loss trend", 0.5 <= ratio <= 2.0,
                  "loss moved by %.4g over %d steps, reference %.4g (ratio %.2f, want 0.5-2)"
                  % (-dgot, a.size, -dref, ratio))


def compare(args):
    ref = mxw.load_np(args.ref)
    got = mxw.load_np(args.got)
    rep = Report(args.label or "%s vs %s" % (os.path.basename(args.got), os.path.basename(args.ref)))
    if "input" in ref:
        if "input" not in got:
            rep.check("inputs", False, "the second dump has no input")
        else:
            e = rel_err(got["input"], ref["input"], 0.0)
            same_target = "target" not in ref or ("target" in got and same_tensor(got["target"], ref["target"]))
            if args.same_input and not (e <= args.input_rtol and same_target):
                print("SKIP %s: the two runs saw different inputs (input relative maxdiff %.3e, target %s): "
                      "nothing to compare" % (rep.label, e, "identical" if same_target else "differs"))
                return 3
            rep.check("inputs", e <= args.input_rtol and same_target,
                      "input relative maxdiff %.3e (tolerance %.1e), target %s"
                      % (e, args.input_rtol, "identical" if same_target else "differs"))
    exact(rep, "init", ref, got, sorted(k for k in ref if k.startswith("init.")))
    noise = mxw.load_np(args.noise_ref) if args.noise_ref else None
    out_rtol, loss_rtol = args.rtol, args.loss_rtol
    if noise is not None:
        # the output and the losses: rounding the weights alone moves them by
        # their floor; each tolerance is max(its own, k x that floor)
        fo = rel_err(noise["output"], ref["output"], 0.0) if "output" in ref and "output" in noise else math.inf
        fl = math.inf
        if "losses" in ref and "losses" in noise and noise["losses"].size == ref["losses"].size:
            b = f64(ref["losses"]).ravel()
            fl = float((np.abs(f64(noise["losses"]).ravel() - b) / max(abs(float(b[0])), 1e-6)).max())
        if not (math.isfinite(fo) and math.isfinite(fl)):
            rep.check("floor", False, "the rounding run %s lacks the output or the losses, or they are not finite"
                      % args.noise_ref)
            return 1
        out_rtol, loss_rtol = max(out_rtol, args.noise_k * fo), max(loss_rtol, args.noise_k * fl)
        print("note %s: rounding floors (REF's engine from the weights rounded or moved at GOT's precision): output %.3e, "
              "losses %.3e of the first loss: tolerances output %.2e, losses %.2e (max of --rtol / --loss-rtol and "
              "%g x the floor, at most %g)" % (rep.label, fo, fl, min(out_rtol, NOISE_OUT_CAP),
                                                min(loss_rtol, NOISE_OUT_CAP), args.noise_k, NOISE_OUT_CAP))
        if loss_rtol > NOISE_OUT_CAP:
            # a tolerance past it could not fail: held at it (the trend check stays)
            print("note %s: losses: %g x the floor is %.2e, above %g: judged at %g" % (
                rep.label, args.noise_k, loss_rtol, NOISE_OUT_CAP, NOISE_OUT_CAP))
            loss_rtol = NOISE_OUT_CAP
        if out_rtol > NOISE_OUT_CAP and "output" in ref:
            print("note %s: output: not judged: rounding the weights alone moves it by %.3e (%g x that is above %g;"
                  " ill-conditioned)" % (rep.label, fo, args.noise_k, NOISE_OUT_CAP))
    if "output" in ref and (noise is None or out_rtol <= NOISE_OUT_CAP):
        group(rep, "output", ref, got, ["output"], out_rtol)
    grads = sorted(k for k in ref if k.startswith("grad."))
    if not args.trajectory:
        group(rep, "grads", ref, got, grads, args.grad_rtol)
        if args.grad_note_rtol is not None and grads and all(k in got for k in grads):
            # how many tensors a tighter bound would have failed (a flipped
            # ReLU / max-pool decision moves what it reaches; a wrong kernel
            # fails --grad-rtol)
            gmax = max(maxabs(f64(ref[k])) for k in grads)
            errs = sorted(((rel_err(got[k], ref[k], 1e-3 * gmax), k) for k in grads), reverse=True)
            over = [e for e in errs if e[0] > args.grad_note_rtol]
            if over:
                print("note %s: grads: %d of %d tensor(s) beyond %.0e (the largest %.3e, %s), within %.0e"
                      % (rep.label, len(over), len(grads), args.grad_note_rtol, over[0][0], over[0][1],
                         args.grad_rtol))
    elif args.traj_grad_rtol is not None and grads:
        if "skipped" in got and got["skipped"].size and int(got["skipped"].ravel()[0]) != 0:
            print("note %s: grads: not compared: loss scaling skipped step 1's update (its gradients overflowed)"
                  % rep.label)
        else:
            group_l2(rep, "grads", ref, got, grads, args.traj_grad_rtol, noise, args.noise_base, args.noise_k)
    losses_close(rep, ref, got, loss_rtol, args.trajectory)
    if not args.trajectory:
        fin = sorted(k for k in ref if k.startswith("final."))
        free = [k for k in fin if k.endswith(".attention.key.bias")]
        keep = [k for k in fin if k not in free]
        if args.adamw_lr:
            final_adamw(rep, ref, got, keep, args.final_rtol, args.adamw_lr,
                        ref["losses"].size if "losses" in ref else 1)
        else:
            group(rep, "final", ref, got, keep, args.final_rtol)
        if free and all(k in got and got[k].shape == ref[k].shape for k in free):
            d = max(maxabs(f64(got[k]) - f64(ref[k])) for k in free)
            print("note %s: final: %d attention key bias(es) not compared (gradient 0 up to rounding; AdamW "
                  "steps on its noise): max |diff| %.3e" % (rep.label, len(free), d))
    if not args.no_masks:
        exact(rep, "masks", ref, got, sorted(k for k in ref if k.startswith("mask.")))
    extra = sorted(set(got) - set(ref) - {"skipped"})
    if extra:
        print("note %s: tensors only in the second dump: %s" % (rep.label, ", ".join(extra[:5])))
    if rep.passed + rep.failed == 0:
        rep.check("dump", False, "nothing to compare in %s" % args.ref)
    return 0 if rep.failed == 0 else 1


def randomize_bn(src, dst, seed=1):
    """BatchNorm weight ~ 1 + 0.2 N, bias ~ 0.1 N, running_mean ~ 0.1 N,
    running_var ~ 1 + 0.5 U (as resnet_ref.py's randomise_bn)."""
    import torch  # only here: the same draws as resnet_ref.py's randomise_bn

    w = mxw.load(src)
    g = torch.Generator().manual_seed(seed)
    n = 0
    for k in sorted(w):
        if not k.endswith(".running_mean"):
            continue
        p = k[: -len(".running_mean")]
        shape = w[k].shape
        w[p + ".weight"] = 1 + 0.2 * torch.randn(shape, generator=g)
        w[p + ".bias"] = 0.1 * torch.randn(shape, generator=g)
        w[p + ".running_mean"] = 0.1 * torch.randn(shape, generator=g)
        w[p + ".running_var"] = 1 + 0.5 * torch.rand(shape, generator=g)
        n += 1
    mxw.save(dst, {k: (v.int() if v.dtype in (torch.int64, torch.int32) else v.float()) for k, v in w.items()})
    print("randomized %d BatchNorm layer(s): %s -> %s" % (n, src, dst))
    return 0


def round_weights(src, dst, bits):
    """Every float32 of weights file src rounded to bits mantissa bits (of
    23), to nearest, ties to even; the exponent range is float32's (fp16's
    smaller range does not matter to weights of these sizes)."""
    if not 1 <= bits <= 22:
        raise ValueError("--round-weights: %d mantissa bits, want 1..22" % bits)
    w = mxw.load_np(src)
    drop = 23 - bits
    out = {}
    for k, a in w.items():
        if a.dtype != np.float32:
            out[k] = a.astype(np.int32)
            continue
        u = a.view(np.uint32).astype(np.uint64)
        r = ((u + ((1 << (drop - 1)) - 1) + ((u >> drop) & 1)) >> drop) << drop
        out[k] = r.astype(np.uint32).view(np.float32)
    mxw.save(dst, out)
    print("rounded %d tensor(s) to %d mantissa bits: %s -> %s" % (len(w), bits, src, dst))
    return 0


def perturb_ulp(src, dst, seed=1):
    """Every float32 of weights file src moved to its neighbour above or below
    (each at random, seeded): the floor of an fp32 run, as --round-weights is
    a reduced precision's."""
    w = mxw.load_np(src)
    rng = np.random.default_rng(seed)
    out = {}
    for k, a in w.items():
        if a.dtype != np.float32:
            out[k] = a.astype(np.int32)
            continue
        up = rng.integers(0, 2, a.shape).astype(bool)
        out[k] = np.where(up, np.nextafter(a, np.float32(np.inf)), np.nextafter(a, np.float32(-np.inf))).astype(np.float32)
    mxw.save(dst, out)
    print("moved %d tensor(s) by one ulp: %s -> %s" % (len(w), src, dst))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description="Compare two matrix-engine --dump files (see the module docstring).")
    p.add_argument("ref", help="reference dump (the CPU backend's), or the weights file to rewrite with --randomize-bn")
    p.add_argument("got", help="dump to check, or the output weights file with --randomize-bn")
    p.add_argument("--label", default="", help="printed on every line")
    p.add_argument("--rtol", type=float, default=1e-4, help="output (default 1e-4)")
    p.add_argument("--grad-rtol", type=float, default=None, help="gradients (default: --rtol)")
    p.add_argument("--loss-rtol", type=float, default=None, help="losses (default: --rtol)")
    p.add_argument("--final-rtol", type=float, default=None, help="final weights (default: --rtol)")
    p.add_argument("--adamw-lr", type=float, default=None,
                   help="the runs trained with AdamW at this learning rate: per tensor, at most 1e-3 of the final "
                        "weights' elements (at least 1) may be beyond --final-rtol, each within 2 lr a step")
    p.add_argument("--input-rtol", type=float, default=0.0, help="input images (default 0: identical)")
    p.add_argument("--trajectory", action="store_true", help="mixed precision: output and loss trajectory only")
    p.add_argument("--traj-grad-rtol", type=float, default=None,
                   help="with --trajectory: step 1's gradients too, at this tolerance")
    p.add_argument("--grad-note-rtol", type=float, default=None,
                   help="a note counting the gradients beyond this (tighter than --grad-rtol) tolerance")
    p.add_argument("--noise-ref", default=None,
                   help="with --traj-grad-rtol: REF's engine run again from the weights rounded to GOT's precision "
                        "(--round-weights); each gradient's tolerance becomes min(--traj-grad-rtol, "
                        "max(--noise-base, --noise-k x how far that run moved it))")
    p.add_argument("--noise-base", type=float, default=None, help="with --noise-ref: the least tolerance")
    p.add_argument("--noise-k", type=float, default=4.0, help="with --noise-ref: the multiple of the floor (default 4)")
    p.add_argument("--perturb-ulp", action="store_true",
                   help="rewrite weights file REF into GOT with every float moved by one ulp up or down (seeded): "
                        "an fp32 rounding floor")
    p.add_argument("--round-weights", type=int, default=None, metavar="BITS",
                   help="rewrite weights file REF into GOT with every float rounded to BITS mantissa bits "
                        "(to nearest, ties to even: 10 = tf32 / fp16, 7 = bf16)")
    p.add_argument("--no-masks", action="store_true", help="do not compare dropout masks")
    p.add_argument("--same-input", action="store_true", help="exit 3 (skip) when the inputs differ")
    p.add_argument("--randomize-bn", action="store_true", help="rewrite weights file REF into GOT with random BatchNorm")
    args = p.parse_args(argv)
    for k in ("grad_rtol", "loss_rtol", "final_rtol"):
        if getattr(args, k) is None:
            setattr(args, k, args.rtol)
    try:
        if args.randomize_bn:
            return randomize_bn(args.ref, args.got)
        if args.round_weights is not None:
            return round_weights(args.ref, args.got, args.round_weights)
        if args.perturb_ulp:
            return perturb_ulp(args.ref, args.got)
        if args.noise_ref and (not args.trajectory or (args.traj_grad_rtol is not None and args.noise_base is None)):
            print("FAIL compare_dumps: --noise-ref needs --trajectory, and --noise-base with --traj-grad-rtol")
            return 2
        return compare(args)
    except (OSError, ValueError, AssertionError) as e:
        print("FAIL compare_dumps: %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
