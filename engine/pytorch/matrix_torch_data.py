"""matrix_torch_data.py - real input data for the PyTorch engine (--data DIR):
MNIST's IDX files read with the standard library (plain or .gz; no
torchvision download), checked as the native engine checks them
(engine/data.c), and a loader whose every batch is made inside the timed
step: the next batch of the epoch's shuffled order (torch.randperm, seeded
per epoch), uint8 to float, (x / 255 - 0.1307) / 0.3081, labels to int64,
copied to the device - what a DataLoader with num_workers=0 over
torchvision's MNIST with ToTensor and Normalize does, without PIL. The last
partial batch of an epoch is dropped."""
import gzip
import os
import struct
import time

IMAGES = "train-images-idx3-ubyte"
LABELS = "train-labels-idx1-ubyte"
MEAN, STD = 0.1307, 0.3081
MAX_BYTES = 1 << 34  # most data an IDX file may announce (MNIST's images: 47 MB)


class DataError(Exception):
    """A data file that is missing or malformed (exit 2)."""


def _open(directory, base):
    plain = os.path.join(directory, base)
    for path, opener in ((plain, open), (plain + ".gz", gzip.open)):
        if os.path.lexists(path):
            if not os.path.isfile(path):
                raise DataError("'%s': not a regular file" % path)
            return path, opener
    raise DataError("'%s' not found (nor '%s.gz'): MNIST's training %s are expected there"
                    % (plain, base, "images" if base == IMAGES else "labels"))


def _read(path, opener):
    try:
        with opener(path, "rb") as f:
            return f.read()
    except (OSError, EOFError) as e:  # gzip: not a gzip file, truncated stream
        raise DataError("'%s': %s" % (path, e)) from None


def read_idx(directory, base, ndim):
    """(path, dims, data bytes) of DIRECTORY/BASE[.gz], an IDX file of unsigned
    bytes with ndim dimensions; DataError naming the file and what was expected."""
    path, opener = _open(directory, base)
    raw = _read(path, opener)
    magic = bytes(raw[:4]).ljust(4, b"\0")
    if len(raw) < 4 or magic[:3] != b"\0\0\x08" or magic[3] != ndim:
        raise DataError("'%s': not an IDX file of unsigned bytes with %d dimension%s (magic %s, expected 00 00 08 %02x)"
                        % (path, ndim, "s" if ndim > 1 else "", " ".join("%02x" % b for b in magic), ndim))
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise DataError("'%s': truncated: the header ends after %d bytes, %d expected" % (path, len(raw), head))
    dims = struct.unpack(">%dI" % ndim, raw[4:head])
    total = 1
    for i, d in enumerate(dims):
        total *= max(d, 1)
        if total > MAX_BYTES:
            raise DataError("'%s': the header announces more than %d bytes of data (dimension %d is %d): not an MNIST file"
                            % (path, MAX_BYTES, i + 1, d))
    for i, d in enumerate(dims):
        if d == 0:
            what = "labels" if ndim == 1 else "images" if i == 0 else "pixels"
            raise DataError("'%s': dimension %d is 0: the file holds no %s" % (path, i + 1, what))
    have = len(raw) - head
    if have < total:
        raise DataError("'%s': truncated: the header announces %d bytes of data, the file has %d" % (path, total, have))
    if have > total:
        raise DataError("'%s': %d bytes after the %d bytes of data its header announces" % (path, have - total, total))
    return path, dims, memoryview(raw)[head:]


