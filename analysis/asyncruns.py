"""Synchronous and asynchronous runs on the simulated clock side by side (docs/analysis.md, "async"):
accuracy against simulated time with seed bands, the staleness of the updates the server applied, and
the simulated time to a target accuracy across algorithms with seed bands.

Reads /rounds/sim_time (the clock at each round end, or at each server version of an asynchronous
run), the evaluation rows (/rounds/client_accuracy, or /rounds/global_accuracy; NaN in rows not
evaluated) and, for the staleness histogram, /rounds/staleness [rows x K] (NaN where a silo's update
did not enter that version). Runs are grouped by their label: the root attribute `algorithm`, with
" (deadline)" appended for a synchronous run with fl.deadline_seconds > 0; the seeds of one label make
its band (mean +- sample standard deviation over the runs).
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from typing import Dict, List, Optional, Tuple

import numpy as np

from .errors import InputError
from .results import parse_config
from .simtime import _attr, open_clocked, plot_bands, read_accuracy


def _label(f) -> str:
    algorithm = _attr(f, "algorithm")
    config = parse_config(_attr(f, "config")) if "config" in f.attrs else {}
    try:
        deadline = float(config.get("fl.deadline_seconds", "0"))
    except ValueError:
        deadline = 0.0
    return f"{algorithm} (deadline)" if deadline > 0 else algorithm


def read_run(path: str, metric: str = "mean_client") -> Dict:
    """One run's label, seed, clock, accuracy per row and staleness matrix (None when not written)."""
    with open_clocked(path, metric) as f:
        accuracy_name = "rounds/client_accuracy" if metric == "mean_client" else "rounds/global_accuracy"
        if accuracy_name not in f:
            raise InputError(path, f"no /{accuracy_name}: nothing to plot against the clock")
        sim_time = f["rounds/sim_time"][:].astype(float)
        accuracy = read_accuracy(f, metric)
        if len(accuracy) != len(sim_time):
            raise InputError(path, f"/rounds/sim_time has {len(sim_time)} rows, /{accuracy_name} {len(accuracy)}")
        staleness = f["rounds/staleness"][:].astype(float) if "rounds/staleness" in f else None
        return {"path": path, "label": _label(f), "seed": int(f.attrs["seed"]), "sim_time": sim_time,
                "accuracy": accuracy, "staleness": staleness}


def _carried(run: Dict) -> np.ndarray:
    """The accuracy known at each row: the last evaluation so far (NaN before the first)."""
    acc = run["accuracy"].copy()
    for i in range(1, len(acc)):
        if np.isnan(acc[i]):
            acc[i] = acc[i - 1]
    return acc


def _labels(runs: List[Dict]) -> List[str]:
    return sorted({r["label"] for r in runs})


