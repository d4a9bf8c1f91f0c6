"""matrix_torch_profile.py - per-op profiles for the PyTorch engine
(--profile FILE): after the timed steps (which it does not perturb),
PROFILE_STEPS more steps under torch.profiler, written in the native
engine's CSV schema (engine/profile.h):

  op,kind,calls,total_ms,mean_ms,pct_step,mem_bytes

op: the profiler's event (aten::convolution, ...); kind: cpu (self CPU
time) or, on cuda, also cuda (self CUDA kernel time), one row per event and
kind with time; calls: its count; total_ms / mean_ms: self time over the
calls, milliseconds; pct_step: share of its kind's total, percent;
mem_bytes: the memory it allocated net of what it freed (the profiler's
self memory usage; 0 when it freed more). Sorted by total time."""
import csv
import os

PROFILE_STEPS = 20
HEADER = ["op", "kind", "calls", "total_ms", "mean_ms", "pct_step", "mem_bytes"]


def _attr(e, *names):
    for n in names:
        v = getattr(e, n, None)
        if v is not None:
            return v
    return 0


def rows_of(events, device):
    """CSV rows from torch.profiler's key_averages()."""
    rows = []
    kinds = ["cpu"] + (["cuda"] if device == "cuda" else [])
    for kind in kinds:
        found = []
        for e in events:
            if kind == "cpu":
                us, mem = e.self_cpu_time_total, e.self_cpu_memory_usage
            else:
                us = _attr(e, "self_cuda_time_total", "self_device_time_total")
                mem = _attr(e, "self_cuda_memory_usage", "self_device_memory_usage")
            if us > 0:
                found.append((e.key, e.count, us / 1000.0, max(int(mem), 0)))
        total = sum(f[2] for f in found)
        for key, count, ms, mem in sorted(found, key=lambda f: -f[2]):
            rows.append([key, kind, count, "%.6g" % ms, "%.6g" % (ms / count if count else 0.0),
                         "%.4g" % (100.0 * ms / total if total > 0 else 0.0), mem])
    return rows


def write(path, rows):
    """Through a temporary file renamed into place; the directory made when missing."""
    d = os.path.dirname(path)
    if d and not os.path.isdir(d):
        os.makedirs(d, exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows)
    os.replace(tmp, path)


def run(torch, step, sync, device, path, write_file=True, steps=PROFILE_STEPS):
    """Profile steps more steps; write path (rank 0); the result's keys."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=acts, profile_memory=True) as prof:
        for _ in range(steps):
            step()
        sync()
    rows = rows_of(prof.key_averages(), device)
    if write_file:
        write(path, rows)
    cpu_ms = sum(float(r[3]) for r in rows if r[1] == "cpu")
    return {
        "profile": path,
        "profile_steps": steps,
        "profile_step_ms": "%.6g" % (cpu_ms / steps),
        "profile_timing": "torch.profiler self times (cpu%s)" % (", cuda" if device == "cuda" else ""),
    }
