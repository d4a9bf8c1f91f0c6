#!/usr/bin/env python3
"""Combinations that cannot run end as status=unsupported with a reason, exit 3,
and still name the engine, device and library versions."""
import subprocess

from enginetest import PYTHON, check, done, run_many, torch_version

version, (major, minor) = torch_version()
has_cuda = subprocess.run([PYTHON, "-c", "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"]).returncode == 0

cases = [
    (["--model", "mnist_cnn", "--precision", "fp16"], "precision fp16 on cpu"),
    (["--model", "mnist_cnn", "--syncbn", "on"], "syncbn on needs --gpus > 1"),
    (["--model", "resnet_tiny", "--syncbn", "on", "--gpus", "2"], "syncbn on needs cuda"),
]
if not has_cuda:
    cases.append((["--model", "mnist_cnn", "--device", "cuda"], "device cuda: no CUDA device"))
if major < 2:
    # the exact reason the issue asks for
    cases.append((["--model", "mnist_cnn", "--compile", "default"], "torch.compile needs torch >= 2.0, found %s" % version))
    cases.append((["--model", "bert_tiny", "--compile", "max-autotune", "--task", "infer"], "torch.compile needs torch >= 2.0, found %s" % version))

runs = run_many([args for args, _ in cases])
for (args, reason), r in zip(cases, runs):
    what = " ".join(args)
    check(r.rc == 3, "%s: exit 3 (got %d)" % (what, r.rc))
    check(r["status"] == "unsupported", "%s: status=unsupported (got %s)" % (what, r["status"]))
    check(reason in (r["reason"] or ""), "%s: reason %r contains %r" % (what, r["reason"], reason))
    check(r["engine"] == "pytorch" and r["torch_version"] == version and r["device"] in ("cpu", "cuda"),
          "%s: engine, torch_version, device recorded" % what)
    check("throughput" not in r.res, "%s: no throughput for an unsupported point" % what)
done()
