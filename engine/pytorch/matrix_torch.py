#!/usr/bin/env python3
"""matrix_torch.py - the PyTorch engine of `matrix`.

Speaks the engine contract of DESIGN.md: one point per process, the point's
settings as flags, the result as key=value lines in the file named by --result
(written atomically), exit 0 (status=ok), 3 (status=unsupported), 2 (bad flag),
1 (status=failed or status=oom, the exception's first line as reason).

Run `matrix_torch.py --help` for the flags and `--list-models` for the models.
"""

import time

_T_LOAD = time.perf_counter()  # as early as possible: see process_start_perf()

import argparse
import contextlib
import json
import math
import os
import re
import resource
import socket
import sys
import tempfile
import traceback

ENGINE = "pytorch"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNSUPPORTED = 0, 1, 2, 3

MODEL_NAMES = ("mnist_cnn", "resnet18", "resnet50", "resnet_tiny", "bert_tiny", "bert_base", "bert_large")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "int8")
RUNTIMES = ("eager", "inductor", "onnxruntime", "tensorrt")
QUANTS = ("dynamic", "static")
COMPILE_MODES = ("none", "default", "reduce-overhead", "max-autotune")
SWITCHES = ("off", "on")

# Order of the keys in the result file; any other key follows in insertion order.
KEY_ORDER = (
    "status", "reason", "throughput", "unit", "step_ms", "step_ms_lo", "step_ms_hi", "samples",
    "startup_s", "peak_mem_bytes", "mem_source", "flops_per_step", "tflops", "device", "engine",
    "ignored", "model", "task", "batch", "seq_len", "runtime", "precision", "quant", "max_rel_err", "top1_agree",
    "tolerance", "prepare_s", "threads", "torch_version", "cuda_version",
    "cudnn_version", "gpu",
)


