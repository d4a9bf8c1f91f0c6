"""resnet_ref.py - the native engine's resnet18 / resnet50 / resnet_tiny
against torchvision (CPU, fp64 reference) with the same weights: forward
output, every parameter's gradient, BatchNorm running statistics, the loss over
5 SGD steps (resnet18, resnet_tiny), inference in eval mode with BN folding,
fusion, NHWC and memory planning."""
import os
import shutil
import sys

import torch
import torch.nn.functional as F

try:
    import torchvision
except ImportError:  # the reference models come from torchvision
    print("SKIP: torchvision is not installed (Debian: python3-torchvision)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxw  # noqa: E402

torch.manual_seed(0)


def make(name):
    if name == "resnet_tiny":
        return tiny()
    return getattr(torchvision.models, name)(num_classes=1000)


def tiny():
    """The PyTorch engine's resnet_tiny with torchvision's BasicBlock: 3x3/1
    stem of 16 channels, no max-pool, one block per stage, widths 16-128."""
    from torchvision.models.resnet import BasicBlock, ResNet

    class Tiny(ResNet):
        def __init__(self):
            torch.nn.Module.__init__(self)
            self._norm_layer = torch.nn.BatchNorm2d
            self.inplanes, self.dilation, self.groups, self.base_width = 16, 1, 1, 64
            self.conv1 = torch.nn.Conv2d(3, 16, 3, 1, 1, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(16)
            self.relu = torch.nn.ReLU(inplace=True)
            self.maxpool = torch.nn.Identity()
            self.layer1 = self._make_layer(BasicBlock, 16, 1)
            self.layer2 = self._make_layer(BasicBlock, 32, 1, stride=2)
            self.layer3 = self._make_layer(BasicBlock, 64, 1, stride=2)
            self.layer4 = self._make_layer(BasicBlock, 128, 1, stride=2)
            self.avgpool = torch.nn.AdaptiveAvgPool2d((1, 1))
            self.fc = torch.nn.Linear(128, 10)
    return Tiny()


def state(m):
    return {k: v for k, v in m.state_dict().items() if not k.endswith("num_batches_tracked")}


def randomise_bn(m):
    """Non-trivial BN affine and running statistics, so eval mode is tested."""
    g = torch.Generator().manual_seed(1)
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            with torch.no_grad():
                mod.weight.copy_(1 + 0.2 * torch.randn(mod.weight.shape, generator=g))
                mod.bias.copy_(0.1 * torch.randn(mod.bias.shape, generator=g))
                mod.running_mean.copy_(0.1 * torch.randn(mod.running_mean.shape, generator=g))
                mod.running_var.copy_(1 + 0.5 * torch.rand(mod.running_var.shape, generator=g))


def double_copy(net, name):
    ref = make(name).double()
    ref.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
    return ref


def trajectory(net, name, x, t, steps, dtype, lr, evalmode=False):
    """Output and gradients of step 1, losses of every step, final state."""
    ref = make(name).to(dtype)
    ref.load_state_dict({k: v.to(dtype) for k, v in net.state_dict().items()})
    ref.eval() if evalmode else ref.train()
    opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    r = {"losses": []}
    for s in range(1, steps + 1):
        opt.zero_grad()
        out = ref(x.to(dtype))
        loss = F.cross_entropy(out, t)
        loss.backward()
        if s == 1:
            r["output"] = out.detach().double()
            for k, p in ref.named_parameters():
                r["grad." + k] = p.grad.detach().clone().double()  # a copy: zero_grad zeroes in place
        r["losses"].append(loss.item())
        opt.step()
    r["losses"] = torch.tensor(r["losses"], dtype=torch.float64)
    for k, v in state(ref).items():
        r["final." + k] = v.double()
    return r


def rel(a, b, floor=1e-6):
    """max |a - b| / max(max |b|, floor)."""
    return ((a.double().reshape(b.shape) - b).abs().max() / max(b.abs().max().item(), floor)).item()


def check_train(chk, work, name, net, B, side, steps, variants, lr=0.001, evalmode=False):
    """Engine against PyTorch fp32 at 1e-4 (1e-3 for the state after several
    steps); where that fails, against fp64 PyTorch as follows. Each tensor's error is relative to its
    largest magnitude, or to 1e-3 of the largest over its group where the
    tensor is nearly zero (the bias gradient of a BN followed by another BN).
    The tolerance is 1e-4 (1e-3 for the state after several steps), or 4x
    PyTorch's own fp32 error against fp64 where that is larger: BatchNorm on
    batch statistics over a handful of values is ill-conditioned, and fp32
    PyTorch is no closer there."""
    wfile = os.path.join(work, "w.mxw")
    mxw.save(wfile, state(net))
    for cl, comp in variants:
        tag = "%s train channels_last=%s compile=%s" % (name, cl, comp)
        dump = os.path.join(work, "d.mxw")
        mxw.engine("--model", name, "--task", "train", "--batch", B, "--image-size", side,
                   "--threads", 2, "--channels-last", cl, "--compile", comp, "--weights", wfile,
                   "--steps", steps, "--lr", lr, "--eval", "on" if evalmode else "off",
                   "--dump", dump)
        d = mxw.load(dump)
        x, t = d["input"], d["target"]
        r64 = trajectory(net, name, x, t, steps, torch.float64, lr, evalmode)
        r32 = trajectory(net, name, x, t, steps, torch.float32, lr, evalmode)
        tag += " eval=on" if evalmode else ""
        groups = [("output", ["output"], 1e-4), ("losses", ["losses"], 1e-4),
                  ("every gradient", [k for k in r64 if k.startswith("grad.")], 1e-4),
                  ("every final weight and running statistic",
                   [k for k in r64 if k.startswith("final.")], 1e-3)]
        for what, keys, base in groups:
            gmax = max(r64[k].abs().max().item() for k in keys)
            worst, wk = max((rel(d[k], r64[k], 1e-3 * gmax), k) for k in keys)
            floor = max(rel(r32[k], r64[k], 1e-3 * gmax) for k in keys)
            vs32 = max(rel(d[k], r32[k], 1e-3 * gmax) for k in keys)
            tol = max(base, 4 * floor)
            # strict against fp32 PyTorch (same ReLU / max-pool decisions at
            # exact ties), else against fp64 within fp32's own noise
            chk.true("%s %s (%d tensors)" % (tag, what, len(keys)), vs32 <= base or worst <= tol,
                     "worst relative maxdiff %.3e (%s), tolerance %.1e; PyTorch fp32 vs fp64 %.3e, "
                     "engine vs PyTorch fp32 %.3e" % (worst, wk, tol, floor, vs32))


def check_infer(chk, work, name, net, B, side):
    randomise_bn(net)
    wfile = os.path.join(work, "w.mxw")
    mxw.save(wfile, state(net))
    ref = double_copy(net, name)
    ref.eval()
    for cl in ("off", "on"):
        for comp in ("none", "default"):
            for im in ("off", "on"):
                tag = "%s infer eval channels_last=%s compile=%s inference_mode=%s" % (name, cl, comp, im)
                dump = os.path.join(work, "i.mxw")
                mxw.engine("--model", name, "--task", "infer", "--batch", B, "--image-size", side,
                           "--eval", "on", "--channels-last", cl, "--compile", comp,
                           "--inference-mode", im, "--weights", wfile, "--threads", 2, "--dump", dump)
                d = mxw.load(dump)
                with torch.no_grad():
                    out = ref(d["input"].double())
                chk.close("%s output" % tag, d["output"], out)
    # eval off: BatchNorm on batch statistics in inference too (model.train())
    dump = os.path.join(work, "i.mxw")
    mxw.engine("--model", name, "--task", "infer", "--batch", B, "--image-size", side,
               "--weights", wfile, "--threads", 2, "--compile", "default", "--dump", dump)
    d = mxw.load(dump)
    ref.train()
    with torch.no_grad():
        out = ref(d["input"].double())
    chk.close("%s infer eval=off output" % name, d["output"], out)
    chk.close("%s infer eval=off running_var" % name, d["final.layer4.0.bn2.running_var"],
              ref.layer4[0].bn2.running_var)


def check_threads(chk, work):
    """1, 2 and 3 threads split the work differently (per-thread weight
    gradient partials, pixel chunks): the same gradients within rounding."""
    d = {}
    for t in (1, 2, 3):
        f = os.path.join(work, "t%d.mxw" % t)
        mxw.engine("--model", "resnet_tiny", "--task", "train", "--batch", 3, "--threads", t,
                   "--steps", 2, "--dump", f)
        d[t] = mxw.load(f)
    for t in (2, 3):
        worst = max(((d[1][k] - d[t][k]).abs().max() / max(d[1][k].abs().max().item(), 1e-6)).item()
                    for k in d[1] if k.startswith("grad.") or k.startswith("final."))
        chk.true("resnet_tiny train: 1 vs %d threads, every gradient and final weight" % t,
                 worst <= 1e-5, "worst relative maxdiff %.3e" % worst)


def main():
    chk = mxw.Checker()
    work = mxw.tmpdir()
    which = sys.argv[1:] or ["resnet_tiny", "resnet18", "resnet50"]
    # eval=on trains with BatchNorm on running statistics: well conditioned,
    # checked at 1e-4. eval=off (batch statistics over few values) is checked
    # against PyTorch's own fp32 noise, see check_train.
    if "resnet_tiny" in which:
        check_threads(chk, work)
        net = make("resnet_tiny")
        randomise_bn(net)
        four = [("off", "none"), ("on", "none"), ("off", "default"), ("on", "default")]
        check_train(chk, work, "resnet_tiny", net, 4, 32, 5, four, evalmode=True)
        check_train(chk, work, "resnet_tiny", net, 8, 32, 5, four)
        # 96x96: layer1's im2col no longer fits one chunk (pixel chunks)
        check_train(chk, work, "resnet_tiny", net, 2, 96, 2, [("off", "none")], evalmode=True)
        check_infer(chk, work, "resnet_tiny", net, 3, 32)
    if "resnet18" in which:
        net = make("resnet18")
        randomise_bn(net)
        check_train(chk, work, "resnet18", net, 2, 64, 5, [("off", "none"), ("on", "default")], evalmode=True)
        check_train(chk, work, "resnet18", net, 4, 64, 1, [("off", "default")])
        check_infer(chk, work, "resnet18", net, 2, 64)
    if "resnet50" in which:
        net = make("resnet50")
        randomise_bn(net)
        check_train(chk, work, "resnet50", net, 2, 64, 1, [("off", "default")], evalmode=True)
        check_train(chk, work, "resnet50", net, 2, 128, 1, [("on", "none")])
    shutil.rmtree(work)
    return chk.verdict()


if __name__ == "__main__":
    sys.exit(main())
