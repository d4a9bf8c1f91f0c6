#!/bin/sh
# tests/gpu/pytorch_knobs.sh - one point per knob of the PyTorch engine on a CUDA
# machine (H100 / H200, PyTorch 2.x), checking from each result file that the
# knob changed what ran, and printing the figures.
#
#   sh tests/gpu/pytorch_knobs.sh [OUTDIR]
#
# from the source tree root. PYTHON_TORCH names the interpreter (default: python3);
# it must import torch with CUDA (torchvision for ResNets). Result files and a
# table (knobs.tsv) go to OUTDIR (default: $OUT when set, else ./pytorch_knobs.out).
# Exit 0 when every check holds, 1 when one fails, 77 when there is no GPU.
# Two GPUs or more add the DDP / SyncBN points; with one they must be unsupported.
# Takes about 5-10 minutes (compile max-autotune is the long one).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
PYTHON_TORCH=${PYTHON_TORCH:-python3}
outdir=${1:-${OUT:-pytorch_knobs.out}}
mkdir -p "$outdir"
export top_srcdir PYTHON_TORCH
if ! "$PYTHON_TORCH" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "SKIP: $PYTHON_TORCH has no CUDA torch here"
	exit 77
fi
exec "$PYTHON_TORCH" - "$outdir" <<'PY'
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "pytorch"))
from enginetest import ENGINE, PYTHON, check, done, read_result

out = os.path.abspath(sys.argv[1])
import torch
ngpu = torch.cuda.device_count()
major = int(torch.__version__.split(".")[0])
print("torch %s, CUDA %s, cuDNN %s, %d x %s" % (torch.__version__, torch.version.cuda,
      torch.backends.cudnn.version(), ngpu, torch.cuda.get_device_name(0)))
MEASURE = ["--device", "cuda", "--warmup", "0.5s", "--min-time", "1s", "--max-time", "4s", "--rel-ci", "0.01"]
R50 = ["--model", "resnet50", "--batch", "64"]
R18 = ["--model", "resnet18", "--batch", "64"]
BB = ["--model", "bert_base", "--batch", "32", "--seq-len", "128"]

# name, args, {key: expected value}; the base point of each pair comes first
points = [
    ("r50_infer_fp32", R50 + ["--task", "infer"],
     {"tf32_matmul": "0", "tf32_cudnn": "0", "memory_format": "contiguous", "input_memory_format": "contiguous", "cudnn_benchmark_flag": "0",
      "module_training": "1", "grad_enabled": "1", "inference_mode_enabled": "0", "timing": "cuda_events",
      "mem_source": "cuda_max_memory_allocated", "output_dtype": "float32"}),
    ("r50_infer_tf32", R50 + ["--task", "infer", "--precision", "tf32"], {"tf32_matmul": "1", "tf32_cudnn": "1"}),
    ("r50_infer_fp16", R50 + ["--task", "infer", "--precision", "fp16"], {"autocast_dtype": "float16", "output_dtype": "float16"}),
    ("r50_infer_bf16", R50 + ["--task", "infer", "--precision", "bf16"], {"autocast_dtype": "bfloat16", "output_dtype": "bfloat16"}),
    ("r50_infer_fp16_cl", R50 + ["--task", "infer", "--precision", "fp16", "--channels-last", "on"],
     {"memory_format": "channels_last", "input_memory_format": "channels_last"}),
    ("r50_infer_fp16_cl_bench", R50 + ["--task", "infer", "--precision", "fp16", "--channels-last", "on", "--cudnn-benchmark", "on"],
     {"cudnn_benchmark_flag": "1", "memory_format": "channels_last"}),
    ("r50_infer_eval", R50 + ["--task", "infer", "--eval", "on"], {"module_training": "0"}),
    ("r50_infer_eval_im", R50 + ["--task", "infer", "--eval", "on", "--inference-mode", "on"],
     {"module_training": "0", "inference_mode_enabled": "1", "grad_enabled": "0"}),
    ("r50_train_fp32", R50 + ["--task", "train"], {"grad_scaler": "0", "ema_updates": "0"}),
    ("r50_train_fp16", R50 + ["--task", "train", "--precision", "fp16", "--channels-last", "on"],
     {"grad_scaler": "1", "autocast_dtype": "float16", "memory_format": "channels_last"}),
    ("r50_train_bf16_ema", R50 + ["--task", "train", "--precision", "bf16", "--ema", "on"], {"autocast_dtype": "bfloat16"}),
    ("bert_base_infer_fp16", BB + ["--task", "infer", "--precision", "fp16", "--eval", "on", "--inference-mode", "on"],
     {"output_dtype": "float16", "memory_format": "n/a"}),
    ("bert_base_train_fp16", BB + ["--task", "train", "--precision", "fp16"], {"grad_scaler": "1"}),
    ("bert_base_train_bf16_cl", BB + ["--task", "train", "--precision", "bf16", "--channels-last", "on"], {}),
    ("r18_infer_fp16", R18 + ["--task", "infer", "--precision", "fp16", "--eval", "on", "--inference-mode", "on"], {"compiled": "0"}),
]
if major >= 2:
    points += [
        ("r18_infer_fp16_compile", R18 + ["--task", "infer", "--precision", "fp16", "--eval", "on", "--inference-mode", "on", "--compile", "default"],
         {"compiled": "1", "model_class": "OptimizedModule"}),
        ("r18_infer_fp16_ro", R18 + ["--task", "infer", "--precision", "fp16", "--eval", "on", "--inference-mode", "on", "--compile", "reduce-overhead"],
         {"compiled": "1", "compile_mode": "reduce-overhead", "cudagraph_mark_step": "1"}),
        # grad enabled (inference_mode off): without cudagraph_mark_step_begin the
        # CUDA graph trees wait for a backward and never replay (review 2026-11-24)
        ("r18_infer_fp16_ro_grad", R18 + ["--task", "infer", "--precision", "fp16", "--eval", "on", "--compile", "reduce-overhead"],
         {"compiled": "1", "compile_mode": "reduce-overhead", "cudagraph_mark_step": "1", "grad_enabled": "1"}),
        ("r18_infer_fp16_ma", R18 + ["--task", "infer", "--precision", "fp16", "--eval", "on", "--inference-mode", "on", "--compile", "max-autotune"],
         {"compiled": "1", "compile_mode": "max-autotune"}),
        ("r18_train_fp16_compile", R18 + ["--task", "train", "--precision", "fp16", "--compile", "default"], {"compiled": "1"}),
    ]
