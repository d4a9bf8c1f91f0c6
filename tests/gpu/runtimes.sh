#!/bin/sh
# tests/gpu/runtimes.sh - the PyTorch engine's runtimes on a CUDA machine
# (issue 20, item 4): eager, inductor (torch.compile), onnxruntime (its CUDA
# execution provider) and tensorrt (ONNX Runtime's TensorRT execution
# provider), at fp32, fp16 and int8, on mnist_cnn and resnet18
# (engine/pytorch/matrix_torch_runtimes.py). Each point is one engine run;
# the table gives its status, max_rel_err and top1_agree against eager fp32
# on the same inputs, throughput and the speed-up over eager fp32.
#
#   sh tests/gpu/runtimes.sh [OPTIONS] [OUTDIR] [-- ENGINE_FLAG...]
#
#   --device cuda|cpu   where the points run (default cuda; cpu checks the
#                       script itself on a machine without a GPU)
#   --models LIST       comma-separated (default mnist_cnn,resnet18)
#   --runtimes LIST     (default eager,inductor,onnxruntime,tensorrt)
#   --precisions LIST   (default fp32,fp16,int8)
#   --batch N           every model's batch (default: mnist_cnn 256,
#                       resnet18 64 on cuda; 4 and 2 on cpu)
#   --plan              print what each point is expected to do here (run,
#                       or unsupported and why) and what was found (torch,
#                       onnxruntime and its providers, TensorRT), run nothing
#   ENGINE_FLAG...      appended to every point's flags (they win): the
#                       timing (--steps 5), --tolerance X
#
# int8 is dynamic quantization for eager (cpu only: unsupported on cuda) and
# static (calibrated QDQ) for onnxruntime and tensorrt. A point is expected to
# run unless a rule says why not: fp16 on cpu, int8 with inductor or with
# eager on cuda, inductor with torch < 2, onnxruntime without the package or
# (on cuda) without its CUDAExecutionProvider ("onnxruntime-gpu"), tensorrt
# without the TensorrtExecutionProvider or on cpu, int8 graphs without onnx;
# an execution provider that is listed but cannot start (its CUDA or TensorRT
# libraries missing) makes its points unsupported too, which is said.
# PYTHON_TORCH names the interpreter (default python3). Result files, logs
# and runtimes.tsv go to OUTDIR (default $OUT when set, else ./runtimes.out).
# Exit 0 when every point did what it should (ran and passed its accuracy
# check, or was unsupported for an expected reason), 1 when one did not (a
# point failing its accuracy check among them), 2 on a usage error, 77 when
# torch has no CUDA device (with --device cuda). About 3-6 minutes on one H100
# (TensorRT's engine builds are most of it; they are cached).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
PYTHON_TORCH=${PYTHON_TORCH:-python3}
export top_srcdir PYTHON_TORCH
exec "$PYTHON_TORCH" - "$@" <<'PY'
import argparse
import ctypes.util
import importlib.util
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "pytorch"))
from enginetest import ENGINE, PYTHON, read_result

MODELS = ("mnist_cnn", "resnet18")
RUNTIMES = ("eager", "inductor", "onnxruntime", "tensorrt")
PRECISIONS = ("fp32", "fp16", "int8")
BATCH = {"cuda": {"mnist_cnn": 256, "resnet18": 64}, "cpu": {"mnist_cnn": 4, "resnet18": 2}}
TIMING = {"cuda": ["--warmup", "0.5s", "--min-time", "1s", "--max-time", "3s", "--rel-ci", "0.02"],
          "cpu": ["--warmup", "1", "--min-time", "0.2s", "--max-time", "1s", "--threads", "1"]}

argv = sys.argv[1:]
engine_flags = []
if "--" in argv:
    engine_flags = argv[argv.index("--") + 1:]
    argv = argv[:argv.index("--")]


