#!/usr/bin/env python3
"""With torch >= 2, --compile reduce-overhead and max-autotune run on the CPU
(CUDA graphs, which do not apply there, are reported in ignored). Skipped (77)
with torch < 2, where engine_compile.py checks that every mode is unsupported."""
import sys

from enginetest import check, done, run_many, torch_version

version, (major, minor) = torch_version()
if major < 2:
    print("SKIP: torch %s has no torch.compile" % version)
    sys.exit(77)
modes = ("reduce-overhead", "max-autotune")
runs = run_many([["--model", "mnist_cnn", "--task", "infer", "--batch", "8", "--compile", m,
                  "--warmup", "0.1s", "--steps", "5"] for m in modes], timeout=300)
for m, r in zip(modes, runs):
    check(r.rc == 0 and r["status"] == "ok", "compile %s: ok (%s %s)" % (m, r.describe(), r["reason"] or ""))
    check(r["compiled"] == "1" and r["compile_mode"] == m and int(r["dynamo_graphs"] or 0) >= 1,
          "compile %s: compiled=1 compile_mode=%s dynamo_graphs=%s" % (m, r["compile_mode"], r["dynamo_graphs"]))
    check("compile:CUDA graphs on cpu" in (r["ignored"] or ""), "compile %s on cpu: CUDA graphs ignored (%s)" % (m, r["ignored"]))
done()
