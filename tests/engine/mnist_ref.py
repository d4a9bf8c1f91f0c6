"""mnist_ref.py - the native engine's mnist_cnn against PyTorch (CPU, fp64
reference) with the same weights: forward output, every parameter's gradient,
the loss over 5 SGD-momentum steps and the final weights; dropout masks are
taken from the engine's dump. Variants: NCHW / NHWC, compile none / default,
inference with eval and inference-mode on / off."""
import os
import shutil
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxw  # noqa: E402

torch.manual_seed(0)


class Net(nn.Module):
    """Koehler's MNIST CNN, as in 004_9e9952a87295c093.txt."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x, m1=None, m2=None):
        """m1 (N, 20), m2 (N, 50): the engine's dropout masks (scale included)."""
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = self.conv2(x)
        if m1 is not None:
            x = x * m1[:, :, None, None]
        x = F.relu(F.max_pool2d(x, 2))
        x = x.reshape(-1, 320)
        x = F.relu(self.fc1(x))
        if m2 is not None:
            x = x * m2
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def main():
    chk = mxw.Checker()
    work = mxw.tmpdir()
    net = Net()
    wfile = os.path.join(work, "w.mxw")
    mxw.save(wfile, net.state_dict())
    B, steps = 8, 5

    for cl in ("off", "on"):
        for comp in ("none", "default"):
            tag = "train channels_last=%s compile=%s" % (cl, comp)
            dump = os.path.join(work, "d.mxw")
            mxw.engine("--model", "mnist_cnn", "--task", "train", "--batch", B, "--threads", 2,
                       "--channels-last", cl, "--compile", comp, "--weights", wfile,
                       "--steps", steps, "--dump", dump)
            d = mxw.load(dump)
            ref = Net().double()
            ref.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
            for k, v in ref.state_dict().items():
                chk.close("%s init.%s" % (tag, k), d["init." + k], v, 0.0)
            x, t = d["input"].double(), d["target"]
            opt = torch.optim.SGD(ref.parameters(), lr=0.01, momentum=0.5)
            losses = []
            for s in range(1, steps + 1):
                opt.zero_grad()
                out = ref(x, d["mask.conv2_drop.%d" % s].double(), d["mask.fc1_drop.%d" % s].double())
                loss = F.nll_loss(out, t)
                loss.backward()
                if s == 1:
                    chk.close("%s output" % tag, d["output"], out.detach())
                    for k, p in ref.named_parameters():
                        chk.close("%s grad.%s" % (tag, k), d["grad." + k], p.grad)
                losses.append(loss.item())
                opt.step()
            chk.close("%s losses" % tag, d["losses"], torch.tensor(losses, dtype=torch.float64))
            for k, v in ref.state_dict().items():
                chk.close("%s final.%s" % (tag, k), d["final." + k], v)

    # inference: eval on (no dropout) in every memory / fusion / layout mode
    ref = Net().double()
    ref.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
    ref.eval()
    for cl in ("off", "on"):
        for comp in ("none", "default"):
            for im in ("off", "on"):
                tag = "infer eval channels_last=%s compile=%s inference_mode=%s" % (cl, comp, im)
                dump = os.path.join(work, "i.mxw")
                mxw.engine("--model", "mnist_cnn", "--task", "infer", "--batch", B, "--eval", "on",
                           "--channels-last", cl, "--compile", comp, "--inference-mode", im,
                           "--weights", wfile, "--threads", 2, "--dump", dump)
                d = mxw.load(dump)
                with torch.no_grad():
                    out = ref(d["input"].double())
                chk.close("%s output" % tag, d["output"], out)
    # inference with dropout active (eval off): masks from the dump
    dump = os.path.join(work, "i.mxw")
    mxw.engine("--model", "mnist_cnn", "--task", "infer", "--batch", B, "--weights", wfile,
               "--threads", 1, "--dump", dump)
    d = mxw.load(dump)
    with torch.no_grad():
        out = ref(d["input"].double(), d["mask.conv2_drop.1"].double(), d["mask.fc1_drop.1"].double())
    chk.close("infer eval=off output", d["output"], out)
    m = d["mask.fc1_drop.1"]
    frac = (m == 0).double().mean().item()
    chk.true("dropout masks are 0 or 2, about half zero", bool(((m == 0) | (m == 2)).all()) and 0.2 < frac < 0.8,
             "(zero fraction %.2f)" % frac)
    # --save-weights writes what --weights reads
    saved = os.path.join(work, "s.mxw")
    mxw.engine("--model", "mnist_cnn", "--weights", wfile, "--steps", 1, "--warmup", 0,
               "--save-weights", saved, "--result", os.path.join(work, "r.txt"))
    s = mxw.load(saved)
    for k, v in net.state_dict().items():
        chk.close("save-weights %s" % k, s[k], v.double(), 0.0)
    shutil.rmtree(work)
    return chk.verdict()


if __name__ == "__main__":
    sys.exit(main())
