"""mxw.py - read and write the engine's tensor files (engine/weights.h).

Little-endian: b"MXWT", u32 version (1), u32 count, then per tensor:
u32 name length, name, u32 dtype (0 float32, 1 int32), u32 ndim,
u64 shape[ndim], data in row-major (NCHW) order.
Also the helpers the reference checks share: running the engine and
comparing tensors."""
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

MAGIC = b"MXWT"


def save(path, tensors):
    """Write a dict name -> tensor/ndarray (float32 or int32)."""
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<II", 1, len(tensors)))
        for name, t in tensors.items():
            a = t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
            dtype = 1 if a.dtype == np.int32 or a.dtype == np.int64 else 0
            a = np.ascontiguousarray(a, dtype=np.int32 if dtype else np.float32)
            nb = name.encode()
            f.write(struct.pack("<I", len(nb)) + nb + struct.pack("<II", dtype, a.ndim))
            f.write(struct.pack("<%dQ" % a.ndim, *a.shape))
            f.write(a.tobytes())


def load(path):
    """Read a file into a dict name -> torch tensor (float32 / int64)."""
    import torch  # here: load_np's users (compare_dumps.py) never pay its import (about 1 s)

    return {k: torch.from_numpy(a) for k, a in load_np(path).items()}


def load_np(path):
    """Read a file into a dict name -> numpy array (float32 / int64)."""
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != MAGIC:
        raise ValueError("%s: not a MXWT file" % path)
    ver, count = struct.unpack_from("<II", data, 4)
    assert ver == 1, ver
    off = 12
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, off)
        off += 4
        name = data[off:off + n].decode()
        off += n
        dtype, ndim = struct.unpack_from("<II", data, off)
        off += 8
        shape = struct.unpack_from("<%dQ" % ndim, data, off)
        off += 8 * ndim
        cnt = int(np.prod(shape)) if ndim else 1
        a = np.frombuffer(data, dtype=np.int32 if dtype else np.float32, count=cnt, offset=off)
        off += 4 * cnt
        a = a.reshape(shape)
        out[name] = a.astype(np.int64) if dtype else a.copy()
    return out


def engine(*args):
    """Run $MATRIX_ENGINE with args; raise with its stderr on failure."""
    exe = os.environ.get("MATRIX_ENGINE") or os.path.join(
        os.environ.get("top_builddir", "."), "engine", "matrix-engine")
    p = subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        sys.stdout.write(p.stderr)
        raise SystemExit("FAIL: matrix-engine %s exited %d" % (" ".join(map(str, args)), p.returncode))
    return p


class Checker:
    """Counts checks; prints one line per tensor and a verdict at the end."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def close(self, name, got, ref, rtol=1e-4):
        """|got - ref|_max <= rtol * max(|ref|_max, 1e-6)."""
        got = got.double().reshape(ref.shape) if got.numel() == ref.numel() else got.double()
        ref = ref.double()
        if got.shape != ref.shape:
            print("TENSOR FAIL %-40s shape %s vs %s" % (name, tuple(got.shape), tuple(ref.shape)))
            self.failed += 1
            return
        diff = (got - ref).abs().max().item() if ref.numel() else 0.0
        scale = max(ref.abs().max().item() if ref.numel() else 0.0, 1e-6)
        ok = diff <= rtol * scale
        print("TENSOR %s %-40s maxdiff = %.3e (relative %.3e)" % ("OK  " if ok else "FAIL", name, diff, diff / scale))
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def true(self, name, cond, detail=""):
        print("CHECK %s %s %s" % ("OK  " if cond else "FAIL", name, detail))
        if cond:
            self.passed += 1
        else:
            self.failed += 1

    def verdict(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 0 if self.failed == 0 and self.passed > 0 else 1


def tmpdir():
    return tempfile.mkdtemp(prefix="mxe-")
