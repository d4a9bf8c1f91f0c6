#!/bin/sh
# bench_convnets.sh - the native engine's CUDA backend against PyTorch on the
# same GPU, in the same run (one process per point, one point at a time):
#
#   case                                   ours (best settings)                   PyTorch (best of)                 target (issue 18)
#   ResNet-50 inference fp16 NHWC b256     fp16, channels-last, cudnn-benchmark,  AMP fp16, channels_last,          >= 1.50x and >= 35%
#                                          eval + inference-mode, compile         cudnn.benchmark, eval +           of the fp16 tensor-
#                                          reduce-overhead | max-autotune         inference_mode; eager, compile    core peak (pct_peak)
#                                                                                 default, max-autotune
#   ResNet-50 training fp16 NHWC b256      same, training (BN batch statistics,   same, training (GradScaler)       >= 1.20x and >= 6,000
#                                          dynamic loss scaling); one point more                                    samples/s
#                                          with MATRIX_ENGINE_BNSTATS=conv (BN
#                                          sums from cuDNN's GEN_STATS, off by
#                                          default: engine/NOTES.md)
#   ResNet-50 inference b1 latency         as the first case, batch 1; the row    compile reduce-overhead           <= 0.70 ms a step
#                                          says which cuDNN API ran the           (CUDA graphs)                     (ratio beside it)
#                                          convolutions (conv_graph_ops)
#   MNIST CNN training b64                 fp32, compile reduce-overhead |        eager, fp32 or AMP fp16           >= 10.0x (keep the
#                                          max-autotune                                                             10.2x of 2026-11-22)
#   ResNet-50 start-up                     startup_s (process start to the first  the same for PyTorch eager        < 1.5 s (on, warm
#                                          timed step, one warm-up step) of the                                     plan cache);
#                                          first case's settings, cudnn-benchmark                                   < 1.0 s (off)
#                                          on with a cold and a warm plan cache,
#                                          off (warm), with its phases startup_ms,
#                                          plan_ms, first_step_ms
#
#   sh tests/gpu/bench_convnets.sh [FILE]
#
# from the source tree or with top_srcdir set. MATRIX_ENGINE names the engine
# (default: $top_builddir/engine/matrix-engine, else ./engine/matrix-engine),
# PYTHON_TORCH the python3 with a CUDA build of torch (2.x; torchvision for
# ResNet-50). Prints the GPU, driver, CUDA, cuDNN and PyTorch versions and a
# markdown table (case, ours, PyTorch best and its setting, ratio, target,
# met?); with FILE, writes the same there: between the lines
# "<!-- bench_convnets:begin -->" and "<!-- bench_convnets:end -->" when FILE
# has them (engine/cuda/PERF.md does), else as the whole file.
#
# Time: about 8 minutes. BENCH_BUDGET_S (default 480) bounds the whole run:
# our points and PyTorch's eager and reduce-overhead points run first, then
# PyTorch's torch.compile default and max-autotune points, each within
# BENCH_COMPILE_S (default 180) and what is left of the budget (a point cut
# short is reported as such and left out of "PyTorch best").
# BENCH_MAX_AUTOTUNE=0 leaves out max-autotune (ours and PyTorch's),
# BENCH_TORCH_MAX_AUTOTUNE=0 PyTorch's alone (on an H100 its compile did not
# finish within 180 s: tests/gpu/session.sh leaves it out).
# Result files and logs stay in BENCH_OUTDIR (default: a new temporary
# directory, printed at the end). Our points keep their plan cache
# (--plan-cache) in BENCH_OUTDIR/plan-cache, made afresh, so that the
# machine's own cache changes nothing; the cold start-up point has an empty
# one of its own.
#
# met? is "yes" when every part of the target holds, else "no" with the
# parts that do not, "n/a" when a figure it needs is missing.
#
# BENCH_CONVNETS_SMOKE=1: the whole pipeline on the CPU, for tests without a
# GPU (tests/gpu/bench_convnets_smoke.sh): resnet_tiny for ResNet-50 at
# batch 4 (and 1), mnist_cnn at batch 8, fp32 (the CPU backend has no fp16),
# one thread, 3 timed steps, both engines on the CPU; torch.compile points
# within BENCH_COMPILE_S (default 10 here). Its figures are not a benchmark
# and the table says so.
#
# Exit 0 when every point of ours ran (targets met or not: see the table),
# 1 when one of ours failed, 77 when there is no GPU (not in the smoke run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
if [ -z "${MATRIX_ENGINE:-}" ]; then
	if [ -n "${top_builddir:-}" ]; then MATRIX_ENGINE=$top_builddir/engine/matrix-engine
	else MATRIX_ENGINE=$(pwd)/engine/matrix-engine; fi