if ngpu >= 2:
    points += [
        ("r50_train_fp16_gpus2", R50 + ["--task", "train", "--precision", "fp16", "--gpus", "2"],
         {"world_size": "2", "ddp_backend": "nccl", "ddp": "1", "model_class": "DistributedDataParallel", "syncbn_layers": "0"}),
        ("r50_train_fp16_gpus2_syncbn", R50 + ["--task", "train", "--precision", "fp16", "--gpus", "2", "--syncbn", "on"],
         {"world_size": "2", "ddp_backend": "nccl"}),
    ]
unsupported = [("syncbn_gpus1", R50 + ["--syncbn", "on"], "syncbn on needs --gpus > 1")]
if ngpu < 2:
    unsupported.append(("gpus2_on_%d" % ngpu, R50 + ["--gpus", "2"], "only %d CUDA device" % ngpu))
if major < 2:
    unsupported.append(("compile_torch1", R18 + ["--compile", "default"], "torch.compile needs torch >= 2.0"))
oom = ("r50_oom", R50[:2] + ["--task", "infer", "--batch", "1000000"])


def run(name, args):
    path = os.path.join(out, name + ".result")
    log = os.path.join(out, name + ".log")
    if os.path.exists(path):
        os.unlink(path)
    t = time.time()
    with open(log, "w") as f:
        rc = subprocess.run([PYTHON, ENGINE] + MEASURE + args + ["--result", path], stdout=f, stderr=subprocess.STDOUT, timeout=900).returncode
    res = read_result(path) if os.path.exists(path) else {}
    print("  %-30s rc %d %-11s %10s samples/s  step %8s ms [%s, %s]  peak %6.2f GiB  %.0fs" % (
        name, rc, res.get("status"), res.get("throughput"), res.get("step_ms"), res.get("step_ms_lo"), res.get("step_ms_hi"),
        int(res.get("peak_mem_bytes") or 0) / 2**30, time.time() - t))
    return rc, res


