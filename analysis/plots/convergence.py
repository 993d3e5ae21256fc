"""`plot convergence`: mean and worst-10% client accuracy per evaluated round, with the spread over
seeds as a band. One-shot algorithms have no rounds to follow: they are drawn by `plot oneshot`."""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from .. import metrics as M
from ..errors import InputError
from ..figdata import FigureData
from ..names import display_name
from ..results import Run
from .common import (DASHES, MARKERS, WIDE, colours, grid, group_by_algorithm, legend_label, save,
                     seeds_phrase, setting_of, shown, wrap)

# markers on every evaluated round up to this many rounds, then on every k-th
MAX_MARKERS = 40
STATISTICS = (("mean", "Mean client accuracy"), ("worst10", "Worst-10% client accuracy"))


def evaluated_points(run: Run) -> Dict[int, Tuple[float, float]]:
    """{round: (mean, worst-10% mean)} of the client accuracies of each evaluated round."""
    rnd, acc = run.evaluated_rounds("client_accuracy")
    if acc.shape[0] == 0:
        raise InputError(run.path, "no evaluated /rounds/client_accuracy rows to plot")
    return {int(t): (M.mean(row), M.worst10(row)) for t, row in zip(rnd, acc)}


def seed_curves(runs: Sequence[Run]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rounds, mean [n, R], worst-10% [n, R]) per run (seed) at the R rounds every run evaluated."""
    points = [evaluated_points(r) for r in runs]
    common = sorted(set.intersection(*[set(p) for p in points]))
    if not common:
        raise InputError(runs[0].path, "the runs of one algorithm share no evaluated round")
    means = np.array([[p[t][0] for t in common] for p in points])
    worst = np.array([[p[t][1] for t in common] for p in points])
    return np.array(common, dtype=float), means, worst


def convergence_curves(runs: Sequence[Run]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rounds, mean, worst-10%) client accuracy per evaluated round, averaged over the runs (seeds) at
    the rounds all of them evaluated; rows of rounds that were not evaluated (NaN) are skipped."""
    xs, means, worst = seed_curves(runs)
    return xs, means.mean(axis=0), worst.mean(axis=0)


class Series:
    """One legend entry: a variant's runs and its bands, per statistic, at the evaluated rounds."""

    def __init__(self, key: str, variant: str, setting: str, runs: Sequence[Run]):
        self.key, self.variant, self.setting, self.runs = key, variant, setting, list(runs)
        self.xs, means, worst = seed_curves(runs)
        self.bands = {name: [M.seed_band(v[:, j]) for j in range(self.xs.size)]
                      for name, v in (("mean", means), ("worst10", worst))}
        self.kind = M.interval_kind(len(runs))
        self.identical_to: Optional[str] = None

    def centre(self, name: str) -> np.ndarray:
        return np.array([b[0] for b in self.bands[name]])

    def same_curves(self, other: "Series") -> bool:
        return (self.xs.shape == other.xs.shape and np.array_equal(self.xs, other.xs)
                and all(np.allclose(self.centre(n), other.centre(n), rtol=0, atol=1e-12, equal_nan=True)
                        for n, _ in STATISTICS))


def _series(runs: Sequence[Run]) -> List[Series]:
    from ..settings import variant_labels

    _, setting = setting_of(runs)
    variant = {id(r): v for r, v in zip(runs, variant_labels(runs))}
    out = [Series(key, variant[id(rs[0])], setting[id(rs[0])], rs) for key, rs in group_by_algorithm(runs).items()]
    for i, s in enumerate(out):
        s.identical_to = next((o.key for o in out[:i] if s.same_curves(o)), None)
    return out


def _legend_text(s: Series) -> str:
    extra = seeds_phrase(s.runs) + (", band:\u00a0" + s.kind.replace(" ", "\u00a0") if len(s.runs) > 1 else "")
    if s.identical_to is not None:
        extra += f"; identical to {shown(s.identical_to)}"
    return wrap(legend_label(shown(s.key), extra), 34)


