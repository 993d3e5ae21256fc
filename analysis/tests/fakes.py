"""Write small fake fedsilo results files that follow docs/results.md exactly.

Root attributes are fixed-length strings and int64 integers (as the C++ writer, docs/results.md);
per-round datasets are chunked and extendible. The /summary scalars are computed here with plain
Python (math/statistics), independently of the analysis package, so tests can compare against them.
"""

from __future__ import annotations

import math
import statistics

import h5py
import numpy as np

LAYERS = ["fc1", "fc2", "fc3"]


def _fixed(s: str):
    return np.bytes_(s.encode())


def _strings(names):
    width = max(len(n) for n in names)
    return np.array([n.encode() for n in names], dtype=f"S{width}")


def py_stats(acc, n_train):
    """The docs/results.md /summary definitions in plain Python (finite values only)."""
    vals = [a for a in acc if not math.isnan(a)]
    k = len(vals)
    m = math.ceil(k / 10)
    srt = sorted(vals)
    mean = sum(vals) / k
    pairs = [(a, n) for a, n in zip(acc, n_train) if not math.isnan(a)]
    return {
        "mean": mean,
        "median": statistics.median(vals),
        "worst10": sum(srt[:m]) / m,
        "best10": sum(srt[-m:]) / m,
        "variance": sum((a - mean) ** 2 for a in vals) / k,
        "jain": sum(vals) ** 2 / (k * sum(a * a for a in vals)),
        "efficiency": sum(a * n for a, n in pairs) / sum(n for _, n in pairs),
    }


