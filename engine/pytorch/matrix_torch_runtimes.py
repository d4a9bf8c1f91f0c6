"""Inference runtimes and int8 for the PyTorch engine (matrix_torch.py):
ONNX Runtime (export with torch.onnx.export, CPU / CUDA execution providers),
TensorRT through ONNX Runtime's TensorRT execution provider, dynamic int8
quantization of linear layers in eager PyTorch, dynamic and static (QDQ,
calibrated) int8 in ONNX Runtime, and the accuracy check of every such point
against eager fp32 on the same inputs.

Nothing here imports onnxruntime or onnx at module load: matrix_torch.py's plan()
asks ort_info() and turns a missing package into status=unsupported.
"""

import contextlib
import hashlib
import json
import logging
import math
import os
import tempfile
import time

# Largest allowed max_rel_err (the largest absolute difference from eager fp32
# over the largest magnitude of the eager fp32 output, on the same inputs):
#   fp32  1e-4: the same arithmetic in another order (other kernels, fused
#         BatchNorm); float32's unit roundoff is 6e-8, the models here reach
#         1e-6 (measured: 7e-7 for resnet_tiny, 4e-7 for bert_tiny in ONNX
#         Runtime); a point that silently ran TF32 or fp16 fails.
#   tf32  1e-2: 10-bit mantissa (unit roundoff 4.9e-4) in every product.
#   fp16  2e-2: 10-bit mantissa and fp16 activations rounded at every layer.
#   bf16  1e-1: 7-bit mantissa (unit roundoff 3.9e-3), rounded at every layer.
#   int8  1.5e-1: 8-bit weights (and activations) with one scale per tensor:
#         a step of 1/255 of each tensor's range per layer; measured 0.01-0.05
#         on mnist_cnn, resnet_tiny and bert_tiny (dynamic and static).
# top1_agree (the share of samples whose arg-max class is the same) is reported
# but not enforced: the weights are random, so the logits of a sample are
# nearly tied and the arg-max can flip under any rounding; max_rel_err bounds
# the error itself.
TOLERANCES = {"fp32": 1e-4, "tf32": 1e-2, "fp16": 2e-2, "bf16": 1e-1, "int8": 1.5e-1}

OPSET = 17  # the newest opset torch 1.13's exporter writes
CALIB_SAMPLES = 32  # static int8: calibration samples (at least 2 batches)


class AccuracyError(Exception):
    """A point whose outputs are outside its precision's tolerance."""


def _find(module):
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def ort_info():
    """(onnxruntime module or None, error text, available providers)."""
    import warnings
    # numpy's note that float32 subnormals read as zero: the engine flushes them (flush_denormal)
    warnings.filterwarnings("ignore", message="The value of the smallest subnormal")
    try:
        import onnxruntime as ort
    except Exception as e:  # noqa: BLE001 - any import failure is 'not installed'
        return None, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""), []
    return ort, "", list(ort.get_available_providers())


# ------------------------------------------------------------- accuracy ------

def compare(ref, out):
    """max_rel_err and top1_agree of out against ref (torch tensors [batch, classes])."""
    import torch
    ref = ref.detach().float().cpu()
    out = torch.as_tensor(out).detach().float().cpu()
    if out.shape != ref.shape:
        raise AccuracyError("output shape %s differs from eager fp32's %s" % (tuple(out.shape), tuple(ref.shape)))
    if not torch.isfinite(out).all():
        return float("inf"), float((out.argmax(1) == ref.argmax(1)).float().mean())
    scale = float(ref.abs().max())
    err = float((out - ref).abs().max()) / max(scale, 1e-30)
    agree = float((out.argmax(1) == ref.argmax(1)).float().mean())
    return err, agree


def check(res, precision, ref, out, tolerance):
    err, agree = compare(ref, out)
    res["accuracy_ref"] = "eager_fp32"
    res["max_rel_err"] = "%.3g" % err
    res["top1_agree"] = "%.4g" % agree
    res["tolerance"] = "%g" % tolerance
    if not err <= tolerance:
        raise AccuracyError("max_rel_err %.3g against eager fp32 exceeds the %s tolerance %g (top1_agree %.4g)"
                            % (err, precision, tolerance, agree))


