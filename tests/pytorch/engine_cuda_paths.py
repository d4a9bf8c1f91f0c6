#!/usr/bin/env python3
"""The parts of the PyTorch engine's CUDA and torch >= 2 paths that decide what
runs, checked on the CPU with stand-ins for the torch features this machine's
torch (1.13, no GPU) lacks; the GPU side is tests/gpu/pytorch_knobs.sh.

- cudagraph_step_marker: compile reduce-overhead / max-autotune on cuda mark
  every step's start for the CUDA graph trees (else an inference forward with
  grad enabled never replays a graph), nothing elsewhere;
- exporter_options: torch.onnx.export gets dynamo=False where it has the
  parameter (torch >= 2.9 defaults to the dynamo exporter), nothing before;
- eager_quantizer: found in this torch; a torch without it makes eager int8
  unsupported, not an AttributeError;
- node_placement / cpu_ops: ONNX Runtime's profile tells where each node ran;
  a compute node on the CPU provider of a cuda point is found."""
import os
import sys
import types

from enginetest import SRCDIR, check, done

sys.path.insert(0, os.path.join(SRCDIR, "engine", "pytorch"))
import matrix_torch as mt  # noqa: E402
import matrix_torch_runtimes as rt  # noqa: E402


def mark():
    pass


torch2 = types.SimpleNamespace(compiler=types.SimpleNamespace(cudagraph_mark_step_begin=mark))
for mode in ("reduce-overhead", "max-autotune"):
    check(mt.cudagraph_step_marker(torch2, mode, "cuda") is mark, "compile %s on cuda: every step is marked" % mode)
    check(mt.cudagraph_step_marker(torch2, mode, "cpu") is None, "compile %s on cpu: no CUDA graphs, no mark" % mode)
for mode in ("none", "default"):
    check(mt.cudagraph_step_marker(torch2, mode, "cuda") is None, "compile %s on cuda: no CUDA graphs, no mark" % mode)
import torch  # noqa: E402

if not hasattr(torch, "compile"):
    check(mt.cudagraph_step_marker(torch, "reduce-overhead", "cuda") is None,
          "torch %s (no torch.compile): no marker" % torch.__version__)


def export_new(model, args, f, *, dynamo=True, opset_version=None):
    pass


def export_old(model, args, f, opset_version=None):
    pass


check(rt.exporter_options(export_new) == ({"dynamo": False}, "torchscript"),
      "torch.onnx.export with a dynamo parameter (torch >= 2.9): dynamo=False, the TorchScript exporter")
check(rt.exporter_options(export_old) == ({}, "torchscript"), "torch.onnx.export without one: no extra argument")
kw, name = rt.exporter_options(torch.onnx.export)
check(name == "torchscript" and kw in ({}, {"dynamo": False}), "this torch's exporter: %s %s" % (kw, name))

check(callable(rt.eager_quantizer()), "torch.ao.quantization.quantize_dynamic found in torch %s" % torch.__version__)
saved = sys.modules.get("torch.ao.quantization")
sys.modules["torch.ao.quantization"] = types.ModuleType("torch.ao.quantization")  # a torch without it
try:
    check(rt.eager_quantizer() is None, "a torch.ao.quantization without quantize_dynamic: None")

    class Args:
        runtime, precision, quant, task, gpus, compile = "eager", "int8", "dynamic", "infer", 1, "none"
        quant_given, channels_last, cudnn_benchmark, inference_mode, eval = False, "off", "off", "off", "on"
    try:
        mt.plan_runtime(Args(), torch, "cpu", True, [])
        check(False, "eager int8 without quantize_dynamic: Unsupported (ran on)")
    except mt.Unsupported as e:
        check("quantize_dynamic" in str(e), "eager int8 without quantize_dynamic: Unsupported (%s)" % e)
finally:
    sys.modules["torch.ao.quantization"] = saved

# ONNX Runtime: where the nodes ran, from the first run's profile
import json  # noqa: E402
import tempfile  # noqa: E402

ev = [{"cat": "Session", "name": "model_run", "args": {}},
      {"cat": "Node", "name": "conv1_kernel_time", "args": {"op_name": "Conv", "provider": "CUDAExecutionProvider"}},
      {"cat": "Node", "name": "conv1_fence_before", "args": {"op_name": "Conv", "provider": "CUDAExecutionProvider"}},
      {"cat": "Node", "name": "shape1_kernel_time", "args": {"op_name": "Shape", "provider": "CPUExecutionProvider"}},
      {"cat": "Node", "name": "q1_kernel_time", "args": {"op_name": "ConvInteger", "provider": "CPUExecutionProvider"}}]
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(ev, f)
placed = rt.node_placement(f.name)
os.unlink(f.name)
check(placed == {"CUDAExecutionProvider": {"conv1": "Conv"},
                 "CPUExecutionProvider": {"shape1": "Shape", "q1": "ConvInteger"}},
      "node_placement: one entry per node and provider (%s)" % placed)
on_cpu = rt.cpu_ops(placed, "CUDAExecutionProvider")
check(on_cpu == {"Shape": 1, "ConvInteger": 1}, "cpu_ops of a CUDA point: the nodes on the CPU provider (%s)" % on_cpu)
check([op for op in on_cpu if op in rt.HEAVY_OPS] == ["ConvInteger"],
      "a convolution on the CPU disqualifies a CUDA point, shape glue does not")
check(rt.cpu_ops(placed, "CPUExecutionProvider") == {}, "a CPU point: nothing fell back")
check(rt.node_placement("/nonexistent/profile.json") == {}, "no profile: no placement (ort_nodes=unknown)")

one = mt.Comm(torch, 0, 1, torch.device("cpu"))
check(mt.ranks_times(one, 0.5, 0.4, 0.6) == (0.5, 0.4, 0.6, 0.5), "one process: its own median and interval")
done()
