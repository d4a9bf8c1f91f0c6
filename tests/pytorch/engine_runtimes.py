#!/usr/bin/env python3
"""Runtimes and int8 (issue 20): ONNX Runtime fp32 agrees with eager fp32
(mnist_cnn, resnet_tiny, bert_tiny, and the study's resnet18 at batch 1);
int8 dynamic (eager and ONNX Runtime, resnet18 too) and int8 static (ONNX
Runtime QDQ) run and report their error against eager fp32; inductor needs
torch 2 (unsupported on 1.13, with the version) and is not for int8; a point outside its tolerance is
failed without a throughput; TensorRT and a missing package are unsupported
with the package named. Needs onnxruntime and onnx (tests/install-deps.sh):
without them the test is skipped (exit 77) with the reason, after checking
that the engine names the missing package."""
import os
import re
import subprocess
import sys
import tempfile

from enginetest import PYTHON, check, done, failures, run, run_many, torch_version

have = subprocess.run([PYTHON, "-c", "import onnxruntime, onnx"], capture_output=True, text=True)
os.environ["MATRIX_TORCH_CACHE"] = tempfile.mkdtemp(prefix="pytorch-test-onnx.")

I = ["--task", "infer", "--eval", "on", "--steps", "5"]
M = ["--model", "mnist_cnn", "--batch", "4"] + I
R = ["--model", "resnet_tiny", "--batch", "4"] + I
B = ["--model", "bert_tiny", "--batch", "2", "--seq-len", "16"] + I
R18 = ["--model", "resnet18", "--batch", "1", "--threads", "1"] + I

# TensorRT: never installable here (no TensorRT execution provider)
t = run(M + ["--runtime", "tensorrt"])
check(t.rc == 3 and t["status"] == "unsupported", "tensorrt: unsupported, exit 3 (%s)" % t.describe())
check("tensorrt" in (t["reason"] or "") and "onnxruntime-gpu" in (t["reason"] or ""),
      "tensorrt: the reason names the packages (%s)" % t["reason"])
check("throughput" not in t.res, "tensorrt: no throughput")

if have.returncode != 0:
    o = run(M + ["--runtime", "onnxruntime"])
    check(o.rc == 3 and "needs the onnxruntime package" in (o["reason"] or ""),
          "onnxruntime missing: unsupported with the package named (%s: %s)" % (o.describe(), o["reason"]))
    if failures:
        done()
    print("SKIP: %s cannot import onnxruntime and onnx (tests/install-deps.sh installs them): %s"
          % (PYTHON, (have.stderr.strip().splitlines() or ["?"])[-1]))
    sys.exit(77)

cases = {
    "eager_mnist": M,
    "ort_mnist": M + ["--runtime", "onnxruntime"],
    "ort_resnet": R + ["--runtime", "onnxruntime", "--threads", "1"],
    "ort_bert": B + ["--runtime", "onnxruntime"],
    "eager_int8_mnist": M + ["--precision", "int8"],
    "eager_int8_bert": B + ["--precision", "int8", "--quant", "dynamic"],
    "ort_int8_dyn_mnist": M + ["--runtime", "onnxruntime", "--precision", "int8", "--quant", "dynamic"],
    "ort_int8_static_resnet": R + ["--runtime", "onnxruntime", "--precision", "int8", "--quant", "static"],
    "ort_tight": M + ["--runtime", "onnxruntime", "--precision", "int8", "--tolerance", "1e-6"],
    "eager_int8_tight": M + ["--precision", "int8", "--tolerance", "1e-7"],
    "eager_static": M + ["--precision", "int8", "--quant", "static"],
    "ort_train": ["--model", "mnist_cnn", "--runtime", "onnxruntime", "--steps", "5"],
    "ort_bf16": M + ["--runtime", "onnxruntime", "--precision", "bf16"],
    "quant_fp32": M + ["--runtime", "onnxruntime", "--quant", "static", "--channels-last", "on", "--eval", "off"],
    # the study's own model (recipes/inference_accelerators.yaml), at batch 1
    "ort_resnet18": R18 + ["--runtime", "onnxruntime"],
    "ort_int8_dyn_resnet18": R18 + ["--runtime", "onnxruntime", "--precision", "int8", "--quant", "dynamic"],
    "eager_int8_resnet18": R18 + ["--precision", "int8", "--quant", "dynamic"],
    "inductor": M + ["--runtime", "inductor"],
    "inductor_int8": M + ["--runtime", "inductor", "--precision", "int8"],
}
names = list(cases)
runs = dict(zip(names, run_many([cases[n] for n in names])))


def ok(n):
    r = runs[n]
    return check(r.rc == 0 and r["status"] == "ok", "%s: ok (%s %s)" % (n, r.describe(), r["reason"] or ""))


