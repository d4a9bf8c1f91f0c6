#!/usr/bin/env python3
"""--gpus 2 runs two data-parallel processes (DDP; gloo on cpu): the result is
rank 0's with the slowest rank's median step, throughput counts both processes'
samples, training is DDP-wrapped."""
import math

from enginetest import check, done, huge_alloc_fails, run

r = run(["--model", "mnist_cnn", "--batch", "16", "--gpus", "2"], timeout=180)
check(r.rc == 0 and r["status"] == "ok", "mnist_cnn train gpus 2: ok (%s %s)" % (r.describe(), r["reason"] or ""))
if r["status"] == "ok":
    check(r["world_size"] == "2" and r["ddp_backend"] == "gloo" and r["ddp"] == "1", "world_size=2 ddp_backend=gloo ddp=1")
    check(r["model_class"] == "DistributedDataParallel", "the model is DistributedDataParallel (%s)" % r["model_class"])
    med = float(r["step_ms"])
    check(math.isclose(float(r["throughput"]), 2 * 16 / (med / 1e3), rel_tol=1e-3), "throughput = 2 * batch / step")
    # the slowest rank's median is the step, as in the native engine (rank 0's would hide a slower rank)
    check(r["rank_step_ms_max"] is not None and float(r["rank_step_ms_max"]) == med
          and float(r["rank_step_ms_min"]) <= med,
          "step_ms is the slowest rank's median (rank_step_ms_max %s, min %s, step_ms %s)"
          % (r["rank_step_ms_max"], r["rank_step_ms_min"], r["step_ms"]))
    check(int(r["flops_per_step"]) == 2 * 3 * 961000 * 16, "flops_per_step counts both processes")
    check(0 < float(r["startup_s"]) < 120, "startup_s from the parent's start (%s)" % r["startup_s"])

r = run(["--model", "resnet_tiny", "--batch", "4", "--gpus", "2", "--task", "infer", "--steps", "5"], timeout=180)
check(r.rc == 0 and r["status"] == "ok" and r["world_size"] == "2" and r["ddp"] == "0",
      "resnet_tiny infer gpus 2: ok, two processes, no DDP wrapper (%s)" % r.describe())
if r["status"] == "ok":  # independent replicas: the slowest sets the global throughput
    check(r["rank_step_ms_max"] == r["step_ms"] and float(r["rank_step_ms_min"]) <= float(r["step_ms"])
          and math.isclose(float(r["throughput"]), 2 * 4 / (float(r["step_ms"]) / 1e3), rel_tol=1e-3),
          "infer gpus 2: throughput from the slowest replica (%s ms; fastest %s ms)" % (r["step_ms"], r["rank_step_ms_min"]))

# an error in a data-parallel process ends the run as a result, not a hang
if huge_alloc_fails():
    r = run(["--model", "resnet50", "--task", "infer", "--batch", "1000000", "--gpus", "2"], timeout=180)
    check(r.rc == 1 and r["status"] == "oom" and (r["reason"] or "").startswith("rank "),
          "oom in a DDP process: status=oom, reason names the rank (%s: %s)" % (r["status"], r["reason"]))
done()
