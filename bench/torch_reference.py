#!/usr/bin/python3
"""PyTorch reference for fedsilo's benchmark workloads W1, W2 and PFL (docs/performance.md).

FedAvg written the way a typical single-process Python FL simulator writes it: the clients train one
after the other in one process, each from the global model, and the server averages their state
dicts weighted by sample count. bench/compare_torch.sh runs it back to back with fedsilo.

  W1 (--workload w1): MLP 784-200-200-10 with ReLU, FashionMNIST as 784 floats in [0, 1].
  W2 (--workload w2): McMahan et al.'s CNN: conv 5x5 1->32 'same', ReLU, max-pool 2; conv 5x5 32->64
                      'same', ReLU, max-pool 2; dense 3136->512, ReLU; dense 512->10.
  PFL (--workload pfl): PLayer-FL's FashionMNIST CNN (fedsilo's cnn_playerfl): three blocks of conv
                      5x5 'same' + ReLU + max-pool 2 (1->64, 64->128, 128->256), global average pool,
                      dense 256->100, ReLU, dense 100->10; batch 128 and --client-samples (each
                      client's first N samples; fedsilo keeps a seeded random N, the same count).
  All: 10 clients from the stored partition (data/partitions/README.md), one local epoch of plain
  SGD (lr 0.05, batch 32, a fresh permutation per epoch, the last partial batch kept), softmax
  cross-entropy, FedAvg weights n_k / n, the global model evaluated on the 10,000 test images after
  every round (batch 1000). PyTorch's default initialisation, torch.manual_seed(seed).
  --optimizer adam, --amsgrad, --weight-decay, --init kaiming_normal and --normalize MEAN,STD give
  the PLayer-FL authors' client protocol (bench/time_to_accuracy.sh's PFL workload).

Threads must be fixed before torch and its BLAS are loaded (torch.set_num_threads does not bound
OpenBLAS's own pool), so --threads and --blas-threads set OMP_NUM_THREADS and OPENBLAS_NUM_THREADS
before the import. Needs Debian's python3-torch (and python3-numpy); run it with /usr/bin/python3.

  /usr/bin/python3 bench/torch_reference.py --workload w1 --rounds 20 --threads 1
  /usr/bin/python3 bench/torch_reference.py --workload w2 --rounds 3 --threads 2 --json out.jsonl

--target-acc A stops after the first round whose test accuracy is >= A (bench/time_to_accuracy.sh; the
--rounds value is then the cap). Prints one line per round and a SUMMARY line; --json appends one JSON object per run (per-round
times, final accuracy, peak RSS, settings) for bench/perf_tools.py.
"""
import argparse
import gzip
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PARTITION = os.path.join(ROOT, "data", "partitions", "fmnist_c10_dirichlet0.5_seed0.npy")
DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"
DEFAULT_ROUNDS = {"w1": 20, "w2": 3, "pfl": 1}
DEFAULT_BATCH = {"w1": 32, "w2": 32, "pfl": 128}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--workload", choices=["w1", "w2", "pfl"], default="w1")
    p.add_argument("--rounds", type=int, help="default: 20 for w1, 3 for w2, 1 for pfl")
    p.add_argument("--partition", default=DEFAULT_PARTITION, help=".npy of one client id per training image")
    p.add_argument("--data-dir", default=DEFAULT_DATA, help="FashionMNIST IDX files (.gz)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, help="default: 32 for w1 and w2, 128 for pfl")
    p.add_argument("--client-samples", type=int, default=0, help="train on each client's first N samples (0: all)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd",
                   help="client optimizer, created afresh for every client and round (fedsilo's "
                        "train.optimizer_state = reset)")
    p.add_argument("--amsgrad", action="store_true", help="Adam with AMSGrad")
    p.add_argument("--weight-decay", type=float, default=0.0, help="L2 added to the gradient (torch's weight_decay)")
    p.add_argument("--init", choices=["default", "kaiming_normal"], default="default",
                   help="kaiming_normal: weights N(0, 2 / fan_in), biases zero (fedsilo's model.init_scheme = "
                        "kaiming_normal, model.init_bias = zero)")
    p.add_argument("--normalize", metavar="MEAN,STD",
                   help="inputs (x - MEAN) / STD after scaling to [0, 1] (fedsilo's data.normalize = mean_std)")
    p.add_argument("--eval-batch", type=int, default=1000)
    p.add_argument("--test-samples", type=int, default=0, help="evaluate on the first N test images (0: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op and OpenMP threads")
    p.add_argument("--blas-threads", type=int, help="OpenBLAS threads (default: --threads)")
    p.add_argument("--target-acc", type=float, default=0.0,
                   help="stop after the first round whose test accuracy is >= this (0: run every round)")
    p.add_argument("--json", help="append the run's JSON object to this file")
    a = p.parse_args(argv)
    if a.rounds is None:
        a.rounds = DEFAULT_ROUNDS[a.workload]
    if a.batch is None:
        a.batch = DEFAULT_BATCH[a.workload]
    if not 0.0 <= a.target_acc <= 1.0:
        p.error(f"--target-acc must be in [0, 1], got {a.target_acc}")
    if a.client_samples < 0:
        p.error(f"--client-samples must be >= 0, got {a.client_samples}")
    if a.weight_decay < 0:
        p.error(f"--weight-decay must be >= 0, got {a.weight_decay}")
    if a.normalize is not None:
        text = a.normalize
        try:
            a.normalize = tuple(float(v) for v in text.split(","))
        except ValueError:
            a.normalize = ()
        if len(a.normalize) != 2 or not a.normalize[1] > 0:
            p.error(f"--normalize expects MEAN,STD with STD > 0, got '{text}'")
    for name in ("rounds", "epochs", "batch", "eval_batch", "threads"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")
    return a


ARGS = parse_args()
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.blas_threads or ARGS.threads)

import numpy as np  # noqa: E402  (after the thread settings)
import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(ARGS.threads)
torch.set_num_interop_threads(1)


# ------------------------------------------------------------------------------------------ data
def idx_array(path):
    """An IDX file (gzip): big-endian magic whose last byte is the rank, then the dimensions."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load_split(data_dir, prefix, shape, normalize=None):
    x = idx_array(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    y = idx_array(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    scaled = x.astype(np.float32) / 255.0
    if normalize:
        mean, std = normalize
        scaled = (scaled - np.float32(mean)) / np.float32(std)
    images = torch.from_numpy(scaled).reshape(shape)
    return images, torch.from_numpy(y.astype(np.int64))


def client_slices(owner, images, labels, cap):
    """Per client id 0..max: its images and labels, in training-file order (the first `cap` if > 0)."""
    out = []
    for k in range(int(owner.max()) + 1):
        rows = np.flatnonzero(owner == k)
        rows = torch.from_numpy(rows[:cap] if cap > 0 else rows)
        out.append((images[rows].contiguous(), labels[rows].contiguous()))
    return out


# ---------------------------------------------------------------------------------------- models
def make_model(workload):
    if workload == "w1":
        return nn.Sequential(nn.Linear(784, 200), nn.ReLU(), nn.Linear(200, 200), nn.ReLU(), nn.Linear(200, 10))
    if workload == "pfl":
        block = lambda i, o: [nn.Conv2d(i, o, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2)]  # noqa: E731
        return nn.Sequential(*block(1, 64), *block(64, 128), *block(128, 256), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                             nn.Linear(256, 100), nn.ReLU(), nn.Linear(100, 10))
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 512), nn.ReLU(), nn.Linear(512, 10))


def apply_init(model, scheme):
    """kaiming_normal: every Linear and Conv2d weight N(0, 2 / fan_in) and its bias zero; default: torch's."""
    if scheme == "default":
        return
    for layer in model.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            nn.init.kaiming_normal_(layer.weight, mode="fan_in", nonlinearity="relu")
            nn.init.zeros_(layer.bias)


def make_optimizer(params, a):
    if a.optimizer == "adam":
        return torch.optim.Adam(params, lr=a.lr, amsgrad=a.amsgrad, weight_decay=a.weight_decay)
    return torch.optim.SGD(params, lr=a.lr, weight_decay=a.weight_decay)


# Training FLOPs per sample, 2 per multiply-add, counted exactly: forward, weight gradients, and input
# gradients of every layer but the first (docs/performance.md, "FLOPs per sample").
TRAIN_FLOPS = {"w1": 879_200, "w2": 72_384_512, "pfl": 486_866_800}


# -------------------------------------------------------------------------------------------- FL
def train_client(model, x, y, a, generator):
    """a.epochs epochs of the client optimizer over (x, y); returns the number of samples processed."""
    opt = make_optimizer(model.parameters(), a)
    model.train()
    n = x.shape[0]
    for _ in range(a.epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, a.batch):
            rows = order[start:start + a.batch]
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[rows]), y[rows]).backward()
            opt.step()
    return n * a.epochs


