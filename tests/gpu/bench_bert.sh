#!/bin/sh
# bench_bert.sh - BERT on the native engine's CUDA backend against PyTorch
# (engine/pytorch/matrix_torch.py) on the same GPU, in the same run, one point
# (one process) at a time, sequence length 128 (issue 16, item 5):
#
#   case                            ours (best of)                     PyTorch (best of)                target
#   BERT-base inference fp16 b64    fp16, eval, inference-mode,        AMP fp16, eval(), inference_     >= 1.2x PyTorch best
#                                   compile reduce-overhead |          mode(), SDPA; eager, torch.
#                                   max-autotune                       compile default
#   BERT-base training bf16 b64     bf16 mixed precision, dropout 0.1  AMP bf16, dropout 0.1 (SDPA's),  >= 1.0x
#                                   (as BERT trains), AdamW; the same  AdamW; eager, compile default
#                                   compile modes
#   BERT-large inference fp16 b64   as BERT-base                       as BERT-base                     >= 1.2x
#   BERT-large training bf16 b32    as BERT-base                       as BERT-base                     >= 1.0x
#   and on every case: peak memory (peak_mem_bytes: ours the device
#   allocator's high-water mark, PyTorch's torch.cuda.max_memory_allocated)
#   <= PyTorch best's.
#
#   sh tests/gpu/bench_bert.sh [FILE]
#
# from the source tree or with top_srcdir set. MATRIX_ENGINE names the engine
# (default: $top_builddir/engine/matrix-engine, else ./engine/matrix-engine),
# PYTHON_TORCH the python3 with a CUDA build of torch 2.x. Prints the GPU,
# driver, CUDA, cuDNN and PyTorch versions and a markdown table: case, ours
# and PyTorch best (with the setting), ratio, target, met?, MFU of both
# (model FLOPs per step, which each result carries as flops_per_step, over the
# median step, as % of the GPU's dense tensor-core peak for the precision:
# peak_tflops of our result, the CUDA backend's table that bench_convnets.sh's
# pct_peak uses too) and peak memory of both. With FILE, writes the same
# there: between "<!-- bench_bert:begin -->" and "<!-- bench_bert:end -->"
# when FILE has them (engine/cuda/PERF.md does), else as the whole file.
#
# Time: about 12 minutes. BENCH_BUDGET_S (default 1200) bounds the whole run:
# our points and PyTorch's eager points first, then PyTorch's torch.compile
# points, each within BENCH_COMPILE_S (default 300) and what is left of the
# budget (a point cut short is reported as such and left out of "PyTorch
# best"). BENCH_MAX_AUTOTUNE=0 leaves out our max-autotune points;
# BENCH_TORCH_MAX_AUTOTUNE=1 adds PyTorch's (long compiles). Result files and
# logs stay in BENCH_OUTDIR (default: a new temporary directory, printed at
# the end); our points keep their plan cache in BENCH_OUTDIR/plan-cache.
#
# BENCH_BERT_SMOKE=1: the whole pipeline on the CPU, for tests without a GPU
# (tests/gpu/bench_bert_smoke.sh): every case with bert_tiny at batch 2,
# sequence 16, fp32 (the CPU backend has no fp16 / bf16), one thread, 3 timed
# steps; torch.compile points within BENCH_COMPILE_S (default 10 here); no GPU
# needed. Its figures are not a benchmark and the table says so.
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
BENCH_BERT_SMOKE=${BENCH_BERT_SMOKE:-0}
made_outdir=
[ -n "${BENCH_OUTDIR:-}" ] || made_outdir=1
BENCH_OUTDIR=${BENCH_OUTDIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench_bert.XXXXXX")}
mkdir -p "$BENCH_OUTDIR"
export MATRIX_ENGINE PYTHON_TORCH top_srcdir BENCH_OUTDIR BENCH_BERT_SMOKE

. "$(dirname "$0")/probe.sh" # have_gpu
if [ ! -x "$MATRIX_ENGINE" ]; then
	echo "FAIL: no engine at '$MATRIX_ENGINE' (set MATRIX_ENGINE or top_builddir)"
	exit 1
fi
probe_dev=cuda
[ "$BENCH_BERT_SMOKE" = 1 ] && probe_dev=cpu
rc=0
"$MATRIX_ENGINE" --device $probe_dev --model bert_tiny --batch 2 --seq-len 16 --steps 1 --warmup 0 \
	--result "$BENCH_OUTDIR/probe.result" >"$BENCH_OUTDIR/probe.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	reason=$(sed -n 's/^reason=//p' "$BENCH_OUTDIR/probe.result" 2>/dev/null)
	if [ $probe_dev = cuda ] && ! have_gpu; then
		echo "SKIP: no GPU: matrix-engine --device cuda: ${reason:-exit $rc}"
		[ -z "$made_outdir" ] || rm -rf "$BENCH_OUTDIR"
		exit 77
	fi
	echo "FAIL: matrix-engine --device $probe_dev --model bert_tiny exited $rc: ${reason:-see $BENCH_OUTDIR/probe.log}"
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
SMOKE = os.environ["BENCH_BERT_SMOKE"] == "1"
BUDGET = float(os.environ.get("BENCH_BUDGET_S", "90" if SMOKE else "1200"))
COMPILE_CAP = float(os.environ.get("BENCH_COMPILE_S", "10" if SMOKE else "300"))
OURS_CAP = 60 if SMOKE else 300
MAX_AUTOTUNE = os.environ.get("BENCH_MAX_AUTOTUNE", "1") != "0"
TORCH_MAX_AUTOTUNE = os.environ.get("BENCH_TORCH_MAX_AUTOTUNE", "0") == "1"
MARK_BEGIN, MARK_END = "<!-- bench_bert:begin -->", "<!-- bench_bert:end -->"
T0 = time.time()

if SMOKE:  # the pipeline on the CPU: tiny, quick, not a measurement
    MEASURE = ["--device", "cpu", "--threads", "1", "--seed", "1", "--warmup", "1", "--steps", "3"]
    INFER_P, TRAIN_P = "fp32", "fp32"
    MODEL = {"base": "bert_tiny", "large": "bert_tiny"}
    BATCH = {"base_infer": 2, "base_train": 2, "large_infer": 2, "large_train": 2}
    SEQ = 16
else:
    MEASURE = ["--device", "cuda", "--seed", "1", "--warmup", "3", "--min-time", "1s", "--max-time", "3s",
               "--rel-ci", "0.02"]
    INFER_P, TRAIN_P = "fp16", "bf16"
    MODEL = {"base": "bert_base", "large": "bert_large"}
    BATCH = {"base_infer": 64, "base_train": 64, "large_infer": 64, "large_train": 32}
    SEQ = 128
    PLANS = os.path.join(OUTDIR, "plan-cache")  # ours: the bench's own plan cache
    subprocess.run(["rm", "-rf", PLANS], check=False)
    os.environ["MATRIX_PLAN_CACHE"] = PLANS
points = Points({"ours": [E], "torch": [PY, TORCH_ENGINE]}, OUTDIR, MEASURE, BUDGET,
                min_start=5 if SMOKE else 20)


def case_args(size, task):
    c = "%s_%s" % (size, task)
    a = ["--model", MODEL[size], "--batch", str(BATCH[c]), "--seq-len", str(SEQ), "--task", task]
    if task == "infer":
        return a + ["--precision", INFER_P, "--eval", "on", "--inference-mode", "on"]
    return a + ["--precision", TRAIN_P]  # dropout on, as BERT trains


CASES = [  # name, title, target ratio
    ("base_infer", "BERT-base inference", 1.2),
    ("base_train", "BERT-base training", 1.0),
    ("large_infer", "BERT-large inference", 1.2),
    ("large_train", "BERT-large training", 1.0),
]
ARGS = {c: case_args(*c.split("_")) for c, _, _ in CASES}
OUR_MODES = ["reduce-overhead"] + (["max-autotune"] if MAX_AUTOTUNE else [])
TORCH_COMPILE = ["default"] + (["max-autotune"] if TORCH_MAX_AUTOTUNE else [])
ours = {c: [] for c in ARGS}
torch = {c: [] for c in ARGS}

print("== ours (%s)" % E, flush=True)
for c, args in ARGS.items():
    for mode in OUR_MODES:
        ours[c].append(("compile " + mode, points.run("ours", "%s.%s" % (c, mode), args + ["--compile", mode], OURS_CAP)))

print("== PyTorch (%s %s)" % (PY, TORCH_ENGINE), flush=True)
for c, args in ARGS.items():  # eager first: every case gets a PyTorch figure
    torch[c].append(("eager", points.run("torch", "%s.eager" % c, args + ["--compile", "none"],
                                         min(OURS_CAP, points.left()))))
for mode in TORCH_COMPILE:  # then torch.compile, within what is left of the budget
    for c, args in ARGS.items():
        torch[c].append(("torch.compile " + mode, points.run(
            "torch", "%s.%s" % (c, mode), args + ["--compile", mode], min(COMPILE_CAP, points.left() - 5))))


# ---- the table ------------------------------------------------------------------------------
def peak_of(results):
    """The dense peak (flop/s) our results give for their precision: the
    CUDA backend's table (peak_tflops), on the CPU the engine's estimate."""
    for _, r in results:
        p = num(r, "peak_tflops") or num(r, "peak_tflops_est")
        if r["_status"] == "ok" and p:
            return p * 1e12
    return None


def mfu(r, peak):
    """Model FLOPs per step over the median step, % of peak; None when unknown."""
    f, ms = num(r, "flops_per_step"), num(r, "step_ms")
    if not (r and f and ms and peak):
        return None
    return 100.0 * f / (ms / 1e3) / peak


def mem(r):
    b = num(r, "peak_mem_bytes") if r else None
    if b is None:
        return "n/a"
    return "%.2f GiB" % (b / 2**30) if b >= 2**30 else "%.1f MiB" % (b / 2**20)


def others(results):
    notes = ["%s: %s" % (s, r.get("_why", r["_status"])) for s, r in results if r["_status"] != "ok"]
    return ("; not counted: " + "; ".join(notes)) if notes else ""


def our_attention(r):
    if "sdpa_cudnn_fwd" not in r:
        return ""
    return (", attention: cuDNN SDPA %s forward / %s backward (with the engine's dropout mask %s / %s),"
            " own kernels %s / %s" % tuple(
                r.get(k, "?") for k in ("sdpa_cudnn_fwd", "sdpa_cudnn_bwd", "sdpa_cudnn_fwd_dropout",
                                        "sdpa_cudnn_bwd_dropout", "sdpa_kernel_fwd", "sdpa_kernel_bwd")))


rows, notes, ours_failed, mem_sources = [], [], [], set()
for c, title, target in CASES:
    a = ARGS[c]
    prec, batch = a[a.index("--precision") + 1], BATCH[c]
    os_, o = best(ours[c], "throughput", False)
    ts, t = best(torch[c], "throughput", False)
    for s, r in ours[c]:
        if r["_status"] not in ("ok", "skipped"):
            ours_failed.append("%s, %s: %s" % (c, s, r.get("_why")))
    ours_cell = ("%.0f seq/s (%s%s)" % (num(o, "throughput"), os_, our_attention(o)) if o else "not measured") + \
        others(ours[c])
    amp = "AMP " + prec if prec in ("fp16", "bf16") else prec
    torch_cell = ("%.0f seq/s (%s, %s, attention %s)" % (num(t, "throughput"), ts, amp, t.get("attention", "?"))
                  if t else "not measured") + others(torch[c])
    ratio, met = "n/a", "n/a"
    if o and t:
        x = num(o, "throughput") / num(t, "throughput")
        ratio = "%.2fx" % x
        mo, mt = num(o, "peak_mem_bytes"), num(t, "peak_mem_bytes")
        met = "throughput %s, memory %s" % ("yes" if x >= target else "no",
                                            "n/a" if mo is None or mt is None else "yes" if mo <= mt else "no")
        fo, ft = num(o, "flops_per_step"), num(t, "flops_per_step")
        if fo and ft and abs(fo - ft) > 0.01 * fo:
            notes.append("%s: the engines count different model FLOPs per step (ours %.4g, PyTorch %.4g); "
                         "each MFU uses its own" % (c, fo, ft))
    peak = peak_of(ours[c])
    mo_, mt_ = mfu(o, peak), mfu(t, peak)
    mfu_cell = "%s / %s" % ("%.1f%%" % mo_ if mo_ is not None else "n/a", "%.1f%%" % mt_ if mt_ is not None else "n/a")
    title = "%s%s, %s%s, batch %d" % ("[smoke: %s] " % MODEL[c.split("_")[0]] if SMOKE else "", title, prec,
                                      " mixed precision" if prec in ("fp16", "bf16") and "training" in title else "",
                                      batch)
    if t and t.get("mem_source"):
        mem_sources.add(t["mem_source"])
    rows.append((title, ours_cell, torch_cell, ratio,
                 ">= %.1fx PyTorch best, peak memory <= PyTorch's" % target, met, mfu_cell,
                 "%s / %s" % (mem(o), mem(t))))

probe = read_result(os.path.join(OUTDIR, "probe.result"))
peak_kind = "the estimated fp32 peak of the CPU (the engine's, from its clock)" if SMOKE else \
    "the GPU's dense tensor-core peak for the case's precision (the CUDA backend's table: peak_tflops)"
out = ["# bench_bert: native engine (%s) vs PyTorch, BERT, sequence %d" % ("CPU, smoke run" if SMOKE else "CUDA", SEQ), ""]
if SMOKE:
    out += ["SMOKE RUN (BENCH_BERT_SMOKE=1): the pipeline on the CPU with bert_tiny, batch 2, sequence 16, fp32, "
            "3 steps: not a benchmark.", ""]
out += ["Measured %s with `sh tests/gpu/bench_bert.sh` (%.0f s)." % (time.strftime("%Y-%m-%d %H:%M %Z"), time.time() - T0), ""]
out += ["- " + v for v in versions(PY, probe)]
out += ["", "| case | ours (setting) | PyTorch best (setting) | ratio | target | met? | MFU ours / PyTorch | "
        "peak memory ours / PyTorch |", "|---|---|---|---|---|---|---|---|"]
out += ["| %s |" % " | ".join(r) for r in rows]
out += ["", "ratio: throughput (sequences/s) ours / PyTorch best's; memory: peak_mem_bytes of the same two points "
        "(PyTorch's from %s)." % (", ".join(sorted(mem_sources)) or "n/a"),
        "MFU: model FLOPs per step (flops_per_step) / median step, as %% of %s." % peak_kind,
        "Each figure is the median step of one process (%s); result files and logs: %s." % (" ".join(MEASURE), OUTDIR)]
if not SMOKE:
    out += ["For reference, issue 16's figures (PyTorch 2.11 on one H100, 2026-11-23): BERT-base inference fp16 b64 "
            "5,483 seq/s eager, 6,962 compiled; training bf16 b64 1,400 eager, 2,505 compiled; BERT-large inference "
            "fp16 b64 2,968 compiled; training bf16 b32 424 eager."]
out += ["Note: " + n for n in notes]
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