def _mean_sd(values: np.ndarray, axis: int = 0):
    """Mean and sample standard deviation over the finite values (sd 0 for a single value, NaN for none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=axis)
        count = np.sum(np.isfinite(values), axis=axis)
        sd = np.where(count > 1, np.nanstd(values, axis=axis, ddof=1) if values.shape[axis] > 1 else 0.0, 0.0)
        sd = np.where(count > 0, sd, np.nan)
    return mean, sd


def curves(runs: List[Dict]) -> Dict[str, Dict]:
    """Per label: a time grid (every row end of its runs) and the mean and standard deviation over its
    runs of the accuracy each run had reached by then (runs not yet evaluated at a time are left out)."""
    out = {}
    for label in _labels(runs):
        mine = [r for r in runs if r["label"] == label]
        grid = np.unique(np.concatenate([r["sim_time"] for r in mine]))
        vals = []
        for r in mine:
            acc = _carried(r)
            idx = np.searchsorted(r["sim_time"], grid, side="right") - 1
            vals.append(np.where(idx >= 0, acc[np.clip(idx, 0, None)], np.nan))
        mean, sd = _mean_sd(np.array(vals))
        out[label] = {"time": grid, "mean": mean, "sd": sd, "runs": len(mine)}
    return out


def curve_rows(runs: List[Dict]) -> List[Dict]:
    return [{"label": label, "sim_time": float(t), "accuracy_mean": float(c["mean"][i]),
             "accuracy_sd": float(c["sd"][i]), "runs": c["runs"]}
            for label, c in curves(runs).items() for i, t in enumerate(c["time"])]


def staleness_counts(runs: List[Dict]) -> Dict[str, Dict[int, int]]:
    """Per label: how many finite entries of /rounds/staleness (one per version and silo whose update
    entered it) had each staleness, over all its runs."""
    out: Dict[str, Dict[int, int]] = {}
    for r in runs:
        if r["staleness"] is None:
            raise InputError(r["path"], "no /rounds/staleness: not an asynchronous run")
        values = r["staleness"][np.isfinite(r["staleness"])]
        counts = out.setdefault(r["label"], {})
        for v, n in zip(*np.unique(values.astype(int), return_counts=True)):
            counts[int(v)] = counts.get(int(v), 0) + int(n)
    return {label: dict(sorted(out[label].items())) for label in sorted(out)}


def staleness_rows(runs: List[Dict]) -> List[Dict]:
    rows = []
    for label, counts in staleness_counts(runs).items():
        total = sum(counts.values())
        rows += [{"label": label, "staleness": s, "updates": n, "fraction": n / total} for s, n in counts.items()]
    return rows


def time_to_target(run: Dict, target: float) -> float:
    """Simulated seconds at the first evaluated row whose accuracy reaches `target`; NaN when never."""
    hit = np.nonzero(run["accuracy"] >= target)[0]
    return float(run["sim_time"][hit[0]]) if len(hit) else math.nan


def targets(runs: List[Dict], target: float) -> List[Dict]:
    """Per label: how many of its runs reached `target` and the mean, sd, min and max of their times
    (over the runs that reached it; NaN when none did)."""
    rows = []
    for label in _labels(runs):
        times = np.array([time_to_target(r, target) for r in runs if r["label"] == label])
        reached = times[np.isfinite(times)]
        mean, sd = _mean_sd(reached) if len(reached) else (math.nan, math.nan)
        rows.append({"label": label, "runs": len(times), "reached": len(reached), "time_mean": float(mean),
                     "time_sd": float(sd), "time_min": float(reached.min()) if len(reached) else math.nan,
                     "time_max": float(reached.max()) if len(reached) else math.nan})
    return rows


def render(rows: List[Dict], fmt: str) -> str:
    """Rows as CSV (full precision, `nan` for a missing value) or a Markdown table (`n/a`)."""
    if not rows:
        return ""
    columns = list(rows[0].keys())
    out = io.StringIO()
    if fmt == "csv":
        w = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.9g}" if isinstance(v, float) else v) for k, v in r.items()})
        return out.getvalue()

    def cell(v):
        if isinstance(v, float):
            return "n/a" if math.isnan(v) else f"{v:.6g}"
        return str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(cell(r[k]) for k in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_curves(runs: List[Dict], out: str, metric: str) -> str:
    bands = {label: {**c, "lo": c["mean"] - c["sd"], "hi": c["mean"] + c["sd"]} for label, c in curves(runs).items()}
    return plot_bands(bands, out, metric)


def plot_staleness(runs: List[Dict], out: str) -> str:
    plt = _pyplot()
    counts = staleness_counts(runs)
    fig, ax = plt.subplots(figsize=(6, 4))
    width = 0.8 / max(len(counts), 1)
    for i, (label, c) in enumerate(counts.items()):
        total = sum(c.values())
        xs = np.array(list(c.keys()), dtype=float) + (i - (len(counts) - 1) / 2) * width
        ax.bar(xs, [n / total for n in c.values()], width=width, label=label)
    ax.set_xlabel("staleness (server versions)")
    ax.set_ylabel("fraction of applied updates")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def run_command(kind: str, paths: List[str], metric: str, target: float, fmt: str,
                plot: Optional[str]) -> Tuple[str, Optional[str]]:
    """The text one `async` subcommand prints, and the figure it wrote (None without --plot)."""
    runs = [read_run(p, metric) for p in paths]
    if kind == "curves":
        return render(curve_rows(runs), fmt), plot_curves(runs, plot, metric) if plot else None
    if kind == "staleness":
        return render(staleness_rows(runs), fmt), plot_staleness(runs, plot) if plot else None
    if kind == "targets":
        return render(targets(runs, target), fmt), None
    raise AssertionError(kind)
