"""`plot privacy-utility`: client accuracy against the privacy loss ε across runs, per algorithm.

A run's ε is the last value of /privacy/epsilon (Run.epsilon); runs without that record trained
without differential privacy and are drawn as a horizontal reference line of their algorithm."""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullLocator

from .. import metrics as M
from ..errors import InputError
from ..figdata import FigureData
from ..results import Run, normalise_algorithm
from .common import DASHES, DOUBLE, MARKERS, colours, grid, new_figure, save, setting_of, shown, wrap

PANELS = (("mean", "Mean client accuracy", M.mean), ("worst10", "Worst-10% client accuracy", M.worst10))


def _groups(runs: Sequence[Run]) -> Dict[Tuple[str, str], List[Run]]:
    """{(algorithm, setting label): runs}: one curve per algorithm and setting, whatever the privacy
    options (noise multiplier, clip, ...) in which its runs differ."""
    _, setting = setting_of(runs)
    out: Dict[Tuple[str, str], List[Run]] = {}
    for r in sorted(runs, key=lambda r: (normalise_algorithm(r.algorithm), setting[id(r)], r.epsilon, r.seed, r.path)):
        out.setdefault((r.algorithm, setting[id(r)]), []).append(r)
    return out


def _by_variant(runs: Sequence[Run], variant: Dict[int, str]) -> List[Tuple[str, List[Run]]]:
    """The private runs of one algorithm grouped by privacy configuration (variant), by mean ε."""
    by: Dict[str, List[Run]] = {}
    for r in runs:
        by.setdefault(variant[id(r)], []).append(r)
    return sorted(by.items(), key=lambda kv: float(np.mean([r.epsilon for r in kv[1]])))


def _deltas(runs: Sequence[Run]) -> str:
    values = sorted({r.option("privacy.delta", "") for r in runs} - {""})
    return f"δ = {values[0]}" if len(values) == 1 else ("δ = " + ", ".join(values) if values else "δ as configured")


def _draw_algorithm(axes, key, rs, i, colour, variant, data: FigureData) -> None:
    algo, setting = key
    private = [r for r in rs if math.isfinite(r.epsilon)]
    plain = [r for r in rs if not math.isfinite(r.epsilon)]
    marker, dash = MARKERS[i % len(MARKERS)], DASHES[i % len(DASHES)]
    for ax, (name, _, stat) in zip(axes, PANELS):
        for r in private:
            data.add(setting, variant[id(r)], r.seed, f"run_{name}", r.epsilon, stat(r.client_accuracy))
        ax.scatter([r.epsilon for r in private], [stat(r.client_accuracy) for r in private], color=colour,
                   marker=marker, s=18, alpha=0.45, zorder=2)
        xs, ys, los, his = [], [], [], []
        for v, vr in _by_variant(private, variant):
            eps = float(np.mean([r.epsilon for r in vr]))
            centre, lo, hi, _ = M.seed_band([stat(r.client_accuracy) for r in vr])
            xs.append(eps), ys.append(centre), los.append(lo), his.append(hi)
            seeds = [r.seed for r in vr]
            data.add(setting, v, seeds, name, eps, centre)
            if math.isfinite(lo):
                data.add(setting, v, seeds, f"{name}_low", eps, lo)
                data.add(setting, v, seeds, f"{name}_high", eps, hi)
        if xs:
            ax.plot(xs, ys, color=colour, linestyle=dash, marker=marker, markersize=7, linewidth=1.8, zorder=3)
            ok = [j for j in range(len(xs)) if math.isfinite(los[j])]
            if ok:
                ax.errorbar([xs[j] for j in ok], [ys[j] for j in ok],
                            yerr=[[ys[j] - los[j] for j in ok], [his[j] - ys[j] for j in ok]], color=colour,
                            linestyle="none", capsize=3, zorder=3)
        if plain:
            y = M.mean([stat(r.client_accuracy) for r in plain])
            ax.axhline(y, color=colour, linestyle=dash, linewidth=1.2, alpha=0.8, zorder=1)
            data.add(setting, algo, [r.seed for r in plain], f"{name}_no_dp", math.inf, y)


def privacy_utility(runs: Sequence[Run], out: str, pdf: bool = False, title: Optional[str] = None,
                    csv: Optional[str] = None) -> List[str]:
    """Mean and worst-10% client accuracy against ε, one colour per algorithm (and setting): each run
    as a small point, the mean over the seeds of each privacy configuration joined by a line with the
    spread over seeds as an error bar, and the runs without privacy as a horizontal line."""
    from ..settings import variant_labels

    if not any(math.isfinite(r.epsilon) for r in runs):
        raise InputError(runs[0].path, "no run has a /privacy/epsilon record (all were run without "
                                       "differential privacy): nothing to draw against ε")
    variant = {id(r): v for r, v in zip(runs, variant_labels(runs))}
    groups = _groups(runs)
    many = len({s for _, s in groups}) > 1
    fig, axes = new_figure(DOUBLE, ncols=2)
    data = FigureData()
    handles = []
    from matplotlib.lines import Line2D

    for i, ((key, rs), colour) in enumerate(zip(groups.items(), colours(len(groups)))):
        _draw_algorithm(axes, key, rs, i, colour, variant, data)
        n_priv = sum(math.isfinite(r.epsilon) for r in rs)
        name = shown(key[0]) + (f" ({key[1]})" if many else "")
        n_plain = len(rs) - n_priv
        text = f"{name}: {n_priv} private run(s)" + (f", {n_plain} without DP (level line)" if n_plain else "")
        handles.append(Line2D([], [], color=colour, linestyle=DASHES[i % len(DASHES)],
                              marker=MARKERS[i % len(MARKERS)], label=wrap(text, 48)))
    private = [r for r in runs if math.isfinite(r.epsilon)]
    for ax, (_, panel, _) in zip(axes, PANELS):
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel(f"privacy loss ε ({_deltas(private)}; log scale)")
        ax.set_ylabel("client test accuracy (fraction)")
        ax.set_title(panel)
        grid(ax)
    rows = math.ceil(len(handles) / 3)
    fig.legend(handles=handles, loc="lower center", ncol=min(3, len(handles)), fontsize=9)
    setting_title, _ = setting_of(runs)
    fig.suptitle(title or f"Privacy-utility trade-off: {setting_title}\npoints: runs; lines: mean over seeds per "
                          f"privacy configuration, error bars: min-max (bootstrap 95% CI from 5 seeds)")
    return save(fig, out, pdf, data, csv, rect=(0, 0.05 + 0.045 * rows, 1, 1))
