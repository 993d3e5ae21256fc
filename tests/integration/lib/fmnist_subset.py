#!/usr/bin/env python3
"""Writes a FashionMNIST folder whose test set is the first N images of the real one, for tests whose
runs evaluate a convolutional model on the test set: the whole set (10,000 images) costs seconds per
evaluation, and what those tests check (the loss falls, runs at 1, 2 and 4 ranks agree) holds on a
part of it. The training files are links to the real ones.

usage: fmnist_subset.py SOURCE_DIR DIR N
SOURCE_DIR holds {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]; DIR gets links to the training
files and uncompressed t10k files of N images.
"""
import gzip
import os
import struct
import sys


def open_idx(folder, stem):
    for name in (stem, stem + ".gz"):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path, (gzip.open(path, "rb") if name.endswith(".gz") else open(path, "rb"))
    sys.exit(f"fmnist_subset.py: no {stem}[.gz] in {folder}")


def write_head(src, dst, stem, n):
    """The first n records of the IDX file SRC/STEM as DST/STEM (the header's count set to n)."""
    _, f = open_idx(src, stem)
    with f:
        magic, count = struct.unpack(">II", f.read(8))
        ndim = magic & 0xFF
        dims = struct.unpack(">" + "I" * (ndim - 1), f.read(4 * (ndim - 1)))
        if n > count:
            sys.exit(f"fmnist_subset.py: {stem} holds {count} records, fewer than {n}")
        record = 1
        for d in dims:
            record *= d
        body = f.read(n * record)
    with open(os.path.join(dst, stem), "wb") as out:
        out.write(struct.pack(">II", magic, n) + struct.pack(">" + "I" * len(dims), *dims) + body)


def main():
    src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(dst, exist_ok=True)
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        path, f = open_idx(src, stem)
        f.close()
        os.symlink(os.path.abspath(path), os.path.join(dst, os.path.basename(path)))
    for stem in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        write_head(src, dst, stem, n)


if __name__ == "__main__":
    main()
