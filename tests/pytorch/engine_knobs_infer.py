#!/usr/bin/env python3
"""Every knob changes what runs (inference and BERT): inference_mode, eval, bf16,
and the settings BERT and the CNNs ignore. Training knobs: engine_knobs.py."""
from enginetest import check, done, run_many

S = ["--steps", "5"]
T = ["--model", "resnet_tiny", "--batch", "4"] + S
I = ["--model", "resnet_tiny", "--batch", "4", "--task", "infer"] + S
B = ["--model", "bert_tiny", "--batch", "2", "--seq-len", "32"] + S
cases = {
    "base_train": T,
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


def differs(name, key, base_value, value):
    r = runs[name]
    check(base_value is not None and r[key] == value and base_value != value,
          "%s: %s %s -> %s (got %s)" % (name, key, base_value, value, r[key]))


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