fi
PYTHON_TORCH=${PYTHON_TORCH:-python3}
BENCH_CONVNETS_SMOKE=${BENCH_CONVNETS_SMOKE:-0}
BENCH_OUTDIR=${BENCH_OUTDIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench_convnets.XXXXXX")}
mkdir -p "$BENCH_OUTDIR"
export MATRIX_ENGINE PYTHON_TORCH top_srcdir BENCH_OUTDIR BENCH_CONVNETS_SMOKE

. "$(dirname "$0")/probe.sh" # have_gpu
if [ ! -x "$MATRIX_ENGINE" ]; then
	echo "FAIL: no engine at '$MATRIX_ENGINE' (set MATRIX_ENGINE or top_builddir)"
	exit 1
fi
probe_dev=cuda
[ "$BENCH_CONVNETS_SMOKE" = 1 ] && probe_dev=cpu
rc=0
"$MATRIX_ENGINE" --device $probe_dev --model mnist_cnn --batch 2 --steps 1 --warmup 0 \
	--result "$BENCH_OUTDIR/probe.result" >"$BENCH_OUTDIR/probe.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	reason=$(sed -n 's/^reason=//p' "$BENCH_OUTDIR/probe.result" 2>/dev/null)
	if [ $probe_dev = cuda ] && ! have_gpu; then
		echo "SKIP: no GPU: matrix-engine --device cuda: ${reason:-exit $rc}"
		exit 77
	fi
	echo "FAIL: matrix-engine --device $probe_dev exited $rc: ${reason:-see $BENCH_OUTDIR/probe.log}"
	exit 1
fi
if ! "$PYTHON_TORCH" -c 'import torch' >/dev/null 2>&1; then
	echo "FAIL: $PYTHON_TORCH cannot import torch (set PYTHON_TORCH)"
	exit 1
fi

exec "$PYTHON_TORCH" - "$@" <<'PYEOF'
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "gpu"))
from benchlib import Points, best, num, read_result, versions, write_marked  # noqa: E402

E = os.environ["MATRIX_ENGINE"]
PY = os.environ["PYTHON_TORCH"]
TORCH_ENGINE = os.path.join(os.environ["top_srcdir"], "engine", "pytorch", "matrix_torch.py")
OUTDIR = os.environ["BENCH_OUTDIR"]
OUTFILE = sys.argv[1] if len(sys.argv) > 1 else None
SMOKE = os.environ["BENCH_CONVNETS_SMOKE"] == "1"
BUDGET = float(os.environ.get("BENCH_BUDGET_S", "120" if SMOKE else "480"))
COMPILE_CAP = float(os.environ.get("BENCH_COMPILE_S", "10" if SMOKE else "180"))
MAX_AUTOTUNE = os.environ.get("BENCH_MAX_AUTOTUNE", "1") != "0"
TORCH_MAX_AUTOTUNE = MAX_AUTOTUNE and os.environ.get("BENCH_TORCH_MAX_AUTOTUNE", "1") != "0"
T0 = time.time()
# short measurements: a few warm-up steps (compile, CUDA graph recording), 1-3 s timed
MEASURE = ["--device", "cuda", "--seed", "1", "--warmup", "3", "--min-time", "1s", "--max-time", "3s",
           "--rel-ci", "0.02"]
# the models, batches and precision of the cases (the smoke run: tiny, on the CPU, not a measurement)
R50_MODEL, B256, B64, HALF = "resnet50", "256", "64", "fp16"
if SMOKE:
    MEASURE = ["--device", "cpu", "--threads", "1", "--seed", "1", "--warmup", "1", "--steps", "3"]
    R50_MODEL, B256, B64, HALF = "resnet_tiny", "4", "8", "fp32"
MARK_BEGIN, MARK_END = "<!-- bench_convnets:begin -->", "<!-- bench_convnets:end -->"
PLANS = os.path.join(OUTDIR, "plan-cache")  # ours: the bench's own plan cache (engine/plancache.h)
subprocess.run(["rm", "-rf", PLANS, PLANS + ".cold"], check=False)
os.environ["MATRIX_PLAN_CACHE"] = PLANS
os.environ.pop("MATRIX_ENGINE_BNSTATS", None)  # only the point below sets it
points = Points({"ours": [E], "torch": [PY, TORCH_ENGINE]}, OUTDIR, MEASURE, BUDGET, min_start=5 if SMOKE else 20)
run, left = points.run, points.left