@torch.no_grad()
def evaluate(model, x, y, batch):
    model.eval()
    hits, loss = 0, 0.0
    for start in range(0, x.shape[0], batch):
        logits = model(x[start:start + batch])
        target = y[start:start + batch]
        loss += F.cross_entropy(logits, target, reduction="sum").item()
        hits += (logits.argmax(1) == target).sum().item()
    return hits / x.shape[0], loss / x.shape[0]


def fedavg_round(global_model, worker, clients, a, generator):
    """One round; returns (train seconds, aggregation seconds, samples trained)."""
    start_state = {k: v.detach().clone() for k, v in global_model.state_dict().items()}
    total = sum(x.shape[0] for x, _ in clients)
    summed = {k: torch.zeros_like(v) for k, v in start_state.items()}
    train_s = agg_s = 0.0
    samples = 0
    for x, y in clients:
        worker.load_state_dict(start_state)
        t0 = time.perf_counter()
        samples += train_client(worker, x, y, a, generator)
        t1 = time.perf_counter()
        with torch.no_grad():
            for k, v in worker.state_dict().items():
                summed[k].add_(v, alpha=x.shape[0] / total)
        train_s += t1 - t0
        agg_s += time.perf_counter() - t1
    global_model.load_state_dict(summed)
    return train_s, agg_s, samples


