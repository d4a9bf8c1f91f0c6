"""Helpers for the PyTorch engine's tests: run engine/pytorch/matrix_torch.py
as the runner would (a fresh process per point, --result FILE) and read back the
key=value result. Environment: top_srcdir (source tree), PYTHON_TORCH (the
interpreter that imports torch; default: this one)."""

import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("top_srcdir") or os.path.dirname(os.path.dirname(HERE))
ENGINE = os.path.join(SRCDIR, "engine", "pytorch", "matrix_torch.py")
PYTHON = os.environ.get("PYTHON_TORCH") or sys.executable

# quick settings for CPU tests: a step of warm-up, short timing
QUICK = ["--device", "cpu", "--threads", "1", "--warmup", "1", "--min-time", "0.2s", "--max-time", "1s"]

failures = []


def check(cond, what):
    if cond:
        print("ok   - %s" % what)
    else:
        print("FAIL - %s" % what)
        failures.append(what)
    return cond


def read_result(path):
    res = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            if "=" not in line:
                raise AssertionError("%s:%d: no '=' in %r" % (path, n, line))
            k, v = line.split("=", 1)
            if k in res:
                raise AssertionError("%s:%d: key %s twice" % (path, n, k))
            res[k] = v
    return res


class Run:
    def __init__(self, args, rc, res, out, err):
        self.args, self.rc, self.res, self.out, self.err = args, rc, res, out, err

    def __getitem__(self, k):
        return self.res.get(k)

    def describe(self):
        return "%s -> rc %d %s" % (" ".join(self.args), self.rc, self.res.get("status"))


def run(args, timeout=120, quick=True):
    """Run the engine with args (+ QUICK unless quick=False) and --result in a
    fresh directory; returns a Run. The result directory must hold nothing but
    the result file afterwards (atomic write: no temporary left behind)."""
    d = tempfile.mkdtemp(prefix="pytorch-test.")
    path = os.path.join(d, "result.txt")
    argv = (QUICK if quick else []) + list(args) + ["--result", path]  # args override QUICK
    p = subprocess.run([PYTHON, ENGINE] + argv, capture_output=True, text=True, timeout=timeout)
    res = read_result(path) if os.path.exists(path) else {}
    left = sorted(set(os.listdir(d)) - {"result.txt"})
    if left:
        raise AssertionError("temporary files left beside the result: %s" % left)
    if p.returncode not in (0, 2, 3):
        sys.stderr.write(p.stderr[-3000:])
    return Run(list(args), p.returncode, res, p.stdout, p.stderr)


def run_many(arglists, jobs=2, **kw):
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(lambda a: run(a, **kw), arglists))


def torch_version():
    out = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    v = out.stdout.strip()
    major, minor = (int(x) for x in v.split("+")[0].split(".")[:2])
    return v, (major, minor)


def huge_alloc_fails():
    """Whether a 600 GB allocation fails at once here (heuristic or strict
    overcommit) instead of succeeding and bringing the OOM killer later."""
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() != "1"
    except OSError:
        return False


def done():
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")
    sys.exit(0)