# ---- the points -------------------------------------------------------------------------
R50 = ["--model", R50_MODEL]
INFER = ["--task", "infer", "--precision", HALF, "--channels-last", "on", "--eval", "on",
         "--inference-mode", "on", "--cudnn-benchmark", "on"]
TRAIN = ["--task", "train", "--precision", HALF, "--channels-last", "on", "--cudnn-benchmark", "on"]
MNIST = ["--model", "mnist_cnn", "--task", "train", "--batch", B64]
OUR_MODES = ["reduce-overhead"] + (["max-autotune"] if MAX_AUTOTUNE else [])
CASES = {
    "r50_infer_b256": R50 + INFER + ["--batch", B256],
    "r50_train_b256": R50 + TRAIN + ["--batch", B256],
    "r50_infer_b1": R50 + INFER + ["--batch", "1"],
}
ours = {c: [] for c in list(CASES) + ["mnist_train_b64", "startup"]}
torch = {c: [] for c in ours}

print("== ours (%s)" % E, flush=True)
for c, args in CASES.items():
    for mode in OUR_MODES:
        ours[c].append((mode, run("ours", "%s.%s" % (c, mode), args + ["--compile", mode], 300)))
# BatchNorm statistics from the convolution (engine/cuda/conv.cu, off by
# default): the training case once more with the first mode, in the best-of
# when it runs and is faster (its result says how many convolutions took it)
os.environ["MATRIX_ENGINE_BNSTATS"] = "conv"
ours["r50_train_b256"].append(("%s, MATRIX_ENGINE_BNSTATS=conv" % OUR_MODES[0], run(
    "ours", "r50_train_b256.%s.bnstats-conv" % OUR_MODES[0],
    CASES["r50_train_b256"] + ["--compile", OUR_MODES[0]], 300)))
del os.environ["MATRIX_ENGINE_BNSTATS"]
for mode in OUR_MODES:
    ours["mnist_train_b64"].append(
        ("fp32 " + mode, run("ours", "mnist_train_b64.%s" % mode, MNIST + ["--precision", "fp32", "--compile", mode], 120)))
STARTUP = ["--warmup", "1", "--steps", "3"]  # after MEASURE: the last --warmup counts
# the same settings as the first case: its points above warmed the plan cache
# for benchmark on; benchmark off warms its own (heuristics' choices) first
SU_ON = CASES["r50_infer_b256"] + ["--compile", "reduce-overhead"] + STARTUP
SU_OFF = CASES["r50_infer_b256"] + ["--cudnn-benchmark", "off", "--compile", "reduce-overhead"] + STARTUP
startup_cold = run("ours", "startup.bench_on.cold", SU_ON + ["--plan-cache", PLANS + ".cold"], 120)
ours["startup"].append(("cudnn-benchmark on, warm plan cache", run("ours", "startup.bench_on", SU_ON, 120)))
run("ours", "startup.bench_off.warming", SU_OFF, 120)
ours["startup"].append(("cudnn-benchmark off, warm plan cache", run("ours", "startup.bench_off", SU_OFF, 120)))

print("== PyTorch (%s %s)" % (PY, TORCH_ENGINE), flush=True)
# first what every case needs: eager, and reduce-overhead for the latency case
torch["r50_infer_b256"].append(("eager", run("torch", "r50_infer_b256.none", CASES["r50_infer_b256"] + ["--compile", "none"], min(300, left()))))
torch["r50_train_b256"].append(("eager", run("torch", "r50_train_b256.none", CASES["r50_train_b256"] + ["--compile", "none"], min(300, left()))))
torch["mnist_train_b64"].append(("eager fp32", run("torch", "mnist_train_b64.fp32", MNIST + ["--precision", "fp32", "--compile", "none"], min(120, left()))))
torch["mnist_train_b64"].append(("eager AMP fp16", run("torch", "mnist_train_b64.fp16", MNIST + ["--precision", "fp16", "--compile", "none"], min(120, left()))))
torch["startup"].append(("eager", run("torch", "startup", CASES["r50_infer_b256"] + ["--compile", "none"] + STARTUP, min(120, left()))))
torch["r50_infer_b1"].append(("reduce-overhead", run("torch", "r50_infer_b1.reduce-overhead", CASES["r50_infer_b1"] + ["--compile", "reduce-overhead"], min(COMPILE_CAP, left()))))
# then torch.compile, within what is left of the budget
for mode in ["default"] + (["max-autotune"] if TORCH_MAX_AUTOTUNE else []):
    for c in ("r50_infer_b256", "r50_train_b256"):
        torch[c].append(("compile " + mode, run("torch", "%s.%s" % (c, mode), CASES[c] + ["--compile", mode], min(COMPILE_CAP, left() - 5))))