def write_run(path, accuracy, *, algorithm="fedavg", dataset="synthetic", model="logreg", seed=1,
              f1=None, num_train=None, rounds=3, global_accuracy=0.5, seconds=None, num_classes=3,
              sensitivity=None, layers=None, split_layer=None, alpha=None, alpha_as_attribute=False,
              gems=None, fmt="fedsilo-results-1", write_summary=True, num_ranks=2, config_sections="",
              gems_records=None, epsilon=None, alpha_records=None, participated=None):
    """Write a complete fake run whose final client accuracies are ``accuracy``.

    Rounds t = 0..rounds-1 have client accuracy acc * (t+1)/rounds (the last row equals ``accuracy``).
    ``sensitivity``: [K, L] array used for round0 (final = 2 * round0). ``split_layer``: (p, name).
    ``alpha``: value of /alpha_fedavg/alpha. ``gems``: (samples, accuracies) for /gems/finetune.
    ``config_sections``: INI text appended to the root attribute ``config`` (e.g. "[partition]\nalpha = 0.1\n").
    ``gems_records``: {name: value} written as /gems/<name> (accuracy_before, client_accuracy, ...).
    ``epsilon``: /privacy/epsilon ([T] or [T, K]). ``alpha_records``: {name: value} under /alpha_fedavg.
    ``participated``: /rounds/participated [T, K] (default: every client every round).
    """
    acc = np.asarray(accuracy, dtype=float)
    k = acc.size
    f1 = acc * 0.9 if f1 is None else np.asarray(f1, dtype=float)
    n_train = np.arange(10, 10 + 10 * k, 10, dtype=np.int64) if num_train is None else np.asarray(num_train, np.int64)
    seconds = np.linspace(1.0, 2.0, rounds) if seconds is None else np.asarray(seconds, dtype=float)
    layers = layers or LAYERS
    sizes = np.array([6, 4, 2][: len(layers)] + [3] * max(0, len(layers) - 3), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    p_total = int(sizes.sum())
    if sensitivity is None:
        sensitivity = np.array([[1.0 + c, 2.0 + c, 40.0 * (c + 1)][: len(layers)] + [1.0] * max(0, len(layers) - 3)
                                for c in range(k)])

    with h5py.File(path, "w") as f:
        f.attrs["config"] = _fixed(f"algorithm = {algorithm}\nclients = {k}\nrounds = {rounds}\nseed = {seed}\n"
                                   + config_sections)
        f.attrs["algorithm"] = _fixed(algorithm)
        f.attrs["dataset"] = _fixed(dataset)
        f.attrs["model"] = _fixed(model)
        f.attrs["seed"] = np.int64(seed)
        f.attrs["num_clients"] = np.int64(k)
        f.attrs["num_ranks"] = np.int64(num_ranks)
        f.attrs["num_rounds"] = np.int64(rounds)
        f.attrs["version"] = _fixed("0.1.0")
        if fmt is not None:
            f.attrs["format"] = _fixed(fmt)

        c = f.create_group("clients")
        c["rank"] = (np.arange(k) % num_ranks).astype(np.int32)
        c["num_train"] = n_train
        c["num_val"] = (n_train // 10).astype(np.int64)
        c["num_test"] = (n_train // 5).astype(np.int64)
        c["label_counts"] = np.tile(n_train[:, None] // num_classes, (1, num_classes)).astype(np.int64)

        r = f.create_group("rounds")

        def ext(name, data, dtype):
            data = np.asarray(data, dtype=dtype)
            maxshape = (None,) + data.shape[1:]
            chunks = (max(1, data.shape[0]),) + data.shape[1:]
            r.create_dataset(name, data=data, maxshape=maxshape, chunks=chunks)

        frac = (np.arange(rounds) + 1.0) / rounds
        ext("round", np.arange(rounds), np.int32)
        ext("global_accuracy", global_accuracy * frac, np.float64)
        ext("global_loss", 1.0 / frac, np.float64)
        ext("client_accuracy", frac[:, None] * acc[None, :], np.float64)
        ext("client_f1", frac[:, None] * f1[None, :], np.float64)
        ext("client_loss", 1.0 / frac[:, None] * np.ones((1, k)), np.float64)
        ext("weight", np.tile(n_train / n_train.sum(), (rounds, 1)), np.float64)
        ext("participated", np.ones((rounds, k)) if participated is None else participated, np.float64)
        ext("seconds", seconds, np.float64)
        ext("train_seconds", seconds * 0.8, np.float64)

        if write_summary:
            s = f.create_group("summary")
            s["client_accuracy"] = acc
            s["client_f1"] = f1
            s["client_loss"] = np.ones(k)
            for key, v in py_stats(list(acc), list(n_train)).items():
                s[key] = np.float64(v)
            s["global_accuracy"] = np.float64(global_accuracy)
            s["seconds_per_round"] = np.float64(statistics.median(list(seconds)))

        m = f.create_group("model")
        m["global"] = np.zeros(p_total, dtype=np.float32)
        lg = m.create_group("layers")
        lg["name"] = _strings(layers)
        lg["offset"] = offsets
        lg["size"] = sizes

        sg = f.create_group("sensitivity")
        sg["layers"] = _strings(layers)
        sg["round0"] = np.asarray(sensitivity, dtype=float)
        sg["final"] = 2.0 * np.asarray(sensitivity, dtype=float)

        if split_layer is not None:
            g = f.create_group("playerfl")
            g["split_layer"] = np.int64(split_layer[0])
            g["split_layer"].attrs["name"] = _fixed(split_layer[1])
        if alpha is not None:
            g = f.create_group("alpha_fedavg")
            if alpha_as_attribute:
                g.attrs["alpha"] = np.float64(alpha)
            else:
                g["alpha"] = np.float64(alpha)
        if alpha_records:
            g = f.require_group("alpha_fedavg")
            for name, value in alpha_records.items():
                g[name] = value
        if gems is not None:
            g = f.require_group("gems").create_group("finetune")
            g["samples"] = np.asarray(gems[0], dtype=np.int64)
            g["accuracy"] = np.asarray(gems[1], dtype=np.float64)
        for name, value in (gems_records or {}).items():
            f.require_group("gems")[name] = value
        if epsilon is not None:
            f.create_group("privacy")["epsilon"] = np.asarray(epsilon, dtype=np.float64)
    return str(path)
