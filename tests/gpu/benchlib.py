"""benchlib.py - what the GPU benchmarks that measure our engine and PyTorch
in the same run share (tests/gpu/bench_convnets.sh, tests/gpu/bench_bert.sh):
one point per process, in its own process group,
cut short after a time limit; its result file read back; the best of several
settings; the versions of the machine; a table written between two markers
of a file.

A point's result is the engine's key=value result file as a dict, plus:
  _status  ok, unsupported, oom, failed, timeout (cut short) or skipped
           (not started: too little of the budget left)
  _why     what went wrong, for the table (every status but ok)
  _cmd     the command line; _secs the wall time of the process
"""
import os
import signal
import subprocess
import time


def read_result(path):
    """The key=value lines of a result file; {} when it cannot be read."""
    res = {}
    try:
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    res[k] = v
    except OSError:
        pass
    return res


def num(res, key):
    """res[key] as a float, None when absent or not a number."""
    try:
        return float(res[key])
    except (KeyError, TypeError, ValueError):
        return None


def best(results, key, lower):
    """(setting, result) of the best ok result of [(setting, result)] by key
    (lower: smaller is better), or (None, None)."""
    ok = [(s, r) for s, r in results if r["_status"] == "ok" and num(r, key) is not None]
    if not ok:
        return None, None
    return (min if lower else max)(ok, key=lambda sr: num(sr[1], key))


class Points:
    """Runs points one at a time within a budget of seconds.

    commands: {"ours": [argv...], "torch": [argv...]}, the engine's command
    before the point's flags; measure: flags every point gets first;
    min_start: a point with less time than this left is not started."""

    def __init__(self, commands, outdir, measure, budget_s, min_start=20.0):
        self.commands = commands
        self.outdir = outdir
        self.measure = measure
        self.budget = budget_s
        self.min_start = min_start
        self.t0 = time.time()

    def left(self):
        return self.budget - (time.time() - self.t0)

    def run(self, engine, name, args, timeout):
        """One point: engine (a key of commands), name (files NAME.result and
        NAME.log in outdir), args, a time limit in seconds."""
        path = os.path.join(self.outdir, "%s.%s.result" % (engine, name))
        log = os.path.join(self.outdir, "%s.%s.log" % (engine, name))
        cmd = self.commands[engine] + self.measure + args + ["--result", path]
        if timeout < self.min_start:
            why = "not run: %.0f s of the %.0f s budget left" % (max(self.left(), 0), self.budget)
            print("  %-5s %-34s %s" % (engine, name, why), flush=True)
            return {"_status": "skipped", "_why": why, "_cmd": cmd}
        if os.path.exists(path):
            os.unlink(path)
        t = time.time()
        with open(log, "w") as f:
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGTERM)  # torch.compile's workers too
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
                rc = None
        secs = time.time() - t
        res = read_result(path)
        res["_cmd"] = cmd
        res["_secs"] = secs
        if rc is None:
            res["_status"], res["_why"] = "timeout", "cut short after %.0f s" % secs
        elif rc == 0 and res.get("status") == "ok":
            res["_status"] = "ok"
        else:
            res["_status"] = res.get("status") if res.get("status") in ("unsupported", "oom") else "failed"
            res["_why"] = "%s (exit %s): %s" % (res["_status"], rc, res.get("reason") or "see " + log)
        if res["_status"] == "ok":
            print("  %-5s %-34s %12s samples/s  step %9s ms  startup %6s s  peak %s bytes  (%.0f s)" % (
                engine, name, res.get("throughput"), res.get("step_ms"), res.get("startup_s"), res.get("peak_mem_bytes"),
                secs), flush=True)
        else:
            print("  %-5s %-34s %s" % (engine, name, res["_why"]), flush=True)
        return res


def versions(py, probe):
    """Lines naming the GPU (nvidia-smi), PyTorch (py) and our libraries
    (probe: a result dict of ours)."""
    lines = []
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        lines.append("GPU (nvidia-smi): %s" % (q.stdout.strip().replace("\n", "; ") or q.stderr.strip()))
    except (OSError, subprocess.SubprocessError) as e:
        lines.append("GPU (nvidia-smi): unavailable (%s)" % e)
    try:
        q = subprocess.run([py, "-c", "import torch; print('PyTorch %s, CUDA %s, cuDNN %s, %s' % (torch.__version__, "
                            "torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.get_device_name(0) "
                            "if torch.cuda.is_available() else 'no CUDA device'))"],
                           capture_output=True, text=True, timeout=120)
        lines.append(q.stdout.strip() or "PyTorch: %s" % q.stderr.strip().splitlines()[-1:])
    except (OSError, subprocess.SubprocessError) as e:
        lines.append("PyTorch: unavailable (%s)" % e)
    lines.append("ours: %s" % ", ".join("%s %s" % (k, probe[k]) for k in (
        "gpu", "driver", "cuda_runtime", "cudnn", "cublaslt", "cpu", "engine_version") if k in probe))
    return lines


def write_marked(path, text, begin, end):
    """text into the file at path: between the lines begin and end when the
    file has them in that order, else as the whole file (atomically)."""
    old = None
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        pass
    if old and begin in old and end in old and old.index(begin) < old.index(end):
        new = old[:old.index(begin) + len(begin)] + "\n" + text + old[old.index(end):]
    else:
        new = text
    with open(path + ".tmp", "w") as f:
        f.write(new)
    os.replace(path + ".tmp", path)