# ---- the table ------------------------------------------------------------------------------
def fmt_thr(r):
    return "%.0f samples/s" % num(r, "throughput")


def fmt_ms(r):
    return "%.3f ms" % num(r, "step_ms")


def fmt_s(r):
    return "%.2f s" % num(r, "startup_s")


def others(results):
    """What else was tried and did not count."""
    notes = ["%s: %s" % (s, r.get("_why", r["_status"])) for s, r in results if r["_status"] != "ok"]
    return ("; not counted: " + "; ".join(notes)) if notes else ""


rows = []
ours_failed = []


def row(case, ours_runs, torch_runs, metric, fmt, target, parts, extra=None):
    """One line of the table. metric: throughput (higher is better), step_ms or
    startup_s (lower is better), of which each side's best counts; target: its
    text; parts: [(name, test)], test(ours_result, ratio) -> True, False, or
    None when a figure it needs is missing (ratio: None without PyTorch's)."""
    lower = metric != "throughput"
    os_, o = best(ours_runs, metric, lower)
    ts, t = best(torch_runs, metric, lower)
    for s, r in ours_runs:
        if r["_status"] not in ("ok", "skipped"):
            ours_failed.append("%s, %s: %s" % (case, s, r.get("_why")))
    ours_cell = "%s (%s%s)" % (fmt(o), os_, extra(o) if extra else "") if o else "not measured"
    ours_cell += others(ours_runs)
    torch_cell = ("%s (%s)" % (fmt(t), ts) if t else "not measured") + others(torch_runs)
    ratio, x = "n/a", None
    if o and t:
        x = num(t, metric) / num(o, metric) if lower else num(o, metric) / num(t, metric)
        ratio = "%.2fx" % x
    met = "n/a"
    if o and parts:
        verdicts = [(name, test(o, x)) for name, test in parts]
        missing = [n for n, v in verdicts if v is None]
        failing = [n for n, v in verdicts if v is False]
        met = "no (%s)" % ", ".join(failing) if failing else \
            "n/a (%s)" % ", ".join(missing) if missing else "yes"
    rows.append((case, ours_cell, torch_cell, ratio, target, met))


def at_least(key, limit):
    """A part of a target: ours' key >= limit (None when ours has no such figure)."""
    return lambda o, x: None if num(o, key) is None else num(o, key) >= limit


def at_most(key, limit):
    return lambda o, x: None if num(o, key) is None else num(o, key) <= limit


def below(key, limit):
    return lambda o, x: None if num(o, key) is None else num(o, key) < limit


def ratio_at_least(limit):
    return lambda o, x: None if x is None else x >= limit


SM = "[smoke: %s, batch %s, %s] " % (R50_MODEL, B256, HALF) if SMOKE else ""
row(SM + "ResNet-50 inference, fp16, NHWC, batch 256", ours["r50_infer_b256"], torch["r50_infer_b256"], "throughput",
    fmt_thr, ">= 1.50x PyTorch best and >= 35% of the fp16 tensor-core peak",
    [("ratio < 1.50x", ratio_at_least(1.5)), ("pct_peak < 35%", at_least("pct_peak", 35.0))],
    extra=lambda r: ", %s%% of %s, %s TFLOP/s" % (r.get("pct_peak", "?"), "the CPU's estimated fp32 peak" if SMOKE
                                                  else "the fp16 tensor-core peak", r.get("tflops", "?")))
row(SM + "ResNet-50 training, fp16 mixed precision, NHWC, batch 256", ours["r50_train_b256"], torch["r50_train_b256"],
    "throughput", fmt_thr, ">= 1.20x PyTorch best and >= 6,000 samples/s",
    [("ratio < 1.20x", ratio_at_least(1.2)), ("< 6,000 samples/s", at_least("throughput", 6000.0))],
    extra=lambda r: ", %s%% of peak%s" % (r.get("pct_peak", "?"), "; conv_genstats_ops=%s, fallback %s" % (
        r.get("conv_genstats_ops", "?"), r.get("conv_genstats_fallback", "?")) if r.get("conv_bnstats") == "conv" else ""))
