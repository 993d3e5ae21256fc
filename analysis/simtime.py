"""The simulated deployment's figures (docs/system.md): accuracy against simulated time, and the
time to a target accuracy with the bytes each silo sent.

Reads /rounds/sim_time, /rounds/client_accuracy (or global_accuracy), /rounds/client_upload_bytes and
client_download_bytes of each results file; runs with the same algorithm form one curve, the seeds a
band (the spread of the runs' accuracies, each run's curve stepped at its own round ends).
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from typing import Dict, List

import h5py
import numpy as np

from .errors import InputError

METRICS = ("mean_client", "global")


def _attr(f, name) -> str:
    v = f.attrs[name]
    return v.decode() if isinstance(v, (bytes, np.bytes_)) else str(v)


def open_clocked(path: str, metric: str):
    """The results file of a run with a simulated clock, open for reading; a one-line InputError for a
    bad --metric, a file that is not HDF5 or a run without /rounds/sim_time."""
    if metric not in METRICS:
        raise InputError("--metric", f"expected one of {', '.join(METRICS)}, got {metric!r}")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise InputError(path, f"cannot open as HDF5 ({exc})")
    if "rounds/sim_time" not in f:
        f.close()
        raise InputError(path, "no /rounds/sim_time: the run had no system model (docs/system.md)")
    return f


def read_accuracy(f, metric: str) -> np.ndarray:
    """Accuracy per round row: the mean client accuracy or the global one (NaN in rows not evaluated)."""
    if metric == "mean_client":
        client = f["rounds/client_accuracy"][:]
        with warnings.catch_warnings():  # a round not evaluated is NaN for every client
            warnings.simplefilter("ignore", RuntimeWarning)
            acc = np.nanmean(client, axis=1) if client.size else np.full(len(client), np.nan)
    else:
        acc = f["rounds/global_accuracy"][:]
    return np.asarray(acc, dtype=float)


def read_run(path: str, metric: str = "mean_client") -> Dict:
    """One run's clock, accuracy per round (NaN in rounds not evaluated) and bytes."""
    with open_clocked(path, metric) as f:
        return {
            "path": path,
            "algorithm": _attr(f, "algorithm"),
            "seed": int(f.attrs["seed"]),
            "sim_time": f["rounds/sim_time"][:].astype(float),
            "accuracy": read_accuracy(f, metric),
            "upload_bytes": f["rounds/client_upload_bytes"][:].astype(float),
            "download_bytes": f["rounds/client_download_bytes"][:].astype(float),
        }


def time_to_target(run: Dict, target: float) -> Dict:
    """The first evaluated round whose accuracy reaches `target`: rounds run, its clock, and the bytes
    each silo sent and received until then (mean over silos); NaN when never reached."""
    hit = np.nonzero(run["accuracy"] >= target)[0]
    t = int(hit[0]) if len(hit) else None
    last = t if t is not None else len(run["sim_time"]) - 1
    up = run["upload_bytes"][: last + 1].sum(axis=0)
    down = run["download_bytes"][: last + 1].sum(axis=0)
    return {
        "algorithm": run["algorithm"],
        "seed": run["seed"],
        "rounds_to_target": t + 1 if t is not None else math.nan,
        "time_to_target": float(run["sim_time"][t]) if t is not None else math.nan,
        "upload_bytes_per_silo": float(up.mean()),
        "download_bytes_per_silo": float(down.mean()),
    }


COLUMNS = ["algorithm", "seed", "rounds_to_target", "time_to_target", "upload_bytes_per_silo",
           "download_bytes_per_silo"]


def table(runs: List[Dict], target: float, fmt: str = "markdown") -> str:
    """One row per run (bytes counted up to the target, or over the whole run when never reached)."""
    rows = [time_to_target(r, target) for r in runs]
    if fmt == "csv":
        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)
        return out.getvalue()
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for r in rows:
        cells = [r["algorithm"], str(r["seed"]), f"{r['rounds_to_target']:g}", f"{r['time_to_target']:.6g}",
                 f"{r['upload_bytes_per_silo']:.6g}", f"{r['download_bytes_per_silo']:.6g}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def curves(runs: List[Dict]) -> Dict[str, Dict]:
    """Per algorithm: a common time grid (every run's round ends), the mean, min and max accuracy over
    its runs at each time (each run's last evaluated accuracy so far; NaN before its first)."""
    out = {}
    for alg in sorted({r["algorithm"] for r in runs}):
        mine = [r for r in runs if r["algorithm"] == alg]
        grid = np.unique(np.concatenate([r["sim_time"] for r in mine]))
        vals = []
        for r in mine:
            acc = r["accuracy"].copy()
            for i in range(1, len(acc)):  # carry the last evaluation forward
                if np.isnan(acc[i]):
                    acc[i] = acc[i - 1]
            idx = np.searchsorted(r["sim_time"], grid, side="right") - 1
            vals.append(np.where(idx >= 0, acc[np.clip(idx, 0, None)], np.nan))
        v = np.array(vals)
        with warnings.catch_warnings():  # NaN before a run's first evaluation
            warnings.simplefilter("ignore", RuntimeWarning)
            out[alg] = {"time": grid, "mean": np.nanmean(v, axis=0), "min": np.nanmin(v, axis=0),
                        "max": np.nanmax(v, axis=0), "runs": len(mine)}
    return out


def curves_csv(runs: List[Dict]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["algorithm", "sim_time", "accuracy_mean", "accuracy_min", "accuracy_max", "runs"])
    for alg, c in curves(runs).items():
        for i, t in enumerate(c["time"]):
            w.writerow([alg, f"{t:.9g}", f"{c['mean'][i]:.6g}", f"{c['min'][i]:.6g}", f"{c['max'][i]:.6g}", c["runs"]])
    return out.getvalue()


def plot_bands(bands: Dict[str, Dict], out: str, metric: str) -> str:
    """Accuracy against simulated time: per label a step curve `mean` over `time` with the band
    [`lo`, `hi`] shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, c in bands.items():
        ax.step(c["time"], c["mean"], where="post", label=f"{label} ({c['runs']} runs)")
        ax.fill_between(c["time"], c["lo"], c["hi"], step="post", alpha=0.2)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("mean client accuracy" if metric == "mean_client" else "global accuracy")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot(runs: List[Dict], out: str, metric: str) -> str:
    bands = {alg: {**c, "lo": c["min"], "hi": c["max"]} for alg, c in curves(runs).items()}
    return plot_bands(bands, out, metric)