def unsupported(n, why):
    r = runs[n]
    check(r.rc == 3 and r["status"] == "unsupported" and why in (r["reason"] or ""),
          "%s: unsupported with %r (%s: %s)" % (n, why, r.describe(), r["reason"]))


for n in ("ort_mnist", "ort_resnet", "ort_bert", "ort_resnet18"):
    if ok(n):
        r = runs[n]
        check(r["runtime"] == "onnxruntime" and r["ort_provider"] == "CPU" and r["onnxruntime_version"] and r["opset"],
              "%s: runtime, provider, onnxruntime_version, opset recorded" % n)
        check(re.fullmatch(r"CPU:[1-9][0-9]*", r["ort_nodes"] or "") is not None and r["ort_cpu_ops"] is None
              and r["onnx_exporter"] == "torchscript",
              "%s: every node on the CPU provider, from the profile (ort_nodes %s), TorchScript exporter" % (n, r["ort_nodes"]))
        check(float(r["max_rel_err"]) <= 1e-4 and r["top1_agree"] == "1" and r["tolerance"] == "0.0001",
              "%s: agrees with eager fp32 (max_rel_err %s, top1_agree %s)" % (n, r["max_rel_err"], r["top1_agree"]))
        check(float(r["prepare_s"]) > 0 and float(r["export_s"]) > 0 and float(r["throughput"]) > 0,
              "%s: prepare_s %s, export_s %s apart from the timed steps" % (n, r["prepare_s"], r["export_s"]))
check(runs["ort_resnet"]["ort_threads"] == "1", "threads reach the session (ort_threads %s)" % runs["ort_resnet"]["ort_threads"])
check(runs["eager_mnist"]["accuracy_ref"] == "self" and "max_rel_err" not in runs["eager_mnist"].res,
      "eager fp32 is the reference itself")

for n in ("eager_int8_mnist", "eager_int8_bert", "ort_int8_dyn_mnist", "ort_int8_static_resnet",
          "ort_int8_dyn_resnet18", "eager_int8_resnet18"):
    if ok(n):
        r = runs[n]
        err = float(r["max_rel_err"])
        # int8 really ran (not fp32 again: an error above fp32's) and stayed inside the int8 tolerance
        check(1e-5 < err <= 0.15 and r["tolerance"] == "0.15" and r["quant"] in ("dynamic", "static"),
              "%s: int8 error %s within (1e-5, 0.15], top1_agree %s" % (n, r["max_rel_err"], r["top1_agree"]))
for n in ("eager_int8_mnist", "eager_int8_bert"):
    r = runs[n]
    check(int(r["quantized_modules"] or 0) >= 2, "%s: quantized Linear modules %s" % (n, r["quantized_modules"]))
for n in ("ort_int8_dyn_mnist", "ort_int8_static_resnet", "ort_int8_dyn_resnet18"):
    r = runs[n]
    check(int(r["int8_nodes"] or 0) > 0, "%s: int8 nodes in the graph %s" % (n, r["int8_nodes"]))
check(int(runs["ort_int8_static_resnet"]["calib_batches"] or 0) >= 2, "static: calibrated on generated batches")

for n in ("ort_tight", "eager_int8_tight"):
    r = runs[n]
    check(r.rc == 1 and r["status"] == "failed" and "exceeds the int8 tolerance" in (r["reason"] or ""),
          "%s: outside its tolerance is failed (%s: %s)" % (n, r.describe(), r["reason"]))
    check("throughput" not in r.res and r["max_rel_err"] is not None and r["top1_agree"] is not None,
          "%s: no throughput, the error is recorded (max_rel_err %s)" % (n, r["max_rel_err"]))

unsupported("eager_static", "quant static with runtime eager")
# inductor is torch.compile: torch 2 or later, and not with int8 (the
# version is checked first, so torch 1.13 names it for both)
tv, (major, _) = torch_version()
if major < 2:
    unsupported("inductor", "runtime inductor needs torch >= 2.0 (torch.compile), found " + tv)
    unsupported("inductor_int8", "runtime inductor needs torch >= 2.0")
else:
    if ok("inductor"):
        check(runs["inductor"]["runtime"] == "inductor", "inductor: runtime recorded")
    unsupported("inductor_int8", "precision int8 with runtime inductor")
unsupported("ort_train", "runs inference only")
unsupported("ort_bf16", "precision bf16 with runtime onnxruntime")
q = runs["quant_fp32"]
if ok("quant_fp32"):
    ig = q["ignored"] or ""
    check("quant:precision fp32" in ig and "channels_last:" in ig and "eval:" in ig,
          "quant, channels_last, eval listed in ignored for onnxruntime fp32 (%s)" % ig)

# the cache: a second run of the same point finds its export
again = run(cases["ort_mnist"])
check(again["export_cached"] == "1" and runs["ort_mnist"]["export_cached"] == "0",
      "export cached by model, shape and versions (first %s, again %s)" % (runs["ort_mnist"]["export_cached"], again["export_cached"]))
done()
