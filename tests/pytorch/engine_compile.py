#!/usr/bin/env python3
"""--compile: with torch < 2 every mode is unsupported with the reason
"torch.compile needs torch >= 2.0, found X"; with torch >= 2 a compiled training
point runs for real on the CPU (inductor: forward and backward graphs) and
records a compiled module. engine_compile_modes.py runs the other modes."""
from enginetest import check, done, run, torch_version

version, (major, minor) = torch_version()
if major < 2:
    for mode in ("default", "reduce-overhead", "max-autotune"):
        r = run(["--model", "mnist_cnn", "--task", "infer", "--compile", mode])
        check(r.rc == 3 and r["status"] == "unsupported", "torch %s, compile %s: exit 3 unsupported (%s)" % (version, mode, r.describe()))
        check(r["reason"] == "torch.compile needs torch >= 2.0, found %s" % version, "reason: %s" % r["reason"])
    r = run(["--model", "mnist_cnn", "--task", "infer", "--compile", "none"])
    check(r.rc == 0 and r["compiled"] == "0", "compile none runs eagerly (compiled=0)")
else:
    args = ["--model", "mnist_cnn", "--task", "train", "--batch", "8", "--compile", "default"]
    r = run(args + ["--warmup", "0.1s", "--steps", "5"], timeout=300)
    what = " ".join(args)
    check(r.rc == 0 and r["status"] == "ok", "%s: ok (%s %s)" % (what, r.describe(), r["reason"] or ""))
    check(r["compiled"] == "1" and r["model_class"] == "OptimizedModule", "%s: compiled=1, model_class %s" % (what, r["model_class"]))
    check(int(r["dynamo_graphs"] or 0) >= 1, "%s: dynamo compiled %s graph(s)" % (what, r["dynamo_graphs"]))
    check(int(r["warmup_steps"] or 0) >= 3, "%s: a time warm-up takes at least 3 steps when compiling (%s)" % (what, r["warmup_steps"]))
    check(float(r["first_step_s"]) > 2 * float(r["step_ms"]) / 1e3, "%s: the first step (compilation) is the slow one" % what)
done()
