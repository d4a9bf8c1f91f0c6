#!/bin/sh
# bench_bert_smoke.sh - tests/gpu/bench_bert.sh's whole pipeline without a GPU
# (BENCH_BERT_SMOKE=1: bert_tiny on the CPU, both engines): the script exits
# 0; its table, written between the markers of a file whose other lines stay,
# has the four cases, each with a throughput of ours and of PyTorch, the
# ratio of the two best results in the run's result files, our MFU equal to
# the engine's own pct_peak of the same point (the same FLOPs and peak),
# PyTorch's MFU from PyTorch's FLOPs and our peak, and both peak memories.
# Then a run where one of our points fails and the budget leaves PyTorch
# nothing: exit 1, that point named, PyTorch "not measured" with the reason.
# About 15 s (a PyTorch process per point).
. "${top_srcdir:?}/tests/setup"
. "$top_srcdir/tests/gpu/smoke.sh"
smoke_needs_torch
NAME=bench_bert
B="$top_srcdir/tests/gpu/bench_bert.sh"
BENCH_BERT_SMOKE=1
export BENCH_BERT_SMOKE
smoke_run

"$PY" - perf.md "$work/out" <<'EOF' || fail "the table does not match the result files (above)"
import os
import re
import sys

table, outdir = sys.argv[1], sys.argv[2]


def res(name):
    d = {}
    with open(os.path.join(outdir, name + ".result")) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                d[k] = v
    return d


def best(names):
    rs = [res(n) for n in names if os.path.exists(os.path.join(outdir, n + ".result"))]
    rs = [r for r in rs if r.get("status") == "ok"]
    assert rs, "no ok result among %s" % names
    return max(rs, key=lambda r: float(r["throughput"]))


rows = [l for l in open(table) if l.startswith("| [smoke")]
cases = ["base_infer", "base_train", "large_infer", "large_train"]
bad = 0
if len(rows) != 4:
    print("expected 4 rows, got %d" % len(rows))
    sys.exit(1)
for c, row in zip(cases, rows):
    cells = [x.strip() for x in row.strip().strip("|").split("|")]
    title, ours, torch, ratio, target, met, mfu, mem = cells
    o = best(["ours.%s.reduce-overhead" % c, "ours.%s.max-autotune" % c])
    t = best(["torch.%s.eager" % c, "torch.%s.default" % c])
    want_ratio = float(o["throughput"]) / float(t["throughput"])
    m = re.match(r"(\d+) seq/s \(compile (reduce-overhead|max-autotune)", ours)
    n = re.match(r"(\d+) seq/s \((eager|torch.compile default), fp32", torch)
    r = re.match(r"(\d+\.\d\d)x$", ratio)
    f = re.match(r"(\d+\.\d)% / (\d+\.\d)%$", mfu)
    g = re.match(r"(\d+\.\d) MiB / (\d+\.\d) MiB$", mem)
    checks = [
        ("ours' throughput", m and int(m.group(1)) == round(float(o["throughput"]))),
        ("PyTorch's throughput", n and int(n.group(1)) == round(float(t["throughput"]))),
        ("ratio", r and abs(float(r.group(1)) - want_ratio) <= 0.006),
        ("target", target.startswith(">= %s" % ("1.2x" if "infer" in c else "1.0x"))),
        ("met", re.match(r"throughput (yes|no), memory (yes|no)$", met)),
        ("ours' MFU = its pct_peak", f and abs(float(f.group(1)) - float(o["pct_peak"])) <= 0.051 + 0.001 * float(o["pct_peak"])),
        ("PyTorch's MFU", f and abs(float(f.group(2)) - 100.0 * float(t["flops_per_step"]) / (float(t["step_ms"]) / 1e3)
                                    / (float(o["peak_tflops_est"]) * 1e12)) <= 0.051),
        ("peak memory", g and abs(float(g.group(1)) - float(o["peak_mem_bytes"]) / 2**20) <= 0.051
         and abs(float(g.group(2)) - float(t["peak_mem_bytes"]) / 2**20) <= 0.051),
    ]
    for what, ok in checks:
        if not ok:
            print("%s: %s wrong in: %s" % (c, what, row.strip()))
            bad += 1
print("%d rows checked, %d wrong" % (len(rows), bad))
sys.exit(1 if bad else 0)
EOF

# one of ours fails, and the budget leaves PyTorch nothing
smoke_failing ours.large_train.max-autotune.result 'large_train, compile max-autotune: failed (exit 1)'
echo "ok: bench_bert.sh's smoke run: table, ratios, MFU, memory; a failing point and the budget"