class Mnist:
    """The checked files: images (n, rows, cols) and labels (n), as bytes."""

    def __init__(self, directory):
        t0 = time.perf_counter()
        if not os.path.isdir(directory):
            why = "not a directory" if os.path.exists(directory) else "No such file or directory"
            raise DataError("'%s': %s (a directory with MNIST's %s and %s is expected)" % (directory, why, IMAGES, LABELS))
        self.images_path, idims, self.pixels = read_idx(directory, IMAGES, 3)
        self.labels_path, ldims, self.labels = read_idx(directory, LABELS, 1)
        if ldims[0] != idims[0]:
            raise DataError("'%s': %d labels for the %d images of '%s'" % (self.labels_path, ldims[0], idims[0], self.images_path))
        self.n, self.rows, self.cols = idims
        self.load_s = time.perf_counter() - t0

    def check_model(self, model, classes=10, size=(28, 28)):
        """DataError for images of another size or a label out of the classes."""
        if (self.rows, self.cols) != size:
            raise DataError("'%s': images of %dx%d pixels; model %s takes %dx%d"
                            % (self.images_path, self.rows, self.cols, model, size[0], size[1]))
        for i, v in enumerate(self.labels):
            if v >= classes:
                raise DataError("'%s': label %d of image %d is not a class of model %s (0 to %d)"
                                % (self.labels_path, v, i, model, classes - 1))


class Loader:
    """Batches of one rank (rows [rank * batch, (rank + 1) * batch) of each
    global batch), made on demand by next()."""

    def __init__(self, torch, data, batch, rank, world, seed, device, channels_last):
        self.torch, self.batch, self.rank, self.world = torch, batch, rank, world
        self.seed, self.device, self.channels_last = seed, device, channels_last
        self.images = torch.frombuffer(bytearray(data.pixels), dtype=torch.uint8).view(data.n, data.rows, data.cols)
        self.labels = torch.frombuffer(bytearray(data.labels), dtype=torch.uint8)
        self.n = data.n
        self.epoch_steps = data.n // (batch * world)
        self.dropped = data.n - self.epoch_steps * batch * world
        self.epoch = 0
        self.next_step = self.epoch_steps  # the first next() starts epoch 1
        self.batches = 0
        self.order = None

    def next(self):
        torch = self.torch
        if self.next_step == self.epoch_steps:
            self.epoch += 1
            self.next_step = 0
            g = torch.Generator()
            g.manual_seed(self.seed * 1000003 + self.epoch)
            self.order = torch.randperm(self.n, generator=g)
        start = (self.next_step * self.world + self.rank) * self.batch
        idx = self.order[start:start + self.batch]
        x = self.images[idx].unsqueeze(1).float().div_(255.0).sub_(MEAN).div_(STD)
        y = self.labels[idx].long()
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        self.next_step += 1
        self.batches += 1
        return x.to(self.device), y.to(self.device)


def record(data, loader, step_s):
    """The result keys of --data (the native engine's names)."""
    return {
        "data_images_file": data.images_path,
        "data_labels_file": data.labels_path,
        "data_images": data.n,
        "data_image_size": "%dx%d" % (data.rows, data.cols),
        "data_load_s": "%.6g" % data.load_s,
        # the native engine's key: cpu none (no copy); on cuda this engine copies
        # from pageable memory inside the step, where the native engine's
        # default (pinned) makes the next batch and copies it on a second
        # stream while a step runs (MATRIX_ENGINE_DATA_UPLOAD=pageable there is
        # what runs here)
        "data_upload": "pageable" if loader.device.type == "cuda" else "none",
        "data_pipeline": "in the timed step: shuffled order, uint8 to f32, (x/255-%g)/%g, batch, copy to device" % (MEAN, STD),
        "data_batches": loader.batches,
        "data_epochs_started": loader.epoch,
        "epoch_steps": loader.epoch_steps,
        "epoch_dropped_images": loader.dropped,
        "epoch_s": "%.6g" % (loader.epoch_steps * step_s[0]),
        "epoch_s_lo": "%.6g" % (loader.epoch_steps * step_s[1]),
        "epoch_s_hi": "%.6g" % (loader.epoch_steps * step_s[2]),
    }


_LOADED = {}


def load(directory):
    """Mnist(directory), read once per process."""
    if directory not in _LOADED:
        _LOADED[directory] = Mnist(directory)
    return _LOADED[directory]
