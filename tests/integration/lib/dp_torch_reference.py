#!/usr/bin/python3
"""PyTorch's per-sample gradients against fedsilo's DP-SGD norms and clipped sum (test_dp_torch.sh).

  dp_torch_reference.py DIR      DIR written by fedsilo_dp_norms (tests/support/dp_norms_main.cpp)

Builds the preset in PyTorch (float64), loads fedsilo's parameters tensor by tensor (fedsilo stores each
in PyTorch's layout: Linear/Conv2d weight [out][in...], LSTM w_ih/w_hh [4H][in] with gates i, f, g, o,
then b_ih, b_hh), and forms every sample's gradient by one backward pass on that sample alone (Debian's
python3-torch has no functorch and no Opacus). Checks ||g_i|| against fedsilo's norms and
sum_i min(1, C / ||g_i||) g_i against fedsilo's clipped sum, both to 1e-4 relative (fedsilo computes in
float). Exit 1 on a mismatch, 2 on a file that does not fit the preset.
"""
import sys

import numpy as np
import torch
from torch import nn


class CnnMcMahan(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(64 * 7 * 7, 512)
        self.fc2 = nn.Linear(512, classes)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv1(x.view(-1, 1, 28, 28))), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


class Lstm(nn.Module):
    def __init__(self, vocab, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, 64, num_layers=2, batch_first=True)
        self.fc1 = nn.Linear(64, classes)

    def forward(self, x):
        out, _ = self.lstm(self.embed(x.long()))
        return self.fc1(out[:, -1, :])


def main(d):
    head, *rows = open(f"{d}/meta.txt").read().split("\n")
    preset, batch, classes, clip, insize = head.split()
    batch, classes, clip, insize = int(batch), int(classes), float(clip), int(insize)
    tensors = [(r.split()[0], int(r.split()[1])) for r in rows if r.strip()]
    model = (CnnMcMahan(classes) if preset == "cnn_mcmahan" else Lstm(50, classes)).double()
    params = list(model.parameters())
    if len(params) != len(tensors) or any(p.numel() != n for p, (_, n) in zip(params, tensors)):
        print("  the tensors do not fit the PyTorch model:", tensors, [tuple(p.shape) for p in params])
        return 2
    flat = np.fromfile(f"{d}/params.f32", dtype=np.float32).astype(np.float64)
    if flat.size != sum(n for _, n in tensors):
        print(f"  params.f32 holds {flat.size} values, the tensors {sum(n for _, n in tensors)}")
        return 2
    off = 0
    with torch.no_grad():
        for p, (name, n) in zip(params, tensors):
            p.copy_(torch.from_numpy(flat[off:off + n]).view(p.shape))
            off += n
    x = torch.from_numpy(np.fromfile(f"{d}/x.f32", dtype=np.float32).astype(np.float64)).view(batch, insize)
    y = torch.from_numpy(np.fromfile(f"{d}/y.i32", dtype=np.int32).astype(np.int64))
    norms = np.fromfile(f"{d}/norms.f64", dtype=np.float64)
    clipped = np.fromfile(f"{d}/clipped.f32", dtype=np.float32).astype(np.float64)

    expected_sum = np.zeros_like(flat)
    worst_norm, clipped_count = 0.0, 0
    for i in range(batch):
        model.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        g = torch.cat([p.grad.reshape(-1) for p in params]).numpy()
        n = float(np.linalg.norm(g))
        worst_norm = max(worst_norm, abs(norms[i] - n) / n)
        factor = min(1.0, clip / n)
        clipped_count += factor < 1.0
        expected_sum += factor * g
    sum_err = float(np.linalg.norm(clipped - expected_sum) / np.linalg.norm(expected_sum))
    print(f"  {preset}: {batch} samples, {flat.size} parameters, {clipped_count} clipped at C = {clip:.6g}; "
          f"largest relative norm error {worst_norm:.2e}, clipped sum relative L2 error {sum_err:.2e}")
    if not (0 < clipped_count < batch):
        print("  the clip should cut some samples and not others")
        return 1
    return 0 if worst_norm < 1e-4 and sum_err < 1e-4 else 1


if __name__ == "__main__":
    torch.set_num_threads(1)
    sys.exit(main(sys.argv[1]))
