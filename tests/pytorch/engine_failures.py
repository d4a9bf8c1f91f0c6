#!/usr/bin/env python3
"""Failures are results: an exception becomes status=failed with its first line
as the reason and exit 1; running out of memory becomes status=oom."""
import contextlib
import io
import os
import sys
import tempfile

from enginetest import ENGINE, check, done, huge_alloc_fails, read_result, run

# out of memory: a ResNet-50 input batch of 10^6 images is 600 GB
if huge_alloc_fails():
    r = run(["--model", "resnet50", "--task", "infer", "--batch", "1000000"])
    check(r.rc == 1, "resnet50 batch 1e6: exit 1 (got %d)" % r.rc)
    check(r["status"] == "oom", "resnet50 batch 1e6: status=oom (got %s: %s)" % (r["status"], r["reason"]))
    check(bool(r["reason"]) and "\n" not in r["reason"], "oom: a one-line reason (%s)" % r["reason"])
else:
    print("skip - oom check: vm.overcommit_memory=1 would let a 600 GB allocation succeed")

# any exception: the engine's main() in this process, with a model builder that raises
sys.path.insert(0, os.path.dirname(ENGINE))
import matrix_torch  # noqa: E402
import matrix_torch_models  # noqa: E402


def broken(name):
    raise ValueError("weights are cursed\nsecond line of the message")


matrix_torch_models.build = broken
d = tempfile.mkdtemp()
path = os.path.join(d, "r.txt")
err = io.StringIO()
with contextlib.redirect_stderr(err):
    rc = matrix_torch.main(["--model", "mnist_cnn", "--device", "cpu", "--result", path])
res = read_result(path)
check(rc == 1, "raising model: exit 1 (got %d)" % rc)
check(res.get("status") == "failed", "raising model: status=failed (got %s)" % res.get("status"))
check(res.get("reason") == "ValueError: weights are cursed", "raising model: reason is the first line (%r)" % res.get("reason"))
check("Traceback" in err.getvalue(), "raising model: traceback in the log")
check(res.get("engine") == "pytorch" and res.get("device") == "cpu", "raising model: engine and device recorded")
check(os.listdir(d) == ["r.txt"], "raising model: only the result file in its directory")
done()