def process_start_perf():
    """The process's start time on the time.perf_counter() clock (CLOCK_MONOTONIC
    on Linux, shared by all processes): /proc/self/stat's start time against
    /proc/uptime (10 ms resolution), else the time this module was loaded."""
    try:
        with open("/proc/self/stat") as f:
            stat = f.read()
        start_ticks = int(stat[stat.rindex(")") + 2:].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        now = time.perf_counter()
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
        if 0 <= age < 3600:
            return now - age
    except (OSError, ValueError, IndexError):
        pass
    return _T_LOAD


# ---------------------------------------------------------------- flags ------

class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse with exit status 2 and a message that names the bad flag."""

    def error(self, message):
        m = re.match(r"unrecognized arguments: (.*)", message)
        if m:
            words = m.group(1).split()
            flags = [w for w in words if w.startswith("-")]
            if flags:
                message = "unknown flag%s %s (see --help)" % ("s" if len(flags) > 1 else "", " ".join(flags))
            else:
                message = "unexpected argument%s %s (flags are --name value; see --help)" % ("s" if len(words) > 1 else "", " ".join(words))
        raise UsageError(message)


def parse_duration(text, allow_iterations):
    """'0.2s', '200ms', '1m' -> ('time', seconds); a bare integer -> ('iters', n)
    when allow_iterations, else seconds."""
    t = text.strip()
    m = re.fullmatch(r"((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(ms|s|m)?", t)
    if not m:
        raise argparse.ArgumentTypeError(
            "invalid duration %r (expected e.g. 0.5s, 200ms, 1m%s)" % (text, " or an iteration count" if allow_iterations else ""))
    value, unit = float(m.group(1)), m.group(2)
    if unit is None:
        if allow_iterations:
            if not m.group(1).isdigit():
                raise argparse.ArgumentTypeError("invalid warm-up %r: a bare number is an iteration count (integer); give a unit for a time" % text)
            return ("iters", int(m.group(1)))
        return ("time", value)
    return ("time", value * {"ms": 1e-3, "s": 1.0, "m": 60.0}[unit])


def warmup_type(text):
    return parse_duration(text, True)


def seconds_type(text):
    return parse_duration(text, False)[1]


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("invalid value %r (expected a positive integer)" % text)
    if v < 1:
        raise argparse.ArgumentTypeError("invalid value %r (expected a positive integer)" % text)
    return v


def nonneg_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("invalid value %r (expected an integer >= 0)" % text)
    if v < 0:
        raise argparse.ArgumentTypeError("invalid value %r (expected an integer >= 0)" % text)
    return v


def positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("invalid value %r (expected a positive number)" % text)
    if not v > 0 or math.isinf(v):
        raise argparse.ArgumentTypeError("invalid value %r (expected a positive number)" % text)
    return v


def make_parser():
    p = Parser(
        prog="matrix_torch.py",
        description="The PyTorch engine of matrix: measure one point (model, task, settings) and "
                    "write the result as key=value lines. Exit 0 ok, 1 failed/oom, 2 bad flag, 3 unsupported.",
        allow_abbrev=False,
    )
    a = p.add_argument
    a("--model", default="resnet50", choices=MODEL_NAMES, metavar="M",
      help="model: %s (default resnet50; --list-models describes them)" % ", ".join(MODEL_NAMES))
    a("--task", default="train", choices=("train", "infer"),
      help="train: forward + loss + backward + optimizer step; infer: forward only (default train)")
    a("--batch", default=32, type=positive_int, metavar="N", help="samples per step, per GPU (default 32)")
    a("--seq-len", default=None, type=positive_int, metavar="N",
      help="BERT sequence length, at most 512 (default 128; ignored by the CNNs)")
    a("--precision", default="fp32", choices=PRECISIONS,
      help="fp32 (TF32 off), tf32 (TF32 matmul and cuDNN), fp16 / bf16 (autocast, fp32 weights; "
           "fp16 training with GradScaler), int8 (inference: --quant) (default fp32)")
    a("--runtime", default="eager", choices=RUNTIMES,
      help="eager (PyTorch), inductor (torch.compile; --compile picks the mode), onnxruntime (ONNX export, "
           "CPU or CUDA execution provider), tensorrt (ONNX Runtime's TensorRT execution provider) (default eager)")
    a("--quant", default=None, choices=QUANTS,
      help="int8: dynamic (weights int8, activations quantized at run time) or static (QDQ, calibrated on "
           "generated inputs; onnxruntime, tensorrt) (default dynamic)")
    a("--tolerance", default=None, type=positive_float, metavar="X",
      help="largest max_rel_err against eager fp32 before the point fails (default: the precision's, see README)")
    a("--channels-last", default="off", choices=SWITCHES, help="NHWC model and input (CNNs) (default off)")
    a("--cudnn-benchmark", default="off", choices=SWITCHES, help="torch.backends.cudnn.benchmark (default off)")
    a("--eval", default="off", choices=SWITCHES, help="model.eval() instead of model.train() (default off)")
    a("--inference-mode", default="off", choices=SWITCHES,
      help="infer: on = torch.inference_mode(), off = plain grad-enabled forward (default off)")
    a("--compile", default="none", choices=COMPILE_MODES,
      help="torch.compile mode; none = eager (default none; needs torch >= 2.0)")
    a("--syncbn", default="off", choices=SWITCHES, help="SyncBatchNorm under DDP (needs --gpus > 1, cuda) (default off)")
    a("--ema", default="off", choices=SWITCHES, help="EMA of the weights after each train step (default off)")
    a("--gpus", default=1, type=positive_int, metavar="N",
      help="data-parallel processes (DDP, one per GPU, NCCL; on cpu: processes with gloo) (default 1)")
    a("--threads", default=0, type=nonneg_int, metavar="N",
      help="torch.set_num_threads(N), per process; 0 = torch's default (default 0)")
    a("--device", default="auto", choices=("auto", "cpu", "cuda"), help="auto = cuda if available, else cpu (default auto)")
    a("--warmup", default=("time", 0.2), type=warmup_type, metavar="D",
      help="warm-up: a time (0.2s, 200ms, 1m) or a bare integer = iterations (default 0.2s)")
    a("--min-time", default=0.5, type=seconds_type, metavar="D", help="least time of timed steps (default 0.5s)")
    a("--max-time", default=5.0, type=seconds_type, metavar="D", help="most time of timed steps (default 5s)")
    a("--rel-ci", default=0.02, type=positive_float, metavar="X",
      help="stop once the 95%% CI of the median step time is within +-X of it, relative (default 0.02)")
    a("--steps", default=None, type=positive_int, metavar="N",
      help="exactly N timed steps instead of the stopping rule")
    a("--seed", default=1, type=nonneg_int, metavar="N", help="random seed for weights and inputs (default 1)")
    a("--data", default="synthetic", metavar="synthetic|DIR",
      help="inputs: synthetic (generated once, the default) or DIR with MNIST's train-images-idx3-ubyte and "
           "train-labels-idx1-ubyte (or .gz): read at set-up; shuffled, converted, normalised, batched and copied "
           "to the device inside every timed step (mnist_cnn)")
    a("--profile", default=None, metavar="FILE",
      help="after the timed steps (not perturbed), 20 more steps under torch.profiler: FILE gets "
           "op,kind,calls,total_ms,mean_ms,pct_step,mem_bytes per op (the native engine's columns)")
    a("--result", default=None, metavar="FILE", help="result file (key=value lines); default: stdout")
    a("--list-models", action="store_true", help="list the models and exit")
    return p


def parse_args(argv):
    p = make_parser()
    args = p.parse_args(argv)
    args.seq_len_given = args.seq_len is not None
    args.quant_given = args.quant is not None
    if args.quant is None:
        args.quant = "dynamic"
    if args.seq_len is None:
        args.seq_len = 128
    if args.seq_len > 512:
        raise UsageError("argument --seq-len: invalid value %d (at most 512, the BERT position table)" % args.seq_len)
    if args.max_time < args.min_time:
        raise UsageError("argument --max-time: %gs is less than --min-time %gs" % (args.max_time, args.min_time))
    return args


def result_path_from_argv(argv):
    for i, a in enumerate(argv):
        if a == "--result" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--result="):
            return a[len("--result="):]
    return None


# --------------------------------------------------------------- result ------

def clean(value):
    s = str(value).replace("\r", " ").replace("\n", " ").strip()
    return s


def write_result(path, res):
    keys = [k for k in KEY_ORDER if k in res] + [k for k in res if k not in KEY_ORDER]
    text = "".join("%s=%s\n" % (k, clean(res[k])) for k in keys if res[k] is not None)
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def first_line(exc):
    msg = str(exc).strip()
    line = msg.splitlines()[0].strip() if msg else ""
    name = type(exc).__name__
    return "%s: %s" % (name, line) if line else name


def is_oom(exc):
    import torch
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(exc, oom_type):
        return True
    if isinstance(exc, MemoryError):
        return True
    msg = str(exc)
    return isinstance(exc, RuntimeError) and ("out of memory" in msg or "can't allocate memory" in msg)


# ------------------------------------------------------------ statistics -----

def _binom_cdf_half(k, n):
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n > 1000:  # normal approximation with continuity correction
        return 0.5 * math.erfc(-((k + 0.5) - n / 2.0) / math.sqrt(n / 4.0) / math.sqrt(2.0))
    lg = math.lgamma
    s = 0.0
    for i in range(k + 1):
        s += math.exp(lg(n + 1) - lg(i + 1) - lg(n - i + 1) - n * math.log(2.0))
    return s


def median_ci(samples, level=0.95):
    """Median of samples and a distribution-free confidence interval for it from
    order statistics: [x_(l), x_(n+1-l)] with the largest l such that
    P(Binomial(n, 1/2) <= l-1) <= (1-level)/2; with too few samples for that
    (n < 6 at 95%), the interval is [min, max]. Returns (median, lo, hi)."""
    xs = sorted(samples)
    n = len(xs)
    if n == 0:
        raise ValueError("no samples")
    med = xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])
    alpha = (1.0 - level) / 2.0
    # the largest l with cdf(l-1) <= alpha; start from the normal guess, then fix up
    l = max(1, int(math.floor(n / 2.0 - 1.96 * math.sqrt(n) / 2.0)))
    while l > 1 and _binom_cdf_half(l - 1, n) > alpha:
        l -= 1
    while l + 1 <= (n + 1) // 2 and _binom_cdf_half(l, n) <= alpha:
        l += 1
    if _binom_cdf_half(l - 1, n) > alpha:
        l = 1
    return med, xs[l - 1], xs[n - l]


# The fewest samples with a 95% interval of the median: [min, max] of n holds
# it with 1 - 2^(1-n), 96.9% for 6, 93.75% for 5 (the native engine's
# MEASURE_CI_MIN_SAMPLES); fewer never meet the CI, however narrow.
CI_MIN_SAMPLES = 6


def ci_ok(samples, rel_ci):
    if len(samples) < CI_MIN_SAMPLES:
        return False
    med, lo, hi = median_ci(samples)
    return med > 0 and (hi - lo) / 2.0 <= rel_ci * med


# ------------------------------------------------------------- the point -----

def environment(torch, device):
    env = {
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda or "none",
        "cudnn_version": "none",
        "python_version": "%d.%d.%d" % sys.version_info[:3],
    }
    try:
        if torch.backends.cudnn.is_available():
            env["cudnn_version"] = torch.backends.cudnn.version()
    except Exception:
        pass
    if device == "cuda" and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
        cap = torch.cuda.get_device_capability(0)
        env["gpu_capability"] = "%d.%d" % cap
        env["gpu_count"] = torch.cuda.device_count()
    return env


class Unsupported(Exception):
    pass


def torch_major_minor(torch):
    m = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def plan(args, torch):
    """Check the point against this machine and torch: resolve the device, raise
    Unsupported for a combination that cannot run, and list the settings that do
    not apply (ignored). Returns (device, ignored list)."""
    import matrix_torch_models as models
    cuda_ok = torch.cuda.is_available()
    device = args.device
    if device == "auto":
        device = "cuda" if cuda_ok else "cpu"
    args.device_resolved = device
    if device == "cuda" and not cuda_ok:
        raise Unsupported("device cuda: no CUDA device is available to torch %s (built with CUDA %s)"
                          % (torch.__version__, torch.version.cuda or "none"))
    cnn = models.is_cnn(args.model)
    ignored = []

    if args.model in ("resnet18", "resnet50"):
        import importlib.util
        if importlib.util.find_spec("torchvision") is None:
            raise Unsupported("model %s needs torchvision, which %s cannot import" % (args.model, sys.executable))
    plan_runtime(args, torch, device, cnn, ignored)
    if args.compile != "none" and not hasattr(torch, "compile"):
        raise Unsupported("torch.compile needs torch >= 2.0, found %s" % torch.__version__)
    if args.precision == "fp16" and device == "cpu":
        raise Unsupported("precision fp16 on cpu: the engine runs fp16 mixed precision on cuda only "
                          "(no fast fp16 arithmetic on this cpu path; bf16 runs on cpu)")
    if args.precision == "bf16" and device == "cuda" and not torch.cuda.is_bf16_supported():
        raise Unsupported("precision bf16: %s does not support bfloat16" % torch.cuda.get_device_name(0))
    if args.data != "synthetic" and args.model != "mnist_cnn":
        raise Unsupported("--data gives grey images with class labels (MNIST); model %s takes %s"
                          % (args.model, "token ids and token types" if args.model.startswith("bert") else "3-channel images"))
    if args.data != "synthetic":
        import matrix_torch_data as tdata
        n = tdata.load(args.data).n
        if n < args.batch * args.gpus:
            raise Unsupported("'%s' holds %d images, less than one batch of %d%s" % (
                tdata.load(args.data).images_path, n, args.batch * args.gpus, " (all ranks)" if args.gpus > 1 else ""))
    if args.syncbn == "on" and args.gpus < 2:
        raise Unsupported("syncbn on needs --gpus > 1 (SyncBatchNorm across data-parallel processes), got gpus %d" % args.gpus)
    if args.syncbn == "on" and device == "cpu":
        raise Unsupported("syncbn on needs cuda: SyncBatchNorm does not run on cpu")
    if device == "cuda" and args.gpus > torch.cuda.device_count():
        raise Unsupported("gpus %d: only %d CUDA device(s) visible" % (args.gpus, torch.cuda.device_count()))
    if args.gpus > 1:
        import torch.distributed as dist
        if not dist.is_available():
            raise Unsupported("gpus %d: this torch has no torch.distributed" % args.gpus)
        if device == "cuda" and not dist.is_nccl_available():
            raise Unsupported("gpus %d: this torch has no NCCL" % args.gpus)
        if device == "cpu" and not dist.is_gloo_available():
            raise Unsupported("gpus %d on cpu: this torch has no gloo" % args.gpus)

    if args.precision == "tf32":
        if device == "cpu":
            ignored.append("precision:tf32 on cpu")
        elif torch.cuda.get_device_capability(0) < (8, 0):
            ignored.append("precision:tf32 before Ampere")
    if args.channels_last == "on" and not cnn:
        ignored.append("channels_last:no convolutions")
    if args.cudnn_benchmark == "on":
        if device == "cpu":
            ignored.append("cudnn_benchmark:cpu")
        elif not cnn:
            ignored.append("cudnn_benchmark:no convolutions")
    if args.seq_len_given and cnn:
        ignored.append("seq_len:not a sequence model")
    if args.task == "train" and args.inference_mode == "on":
        ignored.append("inference_mode:train")
    if args.task == "infer" and args.ema == "on":
        ignored.append("ema:infer")
    if args.syncbn == "on" and not cnn:
        ignored.append("syncbn:no BatchNorm")
    elif args.syncbn == "on" and (args.eval == "on"):
        ignored.append("syncbn:eval uses running statistics")
    if args.compile == "reduce-overhead" and device == "cpu":
        ignored.append("compile:CUDA graphs on cpu")
    if args.compile == "max-autotune" and device == "cpu":
        ignored.append("compile:CUDA graphs on cpu")
    return device, ignored


def plan_runtime(args, torch, device, cnn, ignored):
    """The runtime, int8 and quant part of plan(): Unsupported for what cannot
    run here (with the package it needs), ignored for what does not apply."""
    import matrix_torch_runtimes as rt
    runtime = args.runtime
    graph = runtime in ("onnxruntime", "tensorrt")  # an exported ONNX graph runs
    if args.quant_given and args.precision != "int8":
        ignored.append("quant:precision %s" % args.precision)
    if runtime != "eager" and args.gpus > 1:
        raise Unsupported("runtime %s runs one process (gpus 1), got gpus %d" % (runtime, args.gpus))
    if args.precision == "int8" and args.task == "train":
        raise Unsupported("precision int8 is for inference (task infer): no int8 training")
    if graph and args.task == "train":
        raise Unsupported("runtime %s runs inference only (task infer)" % runtime)
    if runtime == "inductor":
        if not hasattr(torch, "compile"):
            raise Unsupported("runtime inductor needs torch >= 2.0 (torch.compile), found %s" % torch.__version__)
        if args.precision == "int8":
            raise Unsupported("precision int8 with runtime inductor: not implemented (int8 runs with runtime eager "
                              "(dynamic), onnxruntime or tensorrt)")
        if args.compile == "none":
            args.compile = "default"  # inductor is torch.compile; --compile picks its mode
    if graph:
        ort, err, providers = rt.ort_info()
        if runtime == "tensorrt":
            if "TensorrtExecutionProvider" not in providers:
                have = ("onnxruntime %s has %s" % (ort.__version__, ", ".join(providers))) if ort else \
                    "onnxruntime cannot be imported (%s)" % err
                raise Unsupported("runtime tensorrt needs TensorRT through onnxruntime's TensorrtExecutionProvider "
                                  "(packages onnxruntime-gpu and tensorrt; Torch-TensorRT is not used): %s" % have)
            if device != "cuda":
                raise Unsupported("runtime tensorrt needs cuda (TensorRT runs on NVIDIA GPUs)")
        elif ort is None:
            raise Unsupported("runtime onnxruntime needs the onnxruntime package (pip install onnxruntime, or "
                              "onnxruntime-gpu for cuda), which %s cannot import: %s" % (sys.executable, err))
        elif device == "cuda" and "CUDAExecutionProvider" not in providers:
            raise Unsupported("runtime onnxruntime on cuda needs onnxruntime-gpu (CUDAExecutionProvider); "
                              "onnxruntime %s here has %s" % (ort.__version__, ", ".join(providers)))
        if args.precision == "bf16":
            raise Unsupported("precision bf16 with runtime %s: not implemented (fp32, fp16 on cuda, int8)" % runtime)
        if args.precision == "tf32" and device == "cuda":
            raise Unsupported("precision tf32 with runtime %s: the execution provider's TF32 switch is not wired "
                              "(fp32, fp16, int8 are)" % runtime)
        if args.precision == "int8":
            if not rt._find("onnx"):
                raise Unsupported("precision int8 with runtime %s needs the onnx package (onnxruntime.quantization "
                                  "imports it), which %s cannot import" % (runtime, sys.executable))
            if runtime == "tensorrt" and args.quant == "dynamic":
                raise Unsupported("quant dynamic with runtime tensorrt: TensorRT has no dynamic quantization "
                                  "(quant static runs a calibrated QDQ graph)")
        why = "runtime %s" % runtime
        if args.compile != "none":
            ignored.append("compile:%s" % why)
            args.compile = "none"
        if args.channels_last == "on" and cnn:
            ignored.append("channels_last:%s chooses its layouts" % why)
        if args.cudnn_benchmark == "on" and device == "cuda":
            ignored.append("cudnn_benchmark:%s" % why)
        if args.inference_mode == "on":
            ignored.append("inference_mode:%s (no autograd)" % why)
        if args.eval == "off":
            ignored.append("eval:%s runs the exported eval graph" % why)
    elif args.precision == "int8":  # eager
        if args.quant == "static":
            raise Unsupported("quant static with runtime eager: not implemented (static int8, calibrated QDQ, "
                              "runs with runtime onnxruntime or tensorrt)")
        if device == "cuda":
            raise Unsupported("precision int8 with runtime eager runs on cpu: PyTorch's dynamically quantized "
                              "Linear has cpu kernels only (fbgemm, qnnpack)")
        engines = [e for e in torch.backends.quantized.supported_engines if e != "none"]
        if not engines:
            raise Unsupported("precision int8: this torch has no quantized engine (fbgemm, qnnpack)")
        if rt.eager_quantizer() is None:
            raise Unsupported("precision int8 with runtime eager needs torch.ao.quantization.quantize_dynamic, which "
                              "torch %s does not have (deprecated since 2.9 for torchao; runtime onnxruntime "
                              "quantizes without it)" % torch.__version__)


class Ema:
    """Exponential moving average of a model's parameters (and a copy of its
    buffers), updated after every optimizer step with one multi-tensor lerp:
    ema = decay * ema + (1 - decay) * param."""

    def __init__(self, torch, module, decay=0.999):
        self.torch = torch
        self.decay = decay
        self.src_params = [p for p in module.parameters()]
        self.src_buffers = [b for b in module.buffers()]
        with torch.no_grad():
            self.params = [p.detach().clone() for p in self.src_params]
            self.buffers = [b.detach().clone() for b in self.src_buffers]
        self.updates = 0

    def update(self):
        torch = self.torch
        with torch.no_grad():
            if hasattr(torch, "_foreach_lerp_"):
                torch._foreach_lerp_(self.params, self.src_params, 1.0 - self.decay)
            else:
                torch._foreach_mul_(self.params, self.decay)
                torch._foreach_add_(self.params, self.src_params, alpha=1.0 - self.decay)
            for d, s in zip(self.buffers, self.src_buffers):
                d.copy_(s)
        self.updates += 1


class Comm:
    """Agreement between data-parallel processes: rank 0 decides, everyone follows."""

    def __init__(self, torch, rank, world, device):
        self.torch, self.rank, self.world, self.device = torch, rank, world, device

    def agree(self, flag):
        if self.world == 1:
            return flag
        import torch.distributed as dist
        t = self.torch.tensor([1 if flag else 0], dtype=self.torch.int32, device=self.device)
        dist.broadcast(t, 0)
        return bool(t.item())

    def agree_int(self, value):
        if self.world == 1:
            return value
        import torch.distributed as dist
        t = self.torch.tensor([int(value)], dtype=self.torch.int64, device=self.device)
        dist.broadcast(t, 0)
        return int(t.item())


# NVML throttle-reason bits that mean the GPU ran slower than it could
# (idle, application clocks and sync boost are not throttling)
_THROTTLE = ((0x4, "sw_power_cap"), (0x8, "hw_slowdown"), (0x20, "sw_thermal"),
             (0x40, "hw_thermal"), (0x80, "hw_power_brake"))


def gpu_state(torch, index):
    """SM clock (MHz), temperature (degrees C) and throttle reasons of CUDA
    device index through NVML (libnvidia-ml, loaded with ctypes), or {} when
    NVML cannot be read."""
    import ctypes
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() != 0:
            return {}
    except (OSError, AttributeError):
        return {}
    out = {}
    try:
        props = torch.cuda.get_device_properties(index)
        bus = getattr(props, "pci_bus_id", None)
        dev = ctypes.c_void_p()
        if bus is not None:
            busid = "%08x:%02x:%02x.0" % (getattr(props, "pci_domain_id", 0), bus, getattr(props, "pci_device_id", 0))
            rc = nvml.nvmlDeviceGetHandleByPciBusId_v2(busid.encode(), ctypes.byref(dev))
        else:
            rc = nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(dev))
        if rc != 0:
            return {}
        v = ctypes.c_uint()
        if nvml.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(v)) == 0:  # NVML_CLOCK_SM
            out["sm_mhz"] = v.value
        if nvml.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(v)) == 0:  # NVML_TEMPERATURE_GPU
            out["temp_c"] = v.value
        r = ctypes.c_ulonglong()
        if nvml.nvmlDeviceGetCurrentClocksThrottleReasons(dev, ctypes.byref(r)) == 0:
            out["throttle"] = "+".join(n for bit, n in _THROTTLE if r.value & bit) or "none"
    finally:
        nvml.nvmlShutdown()
    return out


def memory_format_of(torch, t):
    """contiguous (NCHW strides), channels_last (NHWC strides), or strided. A
    tensor that is both (one channel, as MNIST's input) counts as contiguous:
    its memory is the same either way."""
    if t.is_contiguous():
        return "contiguous"
    if t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last):
        return "channels_last"
    return "strided"


def cudagraph_step_marker(torch, compile_mode, device):
    """The function that tells torch.compile's CUDA graph trees (compile
    reduce-overhead and max-autotune on cuda) that a new step begins, or None
    where no CUDA graphs are recorded. Without it the trees guess the step's
    start from the backward pass having run: an inference forward with grad
    enabled (inference_mode off) leaves a backward pending forever, the trees
    never leave their warm-up, and every step runs the compiled code without
    replaying a graph (PyTorch warns "Unable to hit fast path of CUDAGraphs
    because of pending, uninvoked backwards"): the point would be labelled
    reduce-overhead and measure compile default."""
    if device != "cuda" or compile_mode not in ("reduce-overhead", "max-autotune"):
        return None
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    if mark is None:  # torch 2.0: before torch.compiler
        try:
            from torch._inductor import cudagraph_trees
            mark = getattr(cudagraph_trees, "mark_step_begin", None)
        except Exception:  # noqa: BLE001
            mark = None
    return mark


def dynamo_graph_count():
    """Graphs torch.compile has compiled so far in this process (dynamo's
    unique_graphs counter), or None where torch has no dynamo."""
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])
    except Exception:  # noqa: BLE001
        return None


def ranks_times(comm, med, lo, hi):
    """Data parallel: the slowest rank's median step and interval (each the
    largest over the ranks) and the fastest rank's median, in seconds, as the
    native engine reports them (rank_step_ms_max, rank_step_ms_min): rank 0's
    own median hides a slower rank, and inference replicas do not wait for
    each other. One process: its own."""
    if comm.world == 1:
        return med, lo, hi, med
    import torch.distributed as dist
    torch = comm.torch
    t = torch.tensor([med, lo, hi], dtype=torch.float64, device=comm.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    m = torch.tensor([med], dtype=torch.float64, device=comm.device)
    dist.all_reduce(m, op=dist.ReduceOp.MIN)
    mx = [float(v) for v in t.cpu()]
    return mx[0], mx[1], mx[2], float(m.cpu()[0])


def measure_point(args, device, ignored, rank=0, world=1, start_perf=None):
    """Build, warm up and time the point in this process. Returns the result
    dict (rank 0's numbers are the ones reported)."""
    import torch
    import torch.nn as nn
    import matrix_torch_models as models

    t_setup = time.perf_counter()
    res = {}
    dev = torch.device("cuda", rank) if device == "cuda" else torch.device("cpu")
    if device == "cuda":
        torch.cuda.set_device(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        gpu_start = gpu_state(torch, dev.index)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed + rank)
    cnn = models.is_cnn(args.model)

    # precision switches: TF32 on only for tf32, explicitly off for the others
    tf32 = args.precision == "tf32"
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        if hasattr(torch, "set_float32_matmul_precision"):
            torch.set_float32_matmul_precision("high" if tf32 else "highest")
        torch.backends.cudnn.benchmark = args.cudnn_benchmark == "on"
    else:
        torch.backends.cudnn.benchmark = False
        # Subnormal floats: the synthetic batch is learnt within a few steps, the
        # gradients then shrink into subnormals, and an x86 backward pass over them
        # runs 10-50x slower (ResNet-50 batch 1: 0.4 s -> 28 s a step). Flush them
        # to zero (FTZ/DAZ), as a training run on real data never sees them.
        res["flush_denormal"] = int(torch.set_flush_denormal(True))
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)

    def autocast():
        if amp_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=device, dtype=amp_dtype)

    # model, inputs
    model = models.build(args.model)
    n_params = sum(p.numel() for p in model.parameters())
    if args.syncbn == "on" and world > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed * 1000003 + rank)
    x, y = models.make_inputs(args.model, args.batch, args.seq_len, dev, gen)
    if cnn and args.channels_last == "on":
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    # --data: every step takes its batch from the loader (in the timed step)
    loader = data = None
    if args.data != "synthetic":
        import matrix_torch_data as tdata
        data = tdata.load(args.data)
        loader = tdata.Loader(torch, data, args.batch, rank, world, args.seed, dev, cnn and args.channels_last == "on")
        if rank == 0:
            print("matrix_torch.py: data: %d images of %dx%d from '%s', labels from '%s' (read in %.3f s); each timed "
                  "step takes the next batch of %d of a shuffled epoch of %d steps (%d images dropped), normalises it "
                  "((x/255-%.4f)/%.4f) and copies it to %s" % (data.n, data.rows, data.cols, data.images_path,
                                                              data.labels_path, data.load_s, args.batch, loader.epoch_steps,
                                                              loader.dropped, tdata.MEAN, tdata.STD, dev), file=sys.stderr)

    def batch():
        return loader.next() if loader is not None else (x, y)

    # what runs: FLOPs and the first conv's output layout, on one eager forward (batch 1)
    sample = x[:1] if cnn else tuple(t[:1] for t in x)
    fwd_flops, first_conv = models.count_flops(model, args.model, sample, args.batch)
    if first_conv is None:
        res["memory_format"] = res["input_memory_format"] = "n/a"
    else:
        res["input_memory_format"] = memory_format_of(torch, first_conv[0])
        res["memory_format"] = memory_format_of(torch, first_conv[1])
    del first_conv
    flops = fwd_flops * (3 if args.task == "train" else 1)

    # runtimes and int8: the reference is eager fp32 (TF32 off, eval) on the same
    # inputs; every other runtime / precision of an inference point is checked
    # against it before anything is timed
    import matrix_torch_runtimes as rt
    res["runtime"] = args.runtime
    res["precision"] = args.precision
    if args.precision == "int8":
        res["quant"] = args.quant
    graph = args.runtime in ("onnxruntime", "tensorrt")
    checked = args.task == "infer" and (args.runtime != "eager" or args.precision != "fp32")
    tolerance = args.tolerance if args.tolerance is not None else rt.TOLERANCES[args.precision]
    ref = None
    if checked:
        model.eval()
        saved = None
        if device == "cuda":
            saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        with torch.no_grad():
            ref = model(x).float().clone()
        if saved is not None:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
        if device == "cuda":
            # the reference's fp32 forward is a check, not the point: its peak is
            # prepare_peak_mem_bytes, peak_mem_bytes starts again from here (as
            # the native engine leaves its searches and checks out)
            res["prepare_peak_mem_bytes"] = torch.cuda.max_memory_allocated(dev)
            torch.cuda.reset_peak_memory_stats(dev)
    elif args.task == "infer":
        res["accuracy_ref"] = "self"  # eager fp32 is the reference
    ort_free0 = None
    if graph and device == "cuda" and hasattr(torch.cuda, "mem_get_info"):
        torch.cuda.synchronize(dev)
        ort_free0 = torch.cuda.mem_get_info(dev)[0]
    try:
        if graph:
            run, first = rt.ort_session(
                args, torch, model, x, dev, res,
                lambda: rt.calibration_batches(models, args.model, args.batch, args.seq_len, dev, args.seed, torch),
                Unsupported)
            rt.check(res, args.precision, ref, first, tolerance)
        elif args.precision == "int8":
            t0 = time.perf_counter()
            model = rt.eager_int8(torch, model.eval(), res)
            res["prepare_s"] = "%.3f" % (time.perf_counter() - t0)
    except (rt.AccuracyError, Unsupported) as e:
        e.res = res
        raise
    if graph:
        model = rt.GraphModule(torch, run, getattr(model, "use_sdpa", None))

    model.train(args.eval == "off" and not graph)
    res["module_training"] = int(model.training)
    res["syncbn_layers"] = sum(1 for m in model.modules() if isinstance(m, nn.SyncBatchNorm))
    raw = model

    ema = Ema(torch, raw) if (args.task == "train" and args.ema == "on") else None
    if args.task == "infer":
        for p in raw.parameters():
            p.requires_grad_(True)  # plain forward builds the autograd graph unless inference_mode

    if world > 1 and args.task == "train":
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[rank] if device == "cuda" else None)
    if args.compile != "none" and not graph:
        mode = None if args.compile == "default" else args.compile
        model = torch.compile(model, mode=mode)
    res["compiled"] = int(args.compile != "none" and not graph)
    res["model_class"] = type(model).__name__
    if checked:
        was = raw.training
        raw.eval()
        amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)
        try:
            with torch.no_grad(), (torch.autocast(device_type=device, dtype=amp) if amp else contextlib.nullcontext()):
                cand = model(x)
            rt.check(res, args.precision, ref, cand, tolerance)
        except rt.AccuracyError as e:
            e.res = res
            raise
        except Exception as e:
            if args.compile != "none" and not is_oom(e):
                raise RuntimeError("torch.compile(mode=%s) failed in the first step: %s" % (args.compile, first_line(e))) from e
            raise
        raw.train(was)
        del cand

    loss_of = models.loss_fn(args.model)
    probe = {}
    scaler = None
    opt = None
    if args.task == "train":
        if cnn:
            opt = torch.optim.SGD(raw.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
            res["optimizer"] = "SGD(lr 0.01 momentum 0.9 weight_decay 1e-4)"
        else:
            opt = torch.optim.AdamW(raw.parameters(), lr=1e-4, weight_decay=0.01)
            res["optimizer"] = "AdamW(lr 1e-4 weight_decay 0.01)"
        if args.precision == "fp16":
            amp = getattr(torch, "amp", None)
            scaler = amp.GradScaler("cuda") if hasattr(amp, "GradScaler") else torch.cuda.amp.GradScaler()
        last_loss = [None]

        def step():
            xb, yb = batch()
            opt.zero_grad(set_to_none=True)
            with autocast():
                out = model(xb)
                loss = loss_of(out, yb)
            if not probe:
                probe.update(output_dtype=str(out.dtype).replace("torch.", ""), grad_enabled=int(torch.is_grad_enabled()),
                             inference_mode_enabled=int(torch.is_inference_mode_enabled()))
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            if ema is not None:
                ema.update()
            last_loss[0] = loss.detach()
    else:
        grad_ctx = torch.inference_mode if args.inference_mode == "on" else contextlib.nullcontext
        last_loss = [None]

        def step():
            xb, _ = batch()
            with grad_ctx(), autocast():
                out = model(xb)
            if not probe:
                probe.update(output_dtype=str(out.dtype).replace("torch.", ""), grad_enabled=int(torch.is_grad_enabled() and out.requires_grad),
                             inference_mode_enabled=int(out.is_inference()) if hasattr(out, "is_inference") else 0)
            return out

    comm = Comm(torch, rank, world, dev)
    body = step
    first = [True]
    mark_step = cudagraph_step_marker(torch, args.compile if not graph else "none", device)
    if mark_step is not None:
        res["cudagraph_mark_step"] = 1

    def step():  # noqa: F811 - the first call names torch.compile in its error
        if mark_step is not None:
            mark_step()  # every step, warm-up, timed and profiled alike
        if not first[0]:
            return body()
        first[0] = False
        try:
            return body()
        except Exception as e:
            if args.compile != "none" and not is_oom(e):
                raise RuntimeError("torch.compile(mode=%s) failed in the first step: %s" % (args.compile, first_line(e))) from e
            raise

    def sync():
        if device == "cuda":
            torch.cuda.synchronize(dev)

    # ---- warm-up: a time (rank 0 decides, everyone follows) or an iteration count
    sync()
    res["setup_s"] = "%.3f" % (time.perf_counter() - t_setup)
    kind, amount = args.warmup
    compiling = args.compile != "none" and not graph
    min_warm = 3 if compiling else 1  # compile, then CUDA graph recording
    warm_times = []
    t_w = time.perf_counter()
    n_warm = 0
    graphs = dynamo_graph_count() if compiling else None
    compiled_last = False  # the last warm-up step compiled a graph (a recompile)
    compile_steps = 0
    prepare_peak = res.get("prepare_peak_mem_bytes")
    while True:
        if kind == "iters":
            if n_warm >= amount:
                break
        else:
            # a step that compiled is no steady state: one more follows it
            # (at most 20 extra steps: dynamo's recompile limit ends it)
            done = (n_warm >= min_warm and time.perf_counter() - t_w >= amount
                    and (not compiled_last or n_warm >= min_warm + 20))
            if comm.agree(done):
                break
        t0 = time.perf_counter()
        step()
        sync()
        warm_times.append(time.perf_counter() - t0)
        n_warm += 1
        if graphs is not None:
            now = dynamo_graph_count()
            compiled_last = now is not None and now > graphs
            compile_steps += int(compiled_last)
            graphs = now
        if device == "cuda" and (n_warm == 1 or compiled_last):
            # the first step's cuDNN benchmark search and torch.compile's
            # compilation and autotuning are preparation: their scratch goes to
            # prepare_peak_mem_bytes, peak_mem_bytes holds what the steps need
            # from here on (weights, optimizer state, the steps' activations,
            # CUDA graph recording), as the native engine counts from the end
            # of its prepare (searches and checks apart)
            prepare_peak = max(prepare_peak or 0, torch.cuda.max_memory_allocated(dev))
            torch.cuda.reset_peak_memory_stats(dev)
        if n_warm == 1 and args.task == "train":
            res["loss_first"] = "%.6g" % last_loss[0].item()
    if prepare_peak is not None:
        res["prepare_peak_mem_bytes"] = prepare_peak
    if compiling and graphs is not None:
        res["warmup_compile_steps"] = compile_steps
    res["warmup_steps"] = n_warm
    res["warmup_s"] = "%.3f" % (time.perf_counter() - t_w)
    if warm_times:
        res["first_step_s"] = "%.4f" % warm_times[0]

    # ---- timed steps: check the stopping rule about every 50 ms
    recent = (warm_times[1:] or warm_times)[-3:]  # not the first step (compilation, cuDNN search)
    est = sorted(recent)[len(recent) // 2] if recent else 0.0
    check_every = comm.agree_int(max(1, min(1000, int(0.05 / est))) if est > 0 else 1)
    samples = []
    pending = []
    # an ONNX Runtime run returns once its outputs are ready; --data: the host
    # clock, so that the input pipeline is in the time
    timing_events = device == "cuda" and not graph and loader is None
    startup_s = None
    t_start = time.perf_counter()
    n = 0
    while True:
        if startup_s is None:
            startup_s = time.perf_counter() - (start_perf if start_perf is not None else _T_LOAD)
        if timing_events:
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            step()
            e1.record()
            pending.append((e0, e1))
        else:
            t0 = time.perf_counter()
            step()
            sync()
            samples.append(time.perf_counter() - t0)
        n += 1
        if args.steps is not None:
            if n >= args.steps:
                break
            continue
        if n % check_every:
            continue
        if pending:
            sync()
            samples.extend(a.elapsed_time(b) / 1000.0 for a, b in pending)
            pending.clear()
        elapsed = time.perf_counter() - t_start
        stop = len(samples) >= 5 and ((elapsed >= args.min_time and ci_ok(samples, args.rel_ci)) or elapsed >= args.max_time)
        if comm.agree(stop):
            break
    sync()
    samples.extend(a.elapsed_time(b) / 1000.0 for a, b in pending)
    res["timed_s"] = "%.3f" % (time.perf_counter() - t_start)
    if compiling and graphs is not None:
        # graphs compiled during the timed steps: those steps include
        # compilation (the median hides a few); nonzero says the warm-up was
        # too short for this point
        now = dynamo_graph_count()
        if now is not None:
            res["timed_compiles"] = now - graphs
    if args.profile:  # every rank runs the steps (DDP's collectives), rank 0 writes
        import matrix_torch_profile as tprof
        res.update(tprof.run(torch, step, sync, device, args.profile, write_file=rank == 0))

    med, lo, hi = median_ci(samples)
    med, lo, hi, med_min = ranks_times(comm, med, lo, hi)
    if world > 1:
        res["rank_step_ms_max"] = "%.6g" % (med * 1e3)
        res["rank_step_ms_min"] = "%.6g" % (med_min * 1e3)
    res.update({
        "status": "ok",
        "throughput": "%.6g" % (args.batch * world / med),
        "unit": "samples/s",
        "step_ms": "%.6g" % (med * 1e3),
        "step_ms_lo": "%.6g" % (lo * 1e3),
        "step_ms_hi": "%.6g" % (hi * 1e3),
        "samples": len(samples),
        "startup_s": "%.3f" % startup_s,
        "flops_per_step": flops * world,
        "tflops": "%.6g" % (flops * world / med / 1e12),
        "timing": "cuda_events" if timing_events else "perf_counter",
        "check_every": check_every,
    })
    # measurement quality: did the stopping rule reach its target, and how wide
    # is the interval (the 95% CI half-width of the median over the median)
    res["rel_ci"] = "%.4g" % ((hi - lo) / 2.0 / med)
    if args.steps is None:
        res["ci_met"] = int(len(samples) >= CI_MIN_SAMPLES and (hi - lo) / 2.0 <= args.rel_ci * med)
    if device == "cuda":
        gpu_end = gpu_state(torch, dev.index)
        for key, name in (("sm_mhz", "gpu_sm_mhz"), ("temp_c", "gpu_temp_c")):
            if key in gpu_start:
                res[name + "_start"] = gpu_start[key]
            if key in gpu_end:
                res[name + "_end"] = gpu_end[key]
        reasons = [r for r in (gpu_start.get("throttle"), gpu_end.get("throttle")) if r and r != "none"]
        if "throttle" in gpu_start or "throttle" in gpu_end:
            res["gpu_throttle"] = "+".join(sorted(set("+".join(reasons).split("+")))) if reasons else "none"
    if args.task == "train":
        res["loss_last"] = "%.6g" % last_loss[0].item()
    if loader is not None:
        res.update(tdata.record(data, loader, (med, lo, hi)))
    if device == "cuda" and graph:
        # ONNX Runtime and TensorRT allocate device memory through their own
        # arenas, which torch's allocator does not see: its peak would be the
        # bound inputs and output alone, a wrong number, so peak_mem_bytes is
        # not written; what the session took from the device (cudaMemGetInfo:
        # its arena, TensorRT's engine, the libraries it loaded) is
        res["mem_source"] = "none (ONNX Runtime's device memory is outside torch's allocator)"
        res["torch_peak_mem_bytes"] = torch.cuda.max_memory_allocated(dev)
        if ort_free0 is not None:
            res["ort_device_mem_bytes"] = max(0, ort_free0 - torch.cuda.mem_get_info(dev)[0])
    elif device == "cuda":
        res["peak_mem_bytes"] = torch.cuda.max_memory_allocated(dev)
        res["mem_source"] = "cuda_max_memory_allocated"
        res["peak_reserved_bytes"] = torch.cuda.max_memory_reserved(dev)
    else:
        res["peak_mem_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        res["mem_source"] = "maxrss"  # whole-process peak resident set, not tensor memory alone
    res.update(probe)
    res["params"] = n_params
    res["threads"] = torch.get_num_threads()
    res["autocast_dtype"] = {None: "none", torch.float16: "float16", torch.bfloat16: "bfloat16"}[amp_dtype]
    res["grad_scaler"] = int(scaler is not None)
    if device == "cuda":
        res["tf32_matmul"] = int(torch.backends.cuda.matmul.allow_tf32)
        res["tf32_cudnn"] = int(torch.backends.cudnn.allow_tf32)
        if hasattr(torch, "get_float32_matmul_precision"):
            res["float32_matmul_precision"] = torch.get_float32_matmul_precision()
        # torch >= 2.9's own TF32 switches (what inductor reads; the legacy
        # setters above keep them in step): ieee or tf32
        for key, backend in (("fp32_precision_matmul", torch.backends.cuda.matmul),
                             ("fp32_precision_cudnn_conv", getattr(torch.backends.cudnn, "conv", None))):
            value = getattr(backend, "fp32_precision", None) if backend is not None else None
            if isinstance(value, str):
                res[key] = value
        if scaler is not None:
            res["loss_scale"] = "%g" % scaler.get_scale()
    res["cudnn_benchmark_flag"] = int(torch.backends.cudnn.benchmark)
    res["ema_updates"] = ema.updates if ema is not None else 0
    if ema is not None:
        res["ema_decay"] = ema.decay
    res["world_size"] = world
    if world > 1:
        import torch.distributed as dist
        res["ddp_backend"] = dist.get_backend()
        res["ddp"] = int(args.task == "train")
    if not cnn:
        res["attention"] = "sdpa" if raw.use_sdpa else "math"
    if args.compile != "none":
        res["compile_mode"] = args.compile
        try:
            from torch._dynamo.utils import counters
            res["dynamo_graphs"] = counters["stats"]["unique_graphs"]
            res["dynamo_graph_breaks"] = sum(counters["graph_break"].values())
            if device == "cuda":
                res["cudagraph_skips"] = counters["inductor"]["cudagraph_skips"]
        except Exception:
            pass
        if device == "cuda":
            n = count_cuda_graphs(rank)
            if n is not None:
                res["cuda_graphs"] = n
    return res


def count_cuda_graphs(device_index):
    """CUDA graphs recorded by torch.compile's CUDA graph trees on this device
    (reduce-overhead, max-autotune), from inductor's internals: None when this
    torch does not expose them the way 2.x does."""
    try:
        from torch._inductor import cudagraph_trees as ct
        mgr = ct.get_manager(device_index, create_if_none_exists=False)
        if mgr is None:
            return 0
        stack = [node for nodes in mgr.roots.values() for node in nodes]
        n = 0
        while stack:
            node = stack.pop()
            n += 1
            stack.extend(c for cs in node.children.values() for c in cs)
        return n
    except Exception:
        return None


# ---------------------------------------------------------- data parallel ----

def _worker(rank, args, device, ignored, world, port, start_perf, outdir):
    """One data-parallel process (spawned). Writes outdir/rank<r>.json with its
    result or error, and re-raises errors so that spawn stops the others."""
    import torch
    import torch.distributed as dist
    from datetime import timedelta
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    out = os.path.join(outdir, "rank%d.json" % rank)
    try:
        backend = "nccl" if device == "cuda" else "gloo"
        if device == "cuda":
            torch.cuda.set_device(rank)
        dist.init_process_group(backend, rank=rank, world_size=world, timeout=timedelta(seconds=300))
        try:
            res = measure_point(args, device, ignored, rank, world, start_perf)
            with open(out, "w") as f:
                json.dump({"status": "ok", "result": {k: str(v) for k, v in res.items()}}, f)
        finally:
            with contextlib.suppress(Exception):
                dist.destroy_process_group()
    except BaseException as e:
        traceback.print_exc()
        status = "oom" if is_oom(e) else "failed"
        with open(out, "w") as f:
            json.dump({"status": status, "reason": "rank %d: %s" % (rank, first_line(e))}, f)
        raise


def run_data_parallel(args, device, ignored, start_perf):
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    with tempfile.TemporaryDirectory(prefix="matrix_torch.") as outdir:
        err = None
        try:
            mp.spawn(_worker, args=(args, device, ignored, args.gpus, port, start_perf, outdir), nprocs=args.gpus, join=True)
        except Exception as e:
            err = e
        reports = {}
        for r in range(args.gpus):
            with contextlib.suppress(OSError, ValueError):
                with open(os.path.join(outdir, "rank%d.json" % r)) as f:
                    reports[r] = json.load(f)
        failed = [rep for r, rep in sorted(reports.items()) if rep["status"] != "ok"]
        if failed:
            # the root cause: an oom first, else the first failing rank
            failed.sort(key=lambda rep: rep["status"] != "oom")
            return {"status": failed[0]["status"], "reason": failed[0]["reason"]}
        if err is not None or 0 not in reports:
            return {"status": "failed", "reason": "data-parallel processes: %s" % (first_line(err) if err else "rank 0 wrote no result")}
        return reports[0]["result"]


# ------------------------------------------------------------------ main -----

def list_models():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import matrix_torch_models as models
        desc = models.DESCRIPTIONS
    except ImportError:  # torch missing: the names alone
        desc = {}
    for name in MODEL_NAMES:
        print("%-12s %s" % (name, desc.get(name, "")))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    start_perf = process_start_perf()
    try:
        args = parse_args(argv)
    except UsageError as e:
        msg = "matrix_torch.py: %s" % e
        print(msg, file=sys.stderr)
        path = result_path_from_argv(argv)
        if path:
            with contextlib.suppress(OSError):
                write_result(path, {"status": "failed", "reason": "bad flag: %s" % e, "engine": ENGINE})
        return EXIT_USAGE
    if args.list_models:
        list_models()
        return EXIT_OK

    base = {"engine": ENGINE, "model": args.model, "task": args.task, "batch": args.batch, "data": args.data}
    if args.data != "synthetic" and args.model == "mnist_cnn":
        import matrix_torch_data as tdata
        try:  # bad files: exit 2 before torch is imported
            tdata.load(args.data).check_model(args.model)
        except tdata.DataError as e:
            print("matrix_torch.py: --data: %s" % e, file=sys.stderr)
            write_result(args.result, dict(base, status="failed", reason="--data: %s" % e))
            return EXIT_USAGE
    if args.model.startswith("bert"):
        base["seq_len"] = args.seq_len
    try:
        import torch
    except Exception as e:
        write_result(args.result, dict(base, status="failed", reason="cannot import torch: %s" % first_line(e)))
        print("matrix_torch.py: cannot import torch: %s" % e, file=sys.stderr)
        return EXIT_FAILED
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

    res = dict(base)
    device = args.device
    try:
        device, ignored = plan(args, torch)
        res["device"] = device
        res["ignored"] = ",".join(ignored) if ignored else "none"
        res.update(environment(torch, device))
        if args.gpus > 1:
            out = run_data_parallel(args, device, ignored, start_perf)
        else:
            out = measure_point(args, device, ignored, 0, 1, start_perf)
        res.update(out)
        res.setdefault("threads", torch.get_num_threads())
    except Unsupported as e:
        res.update({k: v for k, v in getattr(e, "res", {}).items() if k not in res})
        res.setdefault("device", getattr(args, "device_resolved", device))
        res.update(status="unsupported", reason=str(e))
        res.setdefault("threads", torch.get_num_threads())
        with contextlib.suppress(Exception):
            res.update({k: v for k, v in environment(torch, res["device"]).items() if k not in res})
        write_result(args.result, res)
        print("matrix_torch.py: unsupported: %s" % e, file=sys.stderr)
        return EXIT_UNSUPPORTED
    except Exception as e:
        if getattr(e, "res", None) is None:
            traceback.print_exc()
        res.update({k: v for k, v in getattr(e, "res", {}).items() if k not in res})
        res.setdefault("device", getattr(args, "device_resolved", device))
        res.update(status="oom" if is_oom(e) else "failed", reason=first_line(e))
        res.setdefault("threads", torch.get_num_threads())
        write_result(args.result, res)
        return EXIT_FAILED
    write_result(args.result, res)
    if res.get("status") != "ok":
        print("matrix_torch.py: %s: %s" % (res.get("status"), res.get("reason")), file=sys.stderr)
        return EXIT_FAILED
    print("matrix_torch.py: %s %s batch %s on %s: %s samples/s, step %s ms [%s, %s], %s samples"
          % (args.model, args.task, args.batch, device, res["throughput"], res["step_ms"],
             res["step_ms_lo"], res["step_ms_hi"], res["samples"]), file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
