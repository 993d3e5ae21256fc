"""`plot accuracy-hist`: the final per-client accuracies of two runs as histograms with a smoothed
distribution (a Gaussian KDE reflected at 0 and 1, so that no mass lies outside the possible range)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
from matplotlib.ticker import MaxNLocator

from .. import metrics as M
from ..figdata import FigureData
from ..results import Run
from .common import DOUBLE, colours, grid, new_figure, save, setting_of, shown


def accuracy_bins(values: np.ndarray, bins: int, margin: float = 0.08) -> Tuple[np.ndarray, Tuple[float, float]]:
    """Histogram edges over the data's range (±0.05 when all values are equal) and the x limits: that
    range widened by ``margin`` of its span on each side."""
    if values.size == 0:
        return np.linspace(0.0, 1.0, bins + 1), (0.0, 1.0)
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-12:
        lo, hi = lo - 0.05, hi + 0.05
    edges = np.linspace(lo, hi, bins + 1)
    pad = margin * (hi - lo)
    return edges, (lo - pad, hi + pad)


def bounded_kde(values: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Density on [0, 1] of a Gaussian KDE (scipy, Scott's bandwidth) with the data reflected at 0 and
    1: f(x) = k(x) + k(-x) + k(2 - x), where k is the KDE of the data. It integrates to 1 over [0, 1]
    up to the mass beyond one reflection (negligible for bandwidths below 0.5), is 0 outside, and has
    zero slope at the bounds instead of a cliff."""
    from scipy.stats import gaussian_kde

    k = gaussian_kde(values)
    xs = np.asarray(xs, dtype=float)
    inside = (xs >= 0.0) & (xs <= 1.0)
    out = np.zeros_like(xs)
    x = xs[inside]
    out[inside] = k(x) + k(-x) + k(2.0 - x)
    return out


def _panel(ax, run: Run, name: str, colour, edges, lims, data: FigureData, setting: str) -> float:
    """One run's histogram, KDE and mean; returns the largest y drawn."""
    a = M.finite(run.client_accuracy)
    width = edges[1] - edges[0]
    counts, _, _ = ax.hist(a, bins=edges, color=colour, alpha=0.45, edgecolor="black", linewidth=0.6,
                           label=f"clients per bin (K = {a.size})")
    centres = (edges[:-1] + edges[1:]) / 2
    data.add_series(setting, name, run.seed, "clients_in_bin", centres, counts)
    ymax = float(np.max(counts)) if len(counts) else 0.0
    if a.size >= 2 and np.ptp(a) > 0:
        xs = np.linspace(max(0.0, lims[0]), min(1.0, lims[1]), 400)  # no accuracy lies outside [0, 1]
        try:
            ys = bounded_kde(a, xs) * a.size * width  # density -> expected clients per bin
        except (np.linalg.LinAlgError, ValueError):
            ys = None
        if ys is not None:
            ax.plot(xs, ys, color=colour, linewidth=2.2, label="smoothed (KDE on [0, 1])")
            data.add_series(setting, name, run.seed, "kde_clients_per_bin", xs, ys)
            ymax = max(ymax, float(ys.max()))
    else:
        ax.text(0.99, 0.80, "too few distinct values to smooth", transform=ax.transAxes, ha="right", va="top",
                fontsize=9)
    if a.size:
        ax.axvline(float(np.mean(a)), color="black", linestyle="--", linewidth=1.3, label=f"mean = {np.mean(a):.3f}")
        data.add(setting, name, run.seed, "mean", float(np.mean(a)), None)
    ax.set_title(f"{shown(name)}, seed {run.seed}\nvariance = {M.variance(a):.3g}, worst 10% = {M.worst10(a):.3f}")
    ax.set_xlabel("final client test accuracy (fraction)")
    ax.set_ylabel(f"clients (per bin of width {width:.3g})")
    ax.set_xlim(*lims)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper center", ncol=3, fontsize=9, columnspacing=1.0, handlelength=1.6)
    grid(ax)
    return ymax


def accuracy_hist(runs: Sequence[Run], out: str, pdf: bool = False, bins: int = 20,
                  csv: Optional[str] = None) -> List[str]:
    """Per-client final accuracy histograms (client counts) with the bounded KDE scaled to counts,
    runs side by side (α-FedAvg Fig. 3 style), titled with the algorithm variants' display names."""
    from ..settings import variant_labels

    fig, axes = new_figure(DOUBLE, ncols=len(runs))
    all_acc = np.concatenate([M.finite(r.client_accuracy) for r in runs] or [np.zeros(0)])
    edges, lims = accuracy_bins(all_acc, bins)
    setting_title, setting = setting_of(runs)
    data = FigureData()
    ymax = 0.0
    for ax, run, colour, name in zip(axes, runs, colours(len(runs)), variant_labels(runs)):
        ymax = max(ymax, _panel(ax, run, name, colour, edges, lims, data, setting[id(run)]))
    for ax in axes:  # one y range; headroom for the legend above the bars
        ax.set_ylim(0, ymax * 1.3 if ymax > 0 else 1)
    fig.suptitle(f"Final per-client test accuracy: {setting_title}")
    return save(fig, out, pdf, data, csv)
