"""The one-shot figures: `plot gems-finetune` (test-set accuracy against the public samples used for
fine-tuning) and `plot oneshot` (client scores and test-set accuracy of each method as points, never
as a convergence line, each labelled with what was fine-tuned)."""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from .. import metrics as M
from .. import oneshot as O
from ..errors import InputError
from ..figdata import FigureData
from ..results import Run
from .common import DASHES, DOUBLE, MARKERS, SINGLE, colours, grid, group_by_algorithm, legend_label, new_figure, \
    save, setting_of, shown, wrap


def _variants(runs: Sequence[Run]) -> Dict[int, str]:
    from ..settings import variant_labels

    return {id(r): v for r, v in zip(runs, variant_labels(runs))}


def gems_finetune(runs: Sequence[Run], out: str, pdf: bool = False, title: Optional[str] = None,
                  csv: Optional[str] = None) -> List[str]:
    """Accuracy after fine-tuning against the number of public samples, one line per method, on a
    symmetric-log x axis (linear up to the smallest positive sample count) so that 0 shows."""
    for r in runs:
        if r.gems_finetune is None:
            raise InputError(r.path, "no /gems/finetune group (needs datasets samples and accuracy)")
    groups = group_by_algorithm(runs)
    setting_title, setting = setting_of(runs)
    variant = _variants(runs)
    data = FigureData()
    fig, (ax,) = new_figure(SINGLE)
    all_x = set()
    drawn: List[tuple] = []  # (key, xs, ys) of the methods drawn so far, to name identical curves
    for i, ((key, rs), colour) in enumerate(zip(groups.items(), colours(len(groups)))):
        points: Dict[float, List[float]] = {}
        for r in rs:
            for s, a in zip(*r.gems_finetune):
                if math.isfinite(a):
                    points.setdefault(float(s), []).append(float(a))
        xs = np.array(sorted(points))
        all_x.update(xs.tolist())
        ys = np.array([np.mean(points[x]) for x in xs])
        sd = np.array([np.std(points[x]) for x in xs])
        seeds = [r.seed for r in rs]
        extra = f"{len(rs)} runs, mean ± sd" if len(rs) > 1 else f"seed {rs[0].seed}"
        same = next((k for k, x0, y0 in drawn if np.array_equal(x0, xs) and np.allclose(y0, ys, rtol=0, atol=1e-12)),
                    None)
        if same is not None:
            extra += f"; identical to {shown(same)}"
        drawn.append((key, xs, ys))
        open_marker = i % 2 == 1  # alternate filled and open markers: a marker drawn over another shows both
        ax.plot(xs, ys, color=colour, marker=MARKERS[i % len(MARKERS)], linestyle=DASHES[i % len(DASHES)],
                markersize=8 if open_marker else 6, markerfacecolor="white" if open_marker else colour,
                markeredgewidth=1.4, linewidth=2, zorder=3 + i, label=wrap(legend_label(shown(key), extra), 50))
        data.add_series(setting[id(rs[0])], variant[id(rs[0])], seeds, "mean", xs, ys)
        if len(rs) > 1:
            ax.fill_between(xs, ys - sd, ys + sd, color=colour, alpha=0.15, linewidth=0)
            data.add_series(setting[id(rs[0])], variant[id(rs[0])], seeds, "mean_minus_sd", xs, ys - sd)
            data.add_series(setting[id(rs[0])], variant[id(rs[0])], seeds, "mean_plus_sd", xs, ys + sd)
    positive = sorted(x for x in all_x if x > 0)
    if positive:
        ax.set_xscale("symlog", linthresh=positive[0], linscale=0.5)
        ticks = sorted(all_x)
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlim(min(ticks) - 0.2 * positive[0] if min(ticks) <= 0 else min(ticks) / 1.5, max(ticks) * 1.5)
    ax.set_xlabel("public samples used for fine-tuning (count; symmetric log scale; 0 = none)")
    ax.set_ylabel("test-set accuracy (fraction)")
    ax.set_title(title or f"Fine-tuning with public samples: {setting_title}", fontsize=11)
    ax.legend(loc="best", fontsize=8.5)
    grid(ax)
    return save(fig, out, pdf, data, csv)


def _points(ax, y: float, values: Sequence[float], colour, marker: str, filled: bool) -> tuple:
    """A point at the mean over runs with the spread over runs as a horizontal error bar, at height y;
    (mean, low, high)."""
    centre, lo, hi, _ = M.seed_band(values)
    if not math.isfinite(centre):
        return centre, lo, hi
    err = None if not math.isfinite(lo) else [[centre - lo], [hi - centre]]
    ax.errorbar([centre], [y], xerr=err, color=colour, marker=marker, markersize=8, capsize=4, linestyle="none",
                markerfacecolor=colour if filled else "white", markeredgewidth=1.6)
    return centre, lo, hi


