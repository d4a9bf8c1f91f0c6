#!/usr/bin/env python3
"""Every knob changes what runs, as the engine records it: each pair of points
differs in one setting and in the result key that shows what ran."""
from enginetest import check, done, run_many

S = ["--steps", "5"]
T = ["--model", "resnet_tiny", "--batch", "4"] + S
I = ["--model", "resnet_tiny", "--batch", "4", "--task", "infer"] + S
B = ["--model", "bert_tiny", "--batch", "2", "--seq-len", "32"] + S
cases = {
    "base_train": T,
    "channels_last": T + ["--channels-last", "on"],
    "eval": T + ["--eval", "on"],
    "bf16": T + ["--precision", "bf16"],
    "ema": T + ["--ema", "on", "--warmup", "2"],
    "tf32_cpu": T + ["--precision", "tf32", "--cudnn-benchmark", "on"],
    "threads2": T + ["--threads", "2"],
    "seed2": T + ["--seed", "2"],
    "base_infer": I,
    "inference_mode": I + ["--inference-mode", "on", "--ema", "on"],
    "bert_train": B + ["--channels-last", "on"],
    "bert_infer_bf16": B + ["--task", "infer", "--precision", "bf16", "--eval", "on"],
    "mnist_seq": ["--model", "mnist_cnn", "--seq-len", "64"] + S,
}
names = list(cases)
runs = dict(zip(names, run_many([cases[n] for n in names])))
for n, r in runs.items():
    check(r.rc == 0 and r["status"] == "ok", "%s: ok (%s %s)" % (n, r.describe(), r["reason"] or ""))
b, bi = runs["base_train"], runs["base_infer"]


def differs(name, key, base_value, value, run=None):
    r = runs[name] if run is None else run
    check(base_value is not None and r[key] == value and base_value != value,
          "%s: %s %s -> %s (got %s)" % (name, key, base_value, value, r[key]))


differs("channels_last", "memory_format", b["memory_format"], "channels_last")
check(b["memory_format"] == "contiguous", "base: first conv output contiguous (NCHW)")
differs("eval", "module_training", b["module_training"], "0")
differs("bf16", "autocast_dtype", b["autocast_dtype"], "bfloat16")
differs("bf16", "output_dtype", b["output_dtype"], "bfloat16")
differs("ema", "ema_updates", b["ema_updates"], "7")  # 2 warm-up + 5 timed steps
differs("threads2", "threads", b["threads"], "2")
check(runs["seed2"]["loss_first"] != b["loss_first"], "seed: --seed 2 gives other weights and inputs (loss %s vs %s)"
      % (runs["seed2"]["loss_first"], b["loss_first"]))
ig = runs["tf32_cpu"]["ignored"] or ""
check("precision:" in ig and "cudnn_benchmark:" in ig, "tf32 and cudnn_benchmark on cpu: ignored (%s)" % ig)
check(b["ignored"] == "none", "base: ignored=none")
differs("inference_mode", "inference_mode_enabled", bi["inference_mode_enabled"], "1", )
differs("inference_mode", "grad_enabled", bi["grad_enabled"], "0")
check("ema:" in (runs["inference_mode"]["ignored"] or ""), "ema with infer: ignored (%s)" % runs["inference_mode"]["ignored"])
check(bi["grad_enabled"] == "1", "infer without inference_mode: grad-enabled forward")
check("loss_first" in b.res and "loss_first" not in bi.res, "train has a loss, infer has none")
check(int(b["flops_per_step"]) == 3 * int(bi["flops_per_step"]), "train FLOPs = 3 x infer FLOPs (%s, %s)" % (b["flops_per_step"], bi["flops_per_step"]))
bt = runs["bert_train"]
check("channels_last:" in (bt["ignored"] or "") and bt["memory_format"] == "n/a", "bert: channels_last ignored (%s)" % bt["ignored"])
check(bt["optimizer"].startswith("AdamW") and b["optimizer"].startswith("SGD"), "AdamW for BERT, SGD for CNNs")
check(bt["seq_len"] == "32", "bert: seq_len recorded")
bb = runs["bert_infer_bf16"]
check(bb["module_training"] == "0" and bb["output_dtype"] == "bfloat16", "bert infer bf16 eval: module_training=0 output bfloat16")
check("seq_len:" in (runs["mnist_seq"]["ignored"] or ""), "seq_len on a CNN: ignored (%s)" % runs["mnist_seq"]["ignored"])
done()