# ------------------------------------------------------------ the cache ------

def cache_dir():
    d = os.environ.get("MATRIX_TORCH_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "matrix", "onnx")
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    return None


def weights_digest(model):
    h = hashlib.sha256()
    for k, v in model.state_dict().items():
        h.update(k.encode())
        h.update(str(v.dtype).encode())
        t = v.detach().cpu().contiguous()
        h.update((t.float() if t.is_floating_point() else t).numpy().tobytes())
    return h.hexdigest()


def cached(dirpath, key, suffix, build):
    """The file for key (a dict) in the cache, built with build(path) when absent.
    Returns (path, hit)."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    path = os.path.join(dirpath, "%s.%s" % (digest, suffix))
    if os.path.exists(path):
        return path, True
    fd, tmp = tempfile.mkstemp(prefix=".tmp.", suffix="." + suffix, dir=dirpath)
    os.close(fd)
    try:
        build(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path, False


# --------------------------------------------------------- eager int8 --------

def eager_quantizer():
    """torch.ao.quantization.quantize_dynamic, or None where this torch has no
    such function: it is deprecated since torch 2.9 (DeprecationWarning: "will
    be removed", its successor is torchao), and a torch without it is an
    unsupported point (plan_runtime), not an AttributeError in the middle of
    one."""
    try:
        import importlib
        return getattr(importlib.import_module("torch.ao.quantization"), "quantize_dynamic", None)
    except Exception:  # noqa: BLE001 - any import failure is 'not there'
        return None


def eager_int8(torch, model, res):
    """Dynamic int8 quantization of every nn.Linear (weights int8 per tensor,
    activations quantized per batch at run time), on the cpu."""
    import torch.nn as nn
    if torch.backends.quantized.engine == "none":  # else torch's own choice (x86/fbgemm, onednn, qnnpack)
        torch.backends.quantized.engine = [e for e in torch.backends.quantized.supported_engines if e != "none"][0]
    q = eager_quantizer()(model, {nn.Linear}, dtype=torch.qint8)
    res["quantized_engine"] = torch.backends.quantized.engine
    res["quantized_modules"] = sum(1 for m in q.modules() if type(m).__module__.startswith("torch.ao.nn.quantized")
                                   or type(m).__module__.startswith("torch.nn.quantized"))
    return q


# ---------------------------------------------------------- onnxruntime ------

def _export_module(torch, model, bert):
    if not bert:
        return model

    class Bert2(torch.nn.Module):  # the engine's BERT takes one (ids, types, masked positions) tuple
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids, types, masked):
            return self.m((ids, types, masked))
    return Bert2(model)


def exporter_options(export):
    """(keyword arguments, exporter name) for torch.onnx.export: the
    TorchScript exporter everywhere. torch >= 2.9 defaults to dynamo=True, the
    torch.export-based exporter, which needs the onnxscript package (without
    it every export fails), writes opset 18 or newer and another graph than
    torch < 2.9 exports: the same model would be another ONNX graph, and a
    runtime's speed-up another thing, from one torch version to the next."""
    import inspect
    try:
        params = inspect.signature(export).parameters
    except (TypeError, ValueError):
        params = {}
    if "dynamo" in params:
        return {"dynamo": False}, "torchscript"
    return {}, "torchscript"


def ort_session(args, torch, model, x, dev, res, make_calib, unsupported):
    """Export model (eval, fp32, or fp16 for fp16 on cuda), quantize it when
    precision is int8, and open an ONNX Runtime session on the provider the
    point asks for. Returns (run, first_output): run() runs one forward on the
    point's inputs; first_output is the output of the first run (the accuracy
    check's). Times: export_s, quantize_s, session_s, prepare_s."""
    import numpy as np
    import onnxruntime as ort
    t_prep = time.perf_counter()
    res["onnxruntime_version"] = ort.__version__
    bert = isinstance(x, tuple)
    tensors = list(x) if bert else [x]
    names = ["input_ids", "token_type_ids", "mlm_positions"] if bert else ["input"]
    precision, runtime = args.precision, args.runtime
    cuda = dev.type == "cuda"
    if runtime == "tensorrt":
        provider = "TensorrtExecutionProvider"
        try:  # the TensorRT the provider loads (the tensorrt package), recorded as ORT's is
            import tensorrt
            res["tensorrt_version"] = tensorrt.__version__
        except Exception as e:  # the provider may find libnvinfer without the Python package
            res["tensorrt_version"] = "unknown (%s)" % type(e).__name__
    else:
        provider = "CUDAExecutionProvider" if cuda else "CPUExecutionProvider"

    export_fp16 = precision == "fp16" and runtime == "onnxruntime"  # TensorRT: fp32 graph + trt_fp16_enable
    emodel = model
    if export_fp16:
        import copy
        emodel = copy.deepcopy(model).half()
        tensors = [t.half() if t.is_floating_point() else t for t in tensors]
    emodel = _export_module(torch, emodel, bert).eval()

    d = cache_dir()
    tmpdir = None
    if d is None:
        tmpdir = tempfile.TemporaryDirectory(prefix="matrix_torch_onnx.")
        d = tmpdir.name
    res["onnx_cache"] = d if tmpdir is None else "off"
    try:
        onnx_version = None
        with contextlib.suppress(Exception):
            import onnx
            onnx_version = onnx.__version__
        if onnx_version:
            res["onnx_version"] = onnx_version
        kw, res["onnx_exporter"] = exporter_options(torch.onnx.export)
        key = {
            "model": args.model, "shapes": [list(t.shape) for t in tensors], "dtypes": [str(t.dtype) for t in tensors],
            "exporter": res["onnx_exporter"], "opset": OPSET, "torch": torch.__version__, "weights": weights_digest(emodel),
            "device": dev.type,
        }

        def export(path):
            with torch.no_grad():
                torch.onnx.export(emodel, tuple(tensors), path, input_names=names, output_names=["logits"],
                                  opset_version=OPSET, do_constant_folding=True, **kw)
        t0 = time.perf_counter()
        path, hit = cached(d, key, "onnx", export)
        res["export_s"] = "%.3f" % (time.perf_counter() - t0)
        res["export_cached"] = int(hit)
        res["opset"] = OPSET

        if precision == "int8":
            from onnxruntime import quantization as q
            qkey = dict(key, quant=args.quant, onnxruntime=ort.__version__, onnx=onnx_version, runtime=runtime)
            t0 = time.perf_counter()
            logger = logging.getLogger()
            level = logger.level
            logger.setLevel(logging.ERROR)  # the quantizer's advice on pre-processing
            try:
                if args.quant == "dynamic":
                    def build(out):
                        q.quantize_dynamic(path, out, weight_type=q.QuantType.QInt8)
                else:
                    calib = make_calib()
                    qkey["calib"] = [CALIB_SAMPLES, args.seed]
                    res["calib_batches"] = len(calib)
                    res["calib_method"] = "minmax"

                    class Reader(q.CalibrationDataReader):
                        def __init__(self):
                            self.it = iter([{n: t.detach().cpu().numpy() for n, t in zip(names, b)} for b in calib])

                        def get_next(self):
                            return next(self.it, None)

                    def build(out):
                        extra = {"ActivationSymmetric": True, "WeightSymmetric": True} if runtime == "tensorrt" else {}
                        q.quantize_static(path, out, Reader(), quant_format=q.QuantFormat.QDQ,
                                          activation_type=q.QuantType.QInt8, weight_type=q.QuantType.QInt8,
                                          calibrate_method=q.CalibrationMethod.MinMax, extra_options=extra)
                path, qhit = cached(d, qkey, "int8-%s.onnx" % args.quant, build)
            finally:
                logger.setLevel(level)
            res["quantize_s"] = "%.3f" % (time.perf_counter() - t0)
            res["quantize_cached"] = int(qhit)
            res["int8_nodes"] = int8_nodes(path)

        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.inter_op_num_threads = 1
        if args.threads > 0:
            so.intra_op_num_threads = args.threads
        so.log_severity_level = 3
        # the first run is profiled: which execution provider ran each node
        # (ort_nodes); get_providers() lists the providers registered, and a
        # node that the CUDA or TensorRT provider cannot take runs on the CPU
        # provider without a word
        prof_dir = tempfile.mkdtemp(prefix="matrix_torch_ort_prof.")
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(prof_dir, "ort")
        if provider == "TensorrtExecutionProvider":
            trt_cache = os.path.join(d, "trt")
            os.makedirs(trt_cache, exist_ok=True)
            providers = [("TensorrtExecutionProvider", {
                "device_id": dev.index or 0,
                "trt_fp16_enable": precision == "fp16",
                "trt_engine_cache_enable": True,
                "trt_engine_cache_path": trt_cache,
            }), ("CUDAExecutionProvider", {"device_id": dev.index or 0})]
        elif provider == "CUDAExecutionProvider":
            providers = [("CUDAExecutionProvider", {"device_id": dev.index or 0})]
        else:
            providers = ["CPUExecutionProvider"]
        t0 = time.perf_counter()
        sess = ort.InferenceSession(path, so, providers=providers)
        res["session_s"] = "%.3f" % (time.perf_counter() - t0)
        used = sess.get_providers()
        res["ort_providers"] = "+".join(p.replace("ExecutionProvider", "") for p in used)
        if not used or used[0] != provider:
            raise unsupported("onnxruntime %s could not start the %s (it runs on %s)" % (ort.__version__, provider, ", ".join(used)))
        res["ort_provider"] = provider.replace("ExecutionProvider", "")
        res["ort_threads"] = args.threads if args.threads > 0 else "default"

        if cuda:
            torch.cuda.synchronize(dev)
            binding = sess.io_binding()
            for n, t in zip(names, tensors):
                t = t.contiguous()
                binding.bind_input(n, "cuda", dev.index or 0, _np_dtype(np, t.dtype), list(t.shape), t.data_ptr())
            onode = sess.get_outputs()[0]
            odtype = torch.float16 if onode.type == "tensor(float16)" else torch.float32
            oshape = [t.shape[0] for t in tensors[:1]] + [int(s) for s in onode.shape[1:]]
            out = torch.empty(oshape, dtype=odtype, device=dev)
            binding.bind_output(onode.name, "cuda", dev.index or 0, _np_dtype(np, odtype), oshape, out.data_ptr())
            keep = tensors  # the bound buffers must outlive the session's runs

            def run():
                sess.run_with_iobinding(binding)
                return out
            run.keep = keep
        else:
            feed = {n: t.detach().cpu().numpy() for n, t in zip(names, tensors)}

            def run():
                return sess.run(None, feed)[0]
        first = run()
        if cuda:
            torch.cuda.synchronize(dev)
            first = first.clone()
        try:
            placed = node_placement(sess.end_profiling())  # profiling ends here: the timed runs are not profiled
        finally:
            import shutil
            shutil.rmtree(prof_dir, ignore_errors=True)
        res["ort_nodes"] = "+".join("%s:%d" % (short(p), len(n)) for p, n in sorted(placed.items())) or "unknown"
        on_cpu = cpu_ops(placed, provider)
        if on_cpu:
            res["ort_cpu_ops"] = ",".join("%s:%d" % kv for kv in sorted(on_cpu.items()))
        heavy = {op: n for op, n in on_cpu.items() if op in HEAVY_OPS}
        if heavy:
            raise unsupported("onnxruntime %s runs %d compute node(s) of this graph on the CPU execution provider, "
                              "not on the %s (%s): a CPU number under a %s label"
                              % (ort.__version__, sum(heavy.values()), provider,
                                 ",".join("%s:%d" % kv for kv in sorted(heavy.items())), dev.type))
        res["prepare_s"] = "%.3f" % (time.perf_counter() - t_prep)
        run.session = sess
        return run, torch.as_tensor(first)
    finally:
        if tmpdir is not None:
            # the session has read the file; the directory may go
            with contextlib.suppress(Exception):
                tmpdir.cleanup()


# ops whose work is the graph's: one of them on the CPU provider in a cuda
# point means the point's time is partly CPU time (shape arithmetic, casts and
# small glue the CUDA provider leaves to the CPU on purpose are not in it)
# (elementwise ops are left out: an int64 Add or Mul may be shape arithmetic)
HEAVY_OPS = ("Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "MatMul", "MatMulInteger", "QLinearMatMul",
             "Gemm", "QGemm", "FusedConv", "FusedGemm", "FusedMatMul", "DynamicQuantizeMatMul", "Attention",
             "QAttention", "MultiHeadAttention", "BatchNormalization", "LayerNormalization",
             "SkipLayerNormalization", "EmbedLayerNormalization", "DynamicQuantizeLinear", "QuantizeLinear",
             "DequantizeLinear", "MaxPool", "AveragePool", "GlobalAveragePool", "Softmax", "Gelu", "BiasGelu",
             "FastGelu", "Erf")


def short(provider):
    return provider.replace("ExecutionProvider", "")


def node_placement(profile_path):
    """{provider: {node name: op type}} from an ONNX Runtime profile (its
    'Node' events name the node, its op and the provider that ran it)."""
    placed = {}
    try:
        with open(profile_path) as f:
            events = json.load(f)
    except (OSError, ValueError):
        return placed
    for e in events if isinstance(events, list) else []:
        a = e.get("args") or {}
        if e.get("cat") != "Node" or "provider" not in a:
            continue
        name = e.get("name", "")
        for suffix in ("_kernel_time", "_fence_before", "_fence_after"):
            if name.endswith(suffix):
                name = name[:-len(suffix)]
        placed.setdefault(a["provider"], {})[name] = a.get("op_name", "?")
    return placed


def cpu_ops(placed, provider):
    """{op type: count} of the nodes that ran on the CPU provider of a point
    that asked for another provider; {} when none did (or it asked for the
    CPU)."""
    if provider == "CPUExecutionProvider":
        return {}
    out = {}
    for op in placed.get("CPUExecutionProvider", {}).values():
        out[op] = out.get(op, 0) + 1
    return out


def GraphModule(torch, run, use_sdpa):
    """An nn.Module whose forward runs the ONNX Runtime session (its input is
    bound already): the engine's inference step calls it like the eager model."""

    class Graph(torch.nn.Module):
        def forward(self, _x):
            return torch.as_tensor(run())
    g = Graph()
    g.use_sdpa = use_sdpa
    return g.eval()


def _np_dtype(np, dtype):
    import torch
    return {torch.float32: np.float32, torch.float16: np.float16, torch.int64: np.int64, torch.int32: np.int32}[dtype]


def int8_nodes(path):
    """Nodes of an ONNX file that compute or convert int8 (quantized ops)."""
    try:
        import onnx
        m = onnx.load(path, load_external_data=False)
    except Exception:  # noqa: BLE001
        return "unknown"
    ops = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger",
           "QLinearConv", "QLinearMatMul", "DynamicQuantizeMatMul", "QGemm", "QAttention")
    return sum(1 for n in m.graph.node if n.op_type in ops)


def calibration_batches(models, name, batch, seq_len, dev, seed, torch):
    """Static int8: CALIB_SAMPLES generated inputs (at least 2 batches of the
    point's batch, the point's shape), from another seed than the timed inputs."""
    n = max(2, int(math.ceil(CALIB_SAMPLES / float(batch))))
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed * 7919 + 17)
    out = []
    for _ in range(n):
        x, _ = models.make_inputs(name, batch, seq_len, dev, gen)
        out.append(list(x) if isinstance(x, tuple) else [x])
    return out
