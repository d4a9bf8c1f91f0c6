"""mkidx.py - write a small MNIST-like data set as IDX files for the tests of
--data (no download): DIR/train-images-idx3-ubyte and
DIR/train-labels-idx1-ubyte. Image i has label i % 10 and a bright 6x6
square at a place that depends on its label, over faint noise, so that a
network learns it within a few dozen steps. Options make hostile files:

  mkidx.py DIR [--n 64] [--size 28x28] [--labels N] [--gz]
               [--magic images|labels] [--truncate images|labels]
               [--extra images|labels] [--label I=V] [--huge]
"""
import argparse
import gzip
import os
import random
import struct


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--n", type=int, default=64, help="images")
    p.add_argument("--size", default="28x28", help="ROWSxCOLS")
    p.add_argument("--labels", type=int, default=None, help="labels (default: as many as images)")
    p.add_argument("--gz", action="store_true", help="write NAME.gz instead of NAME")
    p.add_argument("--magic", choices=("images", "labels"), help="a wrong magic number in this file")
    p.add_argument("--truncate", choices=("images", "labels"), help="cut the last 100 bytes (labels: 3) of this file")
    p.add_argument("--extra", choices=("images", "labels"), help="append bytes the header does not announce")
    p.add_argument("--label", default=None, help="I=V: image I gets label V")
    p.add_argument("--huge", action="store_true", help="the images header announces 2^31 x 2^16 x 2^16 bytes")
    a = p.parse_args()
    rows, cols = (int(v) for v in a.size.split("x"))
    nlab = a.n if a.labels is None else a.labels
    rnd = random.Random(7)
    pix = bytearray()
    for i in range(a.n):
        k = i % 10
        img = bytearray(rnd.randrange(0, 40) for _ in range(rows * cols))
        r0, c0 = 2 + (k // 5) * (rows // 2), 2 + (k % 5) * max(1, (cols - 8) // 5)
        for r in range(r0, min(rows, r0 + 6)):
            for c in range(c0, min(cols, c0 + 6)):
                img[r * cols + c] = 200 + rnd.randrange(0, 56)
        pix += img
    labels = bytearray(i % 10 for i in range(nlab))
    if a.label:
        i, v = (int(x) for x in a.label.split("="))
        labels[i] = v
    img_head = struct.pack(">BBBBIII", 0, 0, 8, 3, a.n, rows, cols)
    if a.huge:
        img_head = struct.pack(">BBBBIII", 0, 0, 8, 3, 1 << 31, 1 << 16, 1 << 16)
    lab_head = struct.pack(">BBBBI", 0, 0, 8, 1, nlab)
    if a.magic == "images":
        img_head = struct.pack(">BBBB", 0, 0, 8, 1) + img_head[4:]
    if a.magic == "labels":
        lab_head = struct.pack(">BBBB", 0, 0, 0x0D, 1) + lab_head[4:]
    files = {"images": bytearray(img_head + pix), "labels": bytearray(lab_head + labels)}
    if a.truncate:
        cut = 100 if a.truncate == "images" else 3
        files[a.truncate] = files[a.truncate][:-cut]
    if a.extra:
        files[a.extra] += b"\0" * 16
    os.makedirs(a.dir, exist_ok=True)
    for what, name in (("images", "train-images-idx3-ubyte"), ("labels", "train-labels-idx1-ubyte")):
        path = os.path.join(a.dir, name)
        if a.gz:
            with gzip.open(path + ".gz", "wb") as f:
                f.write(files[what])
        else:
            with open(path, "wb") as f:
                f.write(files[what])


if __name__ == "__main__":
    main()