def _add(data: FigureData, setting: str, variant: str, seeds, statistic: str, x, band) -> None:
    centre, lo, hi = band
    if not math.isfinite(centre):
        return
    data.add(setting, variant, seeds, statistic, x, centre)
    if math.isfinite(lo):
        data.add(setting, variant, seeds, f"{statistic}_low", x, lo)
        data.add(setting, variant, seeds, f"{statistic}_high", x, hi)


def oneshot(runs: Sequence[Run], out: str, pdf: bool = False, title: Optional[str] = None,
            csv: Optional[str] = None) -> List[str]:
    """One-shot methods as points: client scores (mean and worst 10% over clients) on the left, the
    test-set accuracy without and after fine-tuning on the right; per method the mean over seeds with
    the spread (min-max below 5 seeds, bootstrap 95% CI of the mean from 5 on) as an error bar."""
    from ..settings import is_one_shot

    other = [r for r in runs if not is_one_shot(r)]
    if other:
        raise InputError(other[0].path, f"{other[0].algorithm} is not a one-shot algorithm; draw it with "
                                        f"`plot convergence`")
    groups = group_by_algorithm(runs)
    setting_title, setting = setting_of(runs)
    variant = _variants(runs)
    data = FigureData()
    fig, (ax_c, ax_t) = new_figure(DOUBLE, ncols=2)
    ticks = []
    for i, ((key, rs), colour) in enumerate(zip(groups.items(), colours(len(groups)))):
        first, seeds = rs[0], [r.seed for r in rs]
        s_set, s_var = setting[id(first)], variant[id(first)]
        tuned = O.client_finetune_samples(first)
        y = -i  # methods from top to bottom
        mean = _points(ax_c, y + 0.13, [M.mean(r.client_accuracy) for r in rs], colour, "o", True)
        worst = _points(ax_c, y - 0.13, [M.worst10(r.client_accuracy) for r in rs], colour, "v", False)
        _add(data, s_set, s_var, seeds, "client_mean", tuned, mean)
        _add(data, s_set, s_var, seeds, "client_worst10", tuned, worst)
        before = _points(ax_t, y + 0.13, [r.gems_records.get("accuracy_before", np.nan) for r in rs], colour, "s",
                         False)
        after = _points(ax_t, y - 0.13, [r.gems_records.get("accuracy_after", np.nan) for r in rs], colour, "s", True)
        _add(data, s_set, s_var, seeds, "test_no_finetune", 0, before)
        _add(data, s_set, s_var, seeds, "test_finetuned", O.public_samples(first), after)
        n = f"{len(rs)} seeds" if len(rs) > 1 else f"seed {first.seed}"
        ticks.append(f"{wrap(shown(key), 30)}\n({O.client_model_short(first)}; {n})")
    for ax in (ax_c, ax_t):
        ax.set_yticks([-i for i in range(len(ticks))])
        ax.set_ylim(-len(ticks) + 0.5, 0.5)
        grid(ax)
    ax_c.set_yticklabels(ticks, fontsize=8.5)
    ax_t.set_yticklabels([])
    ax_c.set_xlabel("client test accuracy (fraction)")
    ax_c.set_title("Client scores (on the model named at the left)")
    ax_t.set_xlabel("test-set accuracy (fraction)")
    ax_t.set_title("Test set: without and after fine-tuning")
    black = dict(color="black", linestyle="none", markersize=8, markeredgewidth=1.6)
    below = dict(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    ax_c.legend(handles=[Line2D([], [], marker="o", label="mean over clients", **black),
                         Line2D([], [], marker="v", markerfacecolor="white", label="worst 10% of clients", **black)],
                **below)
    samples = sorted({O.public_samples(r) for r in runs} - {0})
    after = (f"after fine-tuning on {'/'.join(map(str, samples))} public samples" if samples
             else "after fine-tuning: none (gems.public_samples = 0)")
    ax_t.legend(handles=[Line2D([], [], marker="s", markerfacecolor="white", label="without fine-tuning", **black),
                         Line2D([], [], marker="s", label=after, **black)], **below)
    spread = "error bars: spread over seeds, min-max (bootstrap 95% CI of the mean from 5 seeds on)"
    fig.suptitle(title or f"One-shot methods: {setting_title}\n{spread}")
    return save(fig, out, pdf, data, csv)