def conv_path(r):
    """Which cuDNN API ran the convolutions (engine/cuda/conv.cu, MATRIX_ENGINE_CONV)."""
    if "conv_graph_ops" not in r:
        return ""
    legacy = ", ".join("%s %s" % (r[k], w) for k, w in (
        ("conv_graph_no_engine", "no engine"), ("conv_graph_verify_failed", "failed the check"),
        ("conv_graph_unchecked", "not checked"), ("conv_graph_slower", "slower"),
        ("conv_graph_ineligible", "not one graph")) if r.get(k, "0") != "0")
    return "; conv_graph_ops=%s (forwards on the cuDNN graph API, MATRIX_ENGINE_CONV=%s%s)" % (
        r["conv_graph_ops"], r.get("conv_engine", "?"), "; legacy: " + legacy if legacy else "")


row(("[smoke: %s, %s] " % (R50_MODEL, HALF) if SMOKE else "") + "ResNet-50 inference latency, fp16, NHWC, batch 1",
    ours["r50_infer_b1"], torch["r50_infer_b1"], "step_ms", fmt_ms,
    "<= 0.70 ms a step (PyTorch reduce-overhead beside it)", [("> 0.70 ms", at_most("step_ms", 0.70))], extra=conv_path)
row(("[smoke: batch %s] " % B64 if SMOKE else "") + "MNIST CNN training, batch 64", ours["mnist_train_b64"],
    torch["mnist_train_b64"], "throughput", fmt_thr, ">= 10.0x PyTorch eager (keep the 10.2x of 2026-11-22)",
    [("ratio < 10.0x", ratio_at_least(10.0))])
def phases(r):
    return ": %s ms to the plan, %s ms plan, %s ms first step; plan cache %s hits, %s misses" % tuple(
        r.get(k, "?") for k in ("startup_ms", "plan_ms", "first_step_ms", "plan_cache_hits", "plan_cache_misses"))


for s, r in ours["startup"]:  # each of ours against the target, PyTorch eager beside it
    limit = 1.5 if "benchmark on" in s else 1.0
    row(SM + "ResNet-50 start-up (process start to first timed step), %s" % s, [(s, r)], torch["startup"], "startup_s",
        fmt_s, "< %.1f s" % limit, [(">= %.1f s" % limit, below("startup_s", limit))], extra=phases)
row(SM + "ResNet-50 start-up, cudnn-benchmark on, cold plan cache (the search runs)",
    [("cudnn-benchmark on, cold plan cache", startup_cold)], torch["startup"], "startup_s", fmt_s,
    "none (for comparison)", [], extra=phases)


out = ["# bench_convnets: native engine (%s) vs PyTorch" % ("CPU, smoke run" if SMOKE else "CUDA, on one GPU"), ""]
if SMOKE:
    out += ["SMOKE RUN (BENCH_CONVNETS_SMOKE=1): the pipeline on the CPU with %s at batch %s and 1, mnist_cnn at "
            "batch %s, fp32, 3 steps: not a benchmark." % (R50_MODEL, B256, B64), ""]
out += ["Measured %s with `sh tests/gpu/bench_convnets.sh` (%.0f s)." % (time.strftime("%Y-%m-%d %H:%M %Z"), time.time() - T0), ""]
out += ["- " + v for v in versions(PY, read_result(os.path.join(OUTDIR, "probe.result")))]
out += ["", "| case | ours | PyTorch best (setting) | ratio | target | met? |", "|---|---|---|---|---|---|"]
out += ["| %s |" % " | ".join(r) for r in rows]
out += ["", "ratio: throughput ours / PyTorch's, or latency and start-up PyTorch's / ours (above 1: ours is better).",
        "met?: yes when every part of the target holds, else no with the parts that do not (issue 18's targets).",
        "Each figure is the median step of one process (%s); result files and logs: %s." % (" ".join(MEASURE), OUTDIR)]
text = "\n".join(out) + "\n"
print()
print(text)
if OUTFILE:
    write_marked(OUTFILE, text, MARK_BEGIN, MARK_END)
    print("written to %s" % OUTFILE)
if ours_failed:
    print("FAIL: points of ours that did not run:\n  " + "\n  ".join(ours_failed))
    sys.exit(1)
sys.exit(0)
PYEOF
