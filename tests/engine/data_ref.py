"""data_ref.py - the input pipeline of --data (issue 19 item 5) against a
PyTorch reference: on 60 images that mkidx.py writes, batch 8 (7 steps an
epoch, 4 images dropped), the native engine's dump holds each step's input,
target and image indices. Checked: the input is the file's images at those
indices, normalised as (x/255 - 0.1307)/0.3081, the targets their labels,
each epoch a fresh order without repeats; an SGD-momentum reference (fp64)
trained on the same batches from the same weights has the engine's losses
and final weights. Then the PyTorch engine on the same files: status ok,
the data keys, and a loss that falls."""
import os
import shutil
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxw  # noqa: E402
from mnist_ref import Net  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def idx(path, ndim):
    raw = open(path, "rb").read()
    dims = np.frombuffer(raw[4:4 + 4 * ndim], dtype=">u4")
    return np.frombuffer(raw[4 + 4 * ndim:], dtype=np.uint8).reshape(tuple(int(d) for d in dims))


def main():
    chk = mxw.Checker()
    work = mxw.tmpdir()
    data = os.path.join(work, "mnist")
    subprocess.check_call([sys.executable, os.path.join(HERE, "mkidx.py"), data, "--n", "60"])
    images = idx(os.path.join(data, "train-images-idx3-ubyte"), 3)
    labels = idx(os.path.join(data, "train-labels-idx1-ubyte"), 1)
    torch.manual_seed(0)
    net = Net()
    wfile = os.path.join(work, "w.mxw")
    mxw.save(wfile, net.state_dict())
    B, steps, per_epoch = 8, 16, 7

    for cl in ("off", "on"):
        tag = "channels_last=%s" % cl
        dump = os.path.join(work, "d.mxw")
        mxw.engine("--model", "mnist_cnn", "--task", "train", "--batch", B, "--threads", 2, "--eval", "on",
                   "--channels-last", cl, "--weights", wfile, "--data", data, "--steps", steps, "--dump", dump)
        d = mxw.load(dump)
        ref = Net().double()
        ref.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
        opt = torch.optim.SGD(ref.parameters(), lr=0.01, momentum=0.5)
        losses, seen = [], []
        for s in range(1, steps + 1):
            ix = d["data_index.%d" % s].long()
            want_x = (torch.from_numpy(images[ix.numpy()].astype(np.float64)) / 255.0 - 0.1307) / 0.3081
            chk.close("%s step %d input" % (tag, s), d["input.%d" % s], want_x.unsqueeze(1), 1e-5)
            chk.close("%s step %d target" % (tag, s), d["target.%d" % s],
                      torch.from_numpy(labels[ix.numpy()].astype(np.int64)), 0.0)
            seen.append(ix)
            opt.zero_grad()
            loss = F.nll_loss(ref(d["input.%d" % s].double()), d["target.%d" % s])
            loss.backward()
            losses.append(loss.item())
            opt.step()
        for e in range(2):
            ep = torch.cat(seen[e * per_epoch:(e + 1) * per_epoch])
            chk.true("%s epoch %d: %d distinct images" % (tag, e + 1, per_epoch * B),
                     len(set(ep.tolist())) == per_epoch * B, "(%d distinct)" % len(set(ep.tolist())))
        chk.true("%s the two epochs' orders differ" % tag,
                 not torch.equal(torch.cat(seen[:per_epoch]), torch.cat(seen[per_epoch:2 * per_epoch])))
        chk.close("%s losses" % tag, d["losses"], torch.tensor(losses, dtype=torch.float64))
        for k, v in ref.state_dict().items():
            chk.close("%s final.%s" % (tag, k), d["final." + k], v)
        chk.true("%s loss falls" % tag, losses[-1] < losses[0], "(%.4f -> %.4f)" % (losses[0], losses[-1]))

    # the PyTorch engine, same files
    res = os.path.join(work, "r.txt")
    script = os.path.join(HERE, "..", "..", "engine", "pytorch", "matrix_torch.py")
    subprocess.check_call([sys.executable, script, "--model", "mnist_cnn", "--task", "train", "--batch", "8",
                           "--threads", "1", "--device", "cpu", "--data", data, "--steps", "40", "--warmup", "1",
                           "--result", res], stderr=subprocess.DEVNULL)
    r = dict(line.rstrip("\n").split("=", 1) for line in open(res))
    chk.true("pytorch engine: status ok", r.get("status") == "ok", r.get("reason", ""))
    chk.true("pytorch engine: data keys", r.get("data") == data and r.get("data_images") == "60"
             and r.get("epoch_steps") == "7" and r.get("data_batches") == "41", str(r))
    chk.true("pytorch engine: data_upload none on the cpu (the native engine's key)", r.get("data_upload") == "none",
             r.get("data_upload", "missing"))
    chk.true("pytorch engine: loss falls", float(r["loss_last"]) < 0.75 * float(r["loss_first"]),
             "(%s -> %s)" % (r.get("loss_first"), r.get("loss_last")))
    shutil.rmtree(work)
    return chk.verdict()


if __name__ == "__main__":
    sys.exit(main())
