#!/usr/bin/python3
"""Draws the Dirichlet label-skew partition stored beside this script (see README.md here).

    /usr/bin/python3 data/partitions/draw_partition.py --out FILE.npy
        [--labels /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz]
        [--clients 10] [--alpha 0.5] [--seed 0]

The procedure follows the per-class Dirichlet split of the PLayer-FL authors' code
(github.com/gaiters-aerials/player_fl, `_split_by_dirichlet`), without its truncation of the data
set and with a shuffle of each class, on NumPy's default generator (PCG64):

    rng = numpy.random.default_rng(seed)
    for each class c = 0, 1, ... in increasing order:
        idx = the training-set positions of class c, ascending
        rng.shuffle(idx)
        q = rng.dirichlet([alpha] * clients)
        cut idx at floor(cumsum(q)[:-1] * len(idx)); piece k goes to client k

There is no resampling for a minimum client size. The result is one client id per training sample,
in the order of the training file, written as a uint8 .npy (fedsilo: partition.scheme = file).
fedsilo cannot redraw it itself (its own `dirichlet` scheme uses fedsilo's counter-based streams,
not NumPy's PCG64), hence the stored file. Needs only Debian's python3-numpy.
"""
import argparse
import gzip
import sys

import numpy as np

DEFAULT_LABELS = "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz"


def read_idx_labels(path):
    """Labels of an IDX1 file (gzip or plain): magic 0x00000801, a big-endian count, one byte each."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8 or int.from_bytes(raw[0:4], "big") != 0x801:
        sys.exit(f"draw_partition.py: {path} is not an IDX1 label file")
    n = int.from_bytes(raw[4:8], "big")
    labels = np.frombuffer(raw, dtype=np.uint8, offset=8)
    if labels.size != n:
        sys.exit(f"draw_partition.py: {path} declares {n} labels but holds {labels.size}")
    return labels


def dirichlet_partition(labels, clients, alpha, seed):
    """Client id (uint8) of every sample; see the module docstring for the procedure."""
    if not 1 <= clients <= 255:
        raise ValueError(f"clients must be in [1, 255] (uint8 ids), got {clients}")
    rng = np.random.default_rng(seed)
    owner = np.empty(len(labels), dtype=np.uint8)
    for c in range(int(labels.max()) + 1):
        idx = np.nonzero(labels == c)[0]
        rng.shuffle(idx)
        q = rng.dirichlet(np.full(clients, alpha))
        cuts = (np.cumsum(q) * len(idx)).astype(np.int64)[:-1]
        for k, piece in enumerate(np.split(idx, cuts)):
            owner[piece] = k
    return owner


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the .npy file to write")
    p.add_argument("--labels", default=DEFAULT_LABELS, help="IDX1 training labels (default: Debian's FashionMNIST)")
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--alpha", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    owner = dirichlet_partition(read_idx_labels(a.labels), a.clients, a.alpha, a.seed)
    np.save(a.out, owner)
    print(f"{a.out}: {owner.size} client ids; client sizes {np.bincount(owner, minlength=a.clients).tolist()}")


if __name__ == "__main__":
    main()