def _draw(ax, s: Series, name: str, i: int, colour, data: FigureData) -> Line2D:
    centre = s.centre(name)
    every = max(1, math.ceil(s.xs.size / MAX_MARKERS))
    open_marker = i % 2 == 1  # alternate filled and open markers: a marker drawn over another shows both
    (line,) = ax.plot(s.xs, centre, color=colour, linestyle=DASHES[i % len(DASHES)], linewidth=1.8,
                      marker=MARKERS[i % len(MARKERS)], markersize=7 if open_marker else 5.5, markevery=every,
                      markerfacecolor="white" if open_marker else colour, markeredgewidth=1.4, zorder=3 + i)
    seeds = [r.seed for r in s.runs]
    data.add_series(s.setting, s.variant, seeds, name, s.xs, centre)
    if len(s.runs) > 1:
        lo = np.array([b[1] for b in s.bands[name]])
        hi = np.array([b[2] for b in s.bands[name]])
        ax.fill_between(s.xs, lo, hi, color=colour, alpha=0.15, linewidth=0, zorder=1)
        data.add_series(s.setting, s.variant, seeds, f"{name}_low", s.xs, lo)
        data.add_series(s.setting, s.variant, seeds, f"{name}_high", s.xs, hi)
    return line


def legend_figure():
    """The WIDE figure: two panels and a third, empty, column that holds the legend (a legend outside
    a panel would make tight_layout shrink that panel alone)."""
    import matplotlib.pyplot as plt

    from .common import DPI

    fig, axes = plt.subplots(1, 3, figsize=WIDE, dpi=DPI, gridspec_kw={"width_ratios": [1, 1, 0.7]})
    axes[2].axis("off")
    return fig, list(axes)


def convergence(runs: Sequence[Run], out: str, pdf: bool = False, title: Optional[str] = None,
                csv: Optional[str] = None) -> List[str]:
    """Two panels, mean and worst-10% client accuracy per evaluated round: per algorithm variant the
    mean over seeds with markers on the evaluated rounds and the spread over seeds as a band (min-max
    below 5 seeds, a bootstrap 95% CI of the mean from 5 on). One-shot runs are left out with a note."""
    from ..settings import is_one_shot

    iterative = [r for r in runs if not is_one_shot(r)]
    one_shot = [r for r in runs if is_one_shot(r)]
    if not iterative:
        raise InputError(runs[0].path, "one-shot runs have no rounds to follow; draw them with `plot oneshot`")
    series = _series(iterative)
    fig, axes = legend_figure()
    data = FigureData()
    handles = []
    legend_ax = axes.pop()
    for i, (s, colour) in enumerate(zip(series, colours(len(series)))):
        for ax, (name, _) in zip(axes, STATISTICS):
            line = _draw(ax, s, name, i, colour, data)
        handles.append(Line2D([], [], color=colour, linestyle=line.get_linestyle(), linewidth=1.8,
                              marker=line.get_marker(), markersize=line.get_markersize(),
                              markerfacecolor=line.get_markerfacecolor(), markeredgewidth=1.4,
                              label=_legend_text(s)))
    for ax, (_, panel) in zip(axes, STATISTICS):
        ax.set_title(panel)
        ax.set_xlabel("round (0-based); markers: evaluated rounds")
        ax.set_ylabel("client test accuracy (fraction)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        grid(ax)
    legend = legend_ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(-0.05, 1.0), borderaxespad=0.0)
    legend.set_in_layout(False)  # the column is sized for it; tight_layout must not shrink the panels
    setting_title, _ = setting_of(iterative)
    heading = title or f"Convergence: {setting_title}"
    if any(len(s.runs) > 1 for s in series):
        heading += ("\nlines: mean over seeds; bands: spread over seeds, min-max below 5 seeds, bootstrap 95% CI of "
                    "the mean from 5 on")
    fig.suptitle(heading)
    rect = None
    if one_shot:
        names = ", ".join(sorted({display_name(r.algorithm) for r in one_shot}))
        fig.text(0.01, 0.015, f"Not shown: {len(one_shot)} one-shot run(s) ({names}), which have no rounds to "
                              f"follow (see `plot oneshot`).", fontsize=9, ha="left", va="bottom")
        rect = (0, 0.05, 1, 1)
    return save(fig, out, pdf, data, csv, rect=rect)