def main(a):
    t_setup = time.perf_counter()
    shape = (-1, 784) if a.workload == "w1" else (-1, 1, 28, 28)
    train_x, train_y = load_split(a.data_dir, "train", shape, a.normalize)
    test_x, test_y = load_split(a.data_dir, "t10k", shape, a.normalize)
    if a.test_samples > 0:
        test_x, test_y = test_x[:a.test_samples], test_y[:a.test_samples]
    owner = np.load(a.partition)
    if owner.ndim != 1 or owner.shape[0] != train_x.shape[0]:
        sys.exit(f"torch_reference.py: {a.partition}: {owner.shape} ids for {train_x.shape[0]} training images")
    clients = client_slices(owner, train_x, train_y, a.client_samples)
    torch.manual_seed(a.seed)
    generator = torch.Generator().manual_seed(a.seed)
    global_model, worker = make_model(a.workload), make_model(a.workload)
    apply_init(global_model, a.init)
    setup_s = time.perf_counter() - t_setup

    coretype = os.environ.get("OPENBLAS_CORETYPE", "")
    print(f"# torch_reference {a.workload}: torch {torch.__version__}, {len(clients)} clients "
          f"{[x.shape[0] for x, _ in clients]}, {a.rounds} rounds, threads {a.threads} "
          f"(OpenBLAS {os.environ['OPENBLAS_NUM_THREADS']}, OPENBLAS_CORETYPE={coretype or '(unset)'}), "
          f"set-up {setup_s:.2f} s")
    print(f"{'round':>5} {'train_s':>8} {'agg_s':>7} {'eval_s':>7} {'round_s':>8} {'samples/s':>10} "
          f"{'test_acc':>8} {'test_loss':>9}", flush=True)
    rows = []
    for r in range(a.rounds):
        t0 = time.perf_counter()
        train_s, agg_s, samples = fedavg_round(global_model, worker, clients, a, generator)
        t1 = time.perf_counter()
        acc, loss = evaluate(global_model, test_x, test_y, a.eval_batch)
        t2 = time.perf_counter()
        rows.append(dict(round=r, train_s=train_s, agg_s=agg_s, eval_s=t2 - t1, round_s=t2 - t0,
                         samples_per_s=samples / train_s, test_acc=acc, test_loss=loss))
        print(f"{r:>5} {train_s:>8.3f} {agg_s:>7.3f} {t2 - t1:>7.3f} {t2 - t0:>8.3f} {samples / train_s:>10.0f} "
              f"{acc:>8.4f} {loss:>9.4f}", flush=True)
        if a.target_acc > 0 and acc >= a.target_acc:
            break

    median = lambda key: float(np.median([row[key] for row in rows]))  # noqa: E731
    result = dict(program="torch_reference", workload=a.workload, rounds=len(rows), target_acc=a.target_acc, seed=a.seed, batch=a.batch,
                  samples_per_round=sum(x.shape[0] for x, _ in clients) * a.epochs,
                  optimizer=a.optimizer, amsgrad=a.amsgrad, weight_decay=a.weight_decay, lr=a.lr, init=a.init,
                  normalize=list(a.normalize or ()),
                  threads=a.threads, openblas_threads=int(os.environ["OPENBLAS_NUM_THREADS"]),
                  openblas_coretype=coretype, torch_version=torch.__version__, setup_s=setup_s,
                  median_round_s=median("round_s"), median_train_s=median("train_s"),
                  median_samples_per_s=median("samples_per_s"), final_test_acc=rows[-1]["test_acc"],
                  peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  train_flops_per_sample=TRAIN_FLOPS[a.workload], per_round=rows)
    print(f"SUMMARY workload={a.workload} threads={a.threads} blas_threads={result['openblas_threads']} "
          f"coretype={coretype or '(default)'} median_round_s={result['median_round_s']:.3f} "
          f"median_samples_per_s={result['median_samples_per_s']:.0f} "
          f"final_test_acc={result['final_test_acc']:.4f} peak_rss_MB={result['peak_rss_mb']:.0f} "
          f"train_GFLOP/s={result['median_samples_per_s'] * TRAIN_FLOPS[a.workload] / 1e9:.1f}", flush=True)
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main(ARGS)
