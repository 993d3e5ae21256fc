#!/usr/bin/env python3
"""Writes small stand-ins for the image data sets the shipped configs read but the repository cannot
ship, in their distributed formats, so that tests can run those configs as they are:

  DIR/cifar10: data_batch_1.bin .. data_batch_5.bin and test_batch.bin, CIFAR-10's binary version
               (3073-byte records: a label byte 0..9, then 1024 red, 1024 green, 1024 blue bytes);
  DIR/emnist:  emnist-byclass-{train,test}-{images-idx3,labels-idx1}-ubyte.gz, gzipped IDX files of
               28x28 images and labels 0..61 (byclass).

usage: image_data.py DIR [CIFAR_PER_BATCH] [EMNIST_TRAIN]
The pixels are a function of (index, label), so the files are the same on every run.
"""
import gzip
import os
import struct
import sys


def pixels(n, seed):
    return bytes((i * 37 + seed * 101 + (i // 28) * 13) % 256 for i in range(n))


def write_cifar(folder, per_batch):
    os.makedirs(folder, exist_ok=True)
    names = [f"data_batch_{b}.bin" for b in range(1, 6)] + ["test_batch.bin"]
    for b, name in enumerate(names):
        with open(os.path.join(folder, name), "wb") as f:
            for i in range(per_batch):
                label = (b * per_batch + i) % 10
                f.write(bytes([label]) + pixels(3072, b * per_batch + i))


def write_idx(path, magic, dims, payload):
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload)


def write_emnist(folder, n_train, n_test=200, classes=62):
    os.makedirs(folder, exist_ok=True)
    stamps = [pixels(784, c) for c in range(classes)]  # one image per class, reused: fast, compressible
    for split, n in (("train", n_train), ("test", n_test)):
        labels = bytes(i % classes for i in range(n))
        prefix = os.path.join(folder, f"emnist-byclass-{split}")
        write_idx(prefix + "-images-idx3-ubyte.gz", 0x00000803, (n, 28, 28), b"".join(stamps[y] for y in labels))
        write_idx(prefix + "-labels-idx1-ubyte.gz", 0x00000801, (n,), labels)


if __name__ == "__main__":
    root = sys.argv[1]
    write_cifar(os.path.join(root, "cifar10"), int(sys.argv[2]) if len(sys.argv) > 2 else 40)
    write_emnist(os.path.join(root, "emnist"), int(sys.argv[3]) if len(sys.argv) > 3 else 15000)