rows = []
results = {}
for name, args, want in points:
    rc, res = run(name, args)
    results[name] = res
    rows.append((name, res))
    if not check(rc == 0 and res.get("status") == "ok", "%s: ok (%s)" % (name, res.get("reason"))):
        continue
    for k, v in want.items():
        check(res.get(k) == v, "%s: %s=%s (got %s)" % (name, k, v, res.get(k)))
    check(int(res.get("prepare_peak_mem_bytes") or 0) > 0 and int(res.get("peak_mem_bytes") or 0) > 0,
          "%s: peak_mem_bytes %s after the first warm-up step, prepare_peak_mem_bytes %s before"
          % (name, res.get("peak_mem_bytes"), res.get("prepare_peak_mem_bytes")))
    if "--compile" in args:
        check(int(res.get("dynamo_graphs") or 0) >= 1, "%s: dynamo compiled %s graph(s)" % (name, res.get("dynamo_graphs")))
        check(res.get("timed_compiles") == "0", "%s: nothing compiled during the timed steps (timed_compiles %s, "
              "warmup_compile_steps %s)" % (name, res.get("timed_compiles"), res.get("warmup_compile_steps")))
        mode = args[args.index("--compile") + 1]
        if mode in ("reduce-overhead", "max-autotune"):
            if res.get("cuda_graphs") is None:
                print("note - %s: this torch does not expose the CUDA graph trees; cuda_graphs not checked" % name)
            else:
                check(int(res["cuda_graphs"]) >= 1, "%s: CUDA graphs recorded (%s)" % (name, res["cuda_graphs"]))
    if "--ema" in args:
        check(int(res.get("ema_updates") or 0) == int(res["warmup_steps"]) + int(res["samples"]),
              "%s: one EMA update per step (%s)" % (name, res.get("ema_updates")))
    if "--syncbn" in args:
        check(int(res.get("syncbn_layers") or 0) == 53, "%s: 53 SyncBatchNorm layers in ResNet-50 (%s)" % (name, res.get("syncbn_layers")))
    if name in ("r50_infer_fp32", "r50_infer_tf32") and "fp32_precision_matmul" in res:  # torch >= 2.9
        want = "tf32" if name.endswith("tf32") else "ieee"
        check(res["fp32_precision_matmul"] == want and res.get("fp32_precision_cudnn_conv") == want,
              "%s: fp32_precision_matmul and _cudnn_conv %s (got %s, %s)" % (name, want, res["fp32_precision_matmul"],
                                                                             res.get("fp32_precision_cudnn_conv")))
    if name.startswith("bert"):
        check(res.get("attention") == ("sdpa" if major >= 2 else "math"), "%s: attention %s" % (name, res.get("attention")))
    if name == "bert_base_train_bf16_cl":
        check("channels_last:" in res.get("ignored", ""), "%s: channels_last ignored for BERT (%s)" % (name, res.get("ignored")))

for name, args, reason in unsupported:
    rc, res = run(name, args)
    check(rc == 3 and res.get("status") == "unsupported" and reason in (res.get("reason") or ""),
          "%s: exit 3 unsupported, reason %r" % (name, res.get("reason")))
rc, res = run(*oom)
check(rc == 1 and res.get("status") == "oom", "%s: status=oom (%s: %s)" % (oom[0], res.get("status"), res.get("reason")))


def ratio(a, b):
    try:
        return "%.2f" % (float(results[a]["throughput"]) / float(results[b]["throughput"]))
    except (KeyError, TypeError, ValueError):
        return "n/a"


print("\nspeed-ups (throughput ratio):")
for a, b in (("r50_infer_tf32", "r50_infer_fp32"), ("r50_infer_fp16", "r50_infer_fp32"), ("r50_infer_fp16_cl", "r50_infer_fp16"),
             ("r50_infer_fp16_cl_bench", "r50_infer_fp16_cl"), ("r50_infer_eval_im", "r50_infer_eval"),
             ("r50_train_fp16", "r50_train_fp32"), ("r18_infer_fp16_compile", "r18_infer_fp16"),
             ("r18_infer_fp16_ro", "r18_infer_fp16"), ("r18_infer_fp16_ro_grad", "r18_infer_fp16_ro"),
             ("r18_infer_fp16_ma", "r18_infer_fp16"),
             ("r50_train_fp16_gpus2", "r50_train_fp16")):
    if a in results and b in results:
        print("  %-26s / %-24s %s" % (a, b, ratio(a, b)))

keys = ["status", "throughput", "step_ms", "step_ms_lo", "step_ms_hi", "samples", "startup_s", "first_step_s",
        "peak_mem_bytes", "tflops", "gpu", "torch_version", "cuda_version", "cudnn_version", "ignored"]
with open(os.path.join(out, "knobs.tsv"), "w") as f:
    f.write("point\t" + "\t".join(keys) + "\n")
    for name, res in rows:
        f.write(name + "\t" + "\t".join(str(res.get(k, "")) for k in keys) + "\n")
print("results in %s (knobs.tsv, <point>.result, <point>.log)" % out)
done()
PY