def csv_list(allowed):
    def parse(s):
        items = [x for x in s.split(",") if x]
        bad = [x for x in items if x not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError("%r: each of %s expected" % (s, ", ".join(allowed)))
        return items
    return parse


ap = argparse.ArgumentParser(prog="tests/gpu/runtimes.sh", description="the PyTorch engine's runtimes on a GPU")
ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
ap.add_argument("--models", type=csv_list(MODELS), default=list(MODELS))
ap.add_argument("--runtimes", type=csv_list(RUNTIMES), default=list(RUNTIMES))
ap.add_argument("--precisions", type=csv_list(PRECISIONS), default=list(PRECISIONS))
ap.add_argument("--batch", type=int)
ap.add_argument("--plan", action="store_true")
ap.add_argument("outdir", nargs="?", default=os.environ.get("OUT") or "runtimes.out")
args = ap.parse_args(argv)
if args.batch is not None and args.batch < 1:
    ap.error("--batch %d: at least 1" % args.batch)
dev = args.device

# ---- what is here ------------------------------------------------------------
try:
    import torch  # noqa: E402
except ImportError as e:  # make check-gpu without a GPU: a SKIP, not a failure
    print("SKIP: %s cannot import torch (%s)" % (PYTHON, e))
    sys.exit(77)
if dev == "cuda" and not args.plan and not torch.cuda.is_available():
    print("SKIP: %s: torch %s has no CUDA device here" % (PYTHON, torch.__version__))
    sys.exit(77)
torch2 = hasattr(torch, "compile")
have_tv = importlib.util.find_spec("torchvision") is not None
have_onnx = importlib.util.find_spec("onnx") is not None
try:
    import onnxruntime as ort
    providers = list(ort.get_available_providers())
    ort_text = "onnxruntime %s, providers %s" % (ort.__version__, ", ".join(providers))
except Exception as e:  # noqa: BLE001 - any import failure: not installed
    ort, providers = None, []
    ort_text = "onnxruntime cannot be imported (%s: %s)" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
# TensorRT's own library: ONNX Runtime lists its TensorRT provider whenever it
# was built with it, and loads libnvinfer only when a session starts
trt_lib = ctypes.util.find_library("nvinfer") or (
    importlib.util.find_spec("tensorrt") and "the tensorrt package")

print("torch %s (CUDA %s)%s" % (torch.__version__, torch.version.cuda or "none",
      ", %s" % torch.cuda.get_device_name(0) if torch.cuda.is_available() else ", no CUDA device"))
print(ort_text)
if dev == "cuda":
    if ort is not None and "CUDAExecutionProvider" not in providers:
        print("onnxruntime: no CUDAExecutionProvider (install onnxruntime-gpu): its cuda points must be unsupported")
    if "TensorrtExecutionProvider" not in providers:
        print("tensorrt: no TensorrtExecutionProvider in onnxruntime (onnxruntime-gpu built with TensorRT, and "
              "TensorRT): its points must be unsupported")
    elif not trt_lib:
        print("tensorrt: the TensorrtExecutionProvider is listed, but no TensorRT library (libnvinfer) was found: "
              "its points may be unsupported (the provider cannot start)")
    else:
        print("tensorrt: TensorrtExecutionProvider, TensorRT from %s" % trt_lib)


def expectation(model, runtime, precision):
    """(reasons, may_fail_to_start): the reasons the engine may give for
    calling the point unsupported here (empty: it must run), and the
    execution provider that is listed but may not start (or None)."""
    why = []
    graph = runtime in ("onnxruntime", "tensorrt")
    if model.startswith("resnet") and not have_tv:
        why.append("needs torchvision")
    if precision == "fp16" and dev == "cpu":
        why.append("precision fp16 on cpu")
    if runtime == "inductor" and not torch2:
        why.append("runtime inductor needs torch >= 2.0")
    if runtime == "inductor" and precision == "int8":
        why.append("precision int8 with runtime inductor")
    if runtime == "eager" and precision == "int8" and dev == "cuda":
        why.append("precision int8 with runtime eager runs on cpu")
    if runtime == "onnxruntime" and ort is None:
        why.append("needs the onnxruntime package")
    if runtime == "onnxruntime" and ort is not None and dev == "cuda" and "CUDAExecutionProvider" not in providers:
        why.append("needs onnxruntime-gpu (CUDAExecutionProvider)")
    if runtime == "tensorrt" and "TensorrtExecutionProvider" not in providers:
        why.append("needs TensorRT through onnxruntime's TensorrtExecutionProvider")
    if runtime == "tensorrt" and dev == "cpu":
        why.append("runtime tensorrt needs cuda")
    if graph and precision == "int8" and not have_onnx:
        why.append("needs the onnx package")
    shaky = None
    if runtime == "tensorrt" and not trt_lib:
        shaky = "TensorrtExecutionProvider"
    elif runtime == "onnxruntime" and dev == "cuda":
        shaky = "CUDAExecutionProvider"
    return why, shaky


points = []
for model in args.models:
    for runtime in args.runtimes:
        for precision in args.precisions:
            why, shaky = expectation(model, runtime, precision)
            flags = ["--model", model, "--task", "infer", "--eval", "on", "--inference-mode", "on",
                     "--device", dev, "--runtime", runtime, "--precision", precision,
                     "--batch", str(args.batch or BATCH[dev][model])] + TIMING[dev]
            if precision == "int8":
                flags += ["--quant", "dynamic" if runtime == "eager" else "static"]
            points.append((model, runtime, precision, why, shaky, flags + engine_flags))

if args.plan:
    for model, runtime, precision, why, shaky, flags in points:
        print("%-10s %-12s %-5s %s" % (model, runtime, precision,
              ("unsupported: " + "; ".join(why)) if why else
              "runs" + (" (unless the %s cannot start)" % shaky if shaky and shaky.startswith("Tensorrt") else "")))
    sys.exit(0)

out = os.path.abspath(args.outdir)
os.makedirs(out, exist_ok=True)
failures = []
rows = []
eager = {}
print("%-10s %-12s %-5s %-12s %11s %10s %12s %8s  %s" % (
    "model", "runtime", "prec", "status", "max_rel_err", "top1_agree", "throughput", "x eager", "check"))
for model, runtime, precision, why, shaky, flags in points:
    name = "%s_%s_%s" % (model, runtime, precision)
    path = os.path.join(out, name + ".result")
    log = os.path.join(out, name + ".log")
    if os.path.exists(path):
        os.unlink(path)
    t0 = time.time()
    with open(log, "w") as f:
        try:
            rc = subprocess.run([PYTHON, ENGINE] + flags + ["--result", path], stdout=f, stderr=subprocess.STDOUT,
                                timeout=1800).returncode
        except subprocess.TimeoutExpired:
            rc = -1
    res = read_result(path) if os.path.exists(path) else {}
    status, reason = res.get("status", "none"), res.get("reason", "")
    if status == "ok" and runtime == "eager" and precision == "fp32":
        eager[model] = float(res.get("throughput") or 0)
    # what it should have done
    if status == "ok":
        if why:
            verdict = "FAIL: ran, but should be unsupported here (%s)" % "; ".join(why)
        elif not (runtime == "eager" and precision == "fp32") and res.get("max_rel_err") is None:
            verdict = "FAIL: no accuracy check recorded"
        elif res.get("max_rel_err") is not None and not float(res["max_rel_err"]) <= float(res["tolerance"]):
            verdict = "FAIL: max_rel_err %s above the tolerance %s" % (res["max_rel_err"], res["tolerance"])
        elif runtime in ("onnxruntime", "tensorrt") and dev == "cuda" and (
                "peak_mem_bytes" in res or not int(res.get("ort_device_mem_bytes") or 0) > 0):
            # ONNX Runtime's memory is outside torch's allocator (review 2026-11-24)
            verdict = "FAIL: peak_mem_bytes %s / ort_device_mem_bytes %s: torch's peak written for an ONNX Runtime " \
                      "point, or the session's device memory not measured" % (res.get("peak_mem_bytes"),
                                                                              res.get("ort_device_mem_bytes"))
        elif runtime in ("onnxruntime", "tensorrt") and res.get("onnx_exporter") != "torchscript":
            verdict = "FAIL: onnx_exporter %s (the TorchScript exporter expected)" % res.get("onnx_exporter")
        else:
            verdict = "ok"
    elif status == "unsupported" and rc == 3:
        if why and any(w in reason for w in why):
            verdict = "ok (expected)"
        elif shaky and "could not start the %s" % shaky in reason:
            verdict = "ok (%s listed but cannot start)" % shaky
        elif dev == "cuda" and "on the CPU execution provider" in reason:
            # the engine refused a part-CPU point (ort_cpu_ops in the result): right, and worth reading
            verdict = "ok (compute left to the CPU provider: not measured)"
        else:
            verdict = "FAIL: unsupported (%s), but %s" % (
                reason, ("the reason should be one of: %s" % "; ".join(why)) if why else "it should run here")
    else:
        verdict = "FAIL: %s (exit %d): %s" % (status, rc, reason or "no result file; see %s" % log)
    thr = res.get("throughput")
    speed = ("%.2f" % (float(thr) / eager[model])) if thr and eager.get(model) else "-"
    print("%-10s %-12s %-5s %-12s %11s %10s %12s %8s  %s" % (
        model, runtime, precision, status, res.get("max_rel_err", "-"), res.get("top1_agree", "-"),
        thr or "-", speed, verdict))
    if status == "unsupported":
        print("    reason: %s" % reason)
    sys.stdout.flush()
    if verdict.startswith("FAIL"):
        failures.append(name)
    rows.append([model, runtime, precision, status, res.get("max_rel_err", ""), res.get("top1_agree", ""),
                 res.get("tolerance", ""), thr or "", speed if speed != "-" else "", res.get("ort_providers", ""),
                 "%.0f" % (time.time() - t0), verdict, reason])

with open(os.path.join(out, "runtimes.tsv"), "w") as f:
    f.write("model\truntime\tprecision\tstatus\tmax_rel_err\ttop1_agree\ttolerance\tthroughput\tx_eager\t"
            "ort_providers\twall_s\tcheck\treason\n")
    for r in rows:
        f.write("\t".join(str(c).replace("\t", " ") for c in r) + "\n")
for r in rows:
    if r[11].startswith("FAIL"):
        print("FAIL: %s %s %s: %s" % (r[0], r[1], r[2], r[11][len("FAIL: "):]))
n_ok = sum(1 for r in rows if r[3] == "ok")
n_un = sum(1 for r in rows if r[3] == "unsupported")
print("%d points: %d ran, %d unsupported, %d as they should not (%s); table in %s" % (
    len(rows), n_ok, n_un, len(failures), ", ".join(failures) or "none", os.path.join(out, "runtimes.tsv")))
sys.exit(1 if failures else 0)
PY
