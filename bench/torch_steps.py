#!/usr/bin/env python3
"""One training step (forward, loss, backward, SGD) of the PLayer-FL CIFAR-10 CNN and text transformer in
PyTorch, at the shapes of fedsilo_bench's PaperStep/ (bench/step_bench.cpp): the same layers as the
cnn_playerfl_cifar and transformer_playerfl presets (docs/models.md), the same batch, the same FLOP
count. Prints one JSON line: the median CPU seconds per step over --steps steps (process CPU time, as
Google Benchmark's CPU time for fedsilo), GFLOP/s and samples/s. Run by bench/compare_torch_steps.sh."""
import argparse
import json
import statistics
import time

import torch
from torch import nn

FLOPS = {"cifar": 7107425136.0, "transformer": 5184129024.0}  # exact training FLOPs per sample


class CifarCnn(nn.Module):
    """Five 3x3 convolutions padded by 2, ReLU, max-pool after conv2 and conv4, dropout 0.3, GAP, 512-100-10."""

    def __init__(self):
        super().__init__()
        layers, c = [], 3
        for out, pool in ((64, False), (128, True), (256, False), (512, True), (512, False)):
            layers += [nn.Conv2d(c, out, 3, padding=2), nn.ReLU()]
            if pool:
                layers.append(nn.MaxPool2d(2))
            layers.append(nn.Dropout(0.3))
            c = out
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(512, 100), nn.ReLU(), nn.Linear(100, 10))

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


class Transformer(nn.Module):
    """Token + position embedding, single-head attention (no bias) + projection + residual, 4d
    feed-forward + residual, first token into the head; no LayerNorm."""

    def __init__(self, vocab, d, tokens, classes):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(tokens, d)
        self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.proj = nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.head = nn.Linear(d, classes)
        self.scale = d ** -0.5

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        mask = (ids == 0)[:, None, :]  # padding keys get weight 0 (none in this benchmark)
        s = torch.matmul(self.q(x), self.k(x).transpose(1, 2)) * self.scale
        a = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
        x = x + self.proj(torch.matmul(a, self.v(x)))
        x = x + self.ff2(torch.relu(self.ff1(x)))
        return self.head(x[:, 0])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", choices=sorted(FLOPS), required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.model == "cifar":
        model, x = CifarCnn(), torch.rand(args.batch, 3, 32, 32)
        y = torch.arange(args.batch) % 10
    else:
        model = Transformer(10000, 768, 119, 2)
        x = 1 + (torch.arange(args.batch * 119).reshape(args.batch, 119) * 7919) % 9999
        y = torch.arange(args.batch) % 2
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    model.train()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    step()  # warm-up
    times = []
    for _ in range(args.steps):
        t0 = time.process_time()
        step()
        times.append(time.process_time() - t0)
    sec = statistics.median(times)
    print(json.dumps({"model": args.model, "batch": args.batch, "threads": args.threads, "torch": torch.__version__,
                      "cpu_s_per_step": sec, "gflops": FLOPS[args.model] * args.batch / sec * 1e-9,
                      "samples_per_s": args.batch / sec}))


if __name__ == "__main__":
    main()
