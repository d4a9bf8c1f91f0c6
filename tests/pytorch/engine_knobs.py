#!/usr/bin/env python3
"""Every knob changes what runs, as the engine records it: each point differs
from the base point in one setting (two independent ones for threads + seed) and
in the result key that shows what ran. Training knobs; engine_knobs_infer.py
has inference and BERT."""
from enginetest import check, done, run_many

S = ["--steps", "5"]
T = ["--model", "resnet_tiny", "--batch", "4"] + S
cases = {
    "base_train": T,
    "channels_last": T + ["--channels-last", "on"],
    "eval": T + ["--eval", "on"],
    "bf16": T + ["--precision", "bf16"],
    "ema": T + ["--ema", "on", "--warmup", "2"],
    "tf32_cpu": T + ["--precision", "tf32", "--cudnn-benchmark", "on"],
    "threads2_seed2": T + ["--threads", "2", "--seed", "2"],
}
names = list(cases)
runs = dict(zip(names, run_many([cases[n] for n in names])))
for n, r in runs.items():
    check(r.rc == 0 and r["status"] == "ok", "%s: ok (%s %s)" % (n, r.describe(), r["reason"] or ""))
b = runs["base_train"]


def differs(name, key, base_value, value):
    r = runs[name]
    check(base_value is not None and r[key] == value and base_value != value,
          "%s: %s %s -> %s (got %s)" % (name, key, base_value, value, r[key]))


differs("channels_last", "memory_format", b["memory_format"], "channels_last")
differs("channels_last", "input_memory_format", b["input_memory_format"], "channels_last")
check(b["memory_format"] == "contiguous", "base: first conv output contiguous (NCHW)")
differs("eval", "module_training", b["module_training"], "0")
differs("bf16", "autocast_dtype", b["autocast_dtype"], "bfloat16")
differs("bf16", "output_dtype", b["output_dtype"], "bfloat16")
differs("ema", "ema_updates", b["ema_updates"], "7")  # 2 warm-up + 5 timed steps
differs("threads2_seed2", "threads", b["threads"], "2")
check(runs["threads2_seed2"]["loss_first"] != b["loss_first"], "seed: --seed 2 gives other weights and inputs (loss %s vs %s)"
      % (runs["threads2_seed2"]["loss_first"], b["loss_first"]))
ig = runs["tf32_cpu"]["ignored"] or ""
check("precision:" in ig and "cudnn_benchmark:" in ig, "tf32 and cudnn_benchmark on cpu: ignored (%s)" % ig)
check(b["ignored"] == "none", "base: ignored=none")
check(b["optimizer"].startswith("SGD"), "SGD for CNNs (%s)" % b["optimizer"])
done()
