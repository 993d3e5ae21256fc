"""The figures. Every function writes a PNG of a fixed pixel size (figure size × dpi, no tight
bounding box) and, with ``pdf=True``, a PDF beside it; it returns the paths written."""

from __future__ import annotations

import math
import os
import textwrap
from typing import Dict, List, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator, NullLocator  # noqa: E402

from . import metrics as M  # noqa: E402
from .errors import InputError  # noqa: E402
from .results import Run  # noqa: E402

DPI = 150
SINGLE = (8.0, 5.0)   # one panel: 1200 x 750 px at 150 dpi
DOUBLE = (13.0, 5.0)  # two panels side by side: 1950 x 750 px at 150 dpi
WIDE = (11.0, 5.0)    # one panel with the legend outside on the right: 1650 x 750 px at 150 dpi

STYLE = {
    "font.size": 11,
    "axes.titlesize": 13,
    "axes.labelsize": 12,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "figure.titlesize": 14,
}


def pixel_size(figsize: Tuple[float, float], dpi: int = DPI) -> Tuple[int, int]:
    """(width, height) in pixels of a figure written by this module."""
    return (int(round(figsize[0] * dpi)), int(round(figsize[1] * dpi)))


matplotlib.rcParams.update(STYLE)


def _figure(figsize, ncols=1):
    fig, axes = plt.subplots(1, ncols, figsize=figsize, dpi=DPI, squeeze=False)
    return fig, list(axes[0])


def _save(fig, out: str, pdf: bool, dpi: int = DPI) -> List[str]:
    out = os.fspath(out)
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        plt.close(fig)
        raise InputError(out, f"cannot write: directory {parent} does not exist")
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=dpi)
    written = [out]
    if pdf:
        root, _ = os.path.splitext(out)
        fig.savefig(root + ".pdf", format="pdf")
        written.append(root + ".pdf")
    plt.close(fig)
    return written


def _colours(n: int):
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def _apply_style(ax):
    ax.grid(True, alpha=0.3)


# --------------------------------------------------------------------------- accuracy-hist


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


def accuracy_hist(runs: Sequence[Run], out: str, pdf: bool = False, bins: int = 20) -> List[str]:
    """Per-client final accuracy histogram (client counts) with a Gaussian KDE scaled to counts, runs
    side by side (α-FedAvg Fig. 3 style); titles name the algorithm variants (settings.variant_labels)."""
    from .settings import variant_labels

    fig, axes = _figure(DOUBLE, ncols=len(runs))
    colours = _colours(len(runs))
    all_acc = np.concatenate([M.finite(r.client_accuracy) for r in runs] or [np.zeros(0)])
    edges, (lo, hi) = accuracy_bins(all_acc, bins)
    width = edges[1] - edges[0]
    ymax = 0.0
    for ax, run, colour, name in zip(axes, runs, colours, variant_labels(runs)):
        a = M.finite(run.client_accuracy)
        counts, _, _ = ax.hist(a, bins=edges, color=colour, alpha=0.45, edgecolor="black", linewidth=0.6,
                               label=f"clients (K = {a.size})")
        ymax = max(ymax, float(np.max(counts)) if len(counts) else 0.0)
        xs = np.linspace(lo, hi, 400)
        kde_note = None
        if a.size >= 2 and np.ptp(a) > 0:
            from scipy.stats import gaussian_kde

            try:
                ys = gaussian_kde(a)(xs) * a.size * width  # density -> expected clients per bin
                ax.plot(xs, ys, color=colour, linewidth=2.2, label="Gaussian KDE × K × bin width")
                ymax = max(ymax, float(ys.max()))
            except (np.linalg.LinAlgError, ValueError):
                kde_note = "KDE not defined"
        else:
            kde_note = "KDE needs 2+ distinct values"
        if a.size:
            ax.axvline(float(np.mean(a)), color="black", linestyle="--", linewidth=1.3,
                       label=f"mean = {np.mean(a):.3f}")
        ax.set_title(legend_label(name, f"{run.dataset}, seed {run.seed}") + f"\nvariance = {M.variance(a):.3g}, "
                     f"worst 10% = {M.worst10(a):.3f}")
        ax.set_xlabel("final client test accuracy (fraction)")
        ax.set_ylabel(f"clients (count per bin of width {width:.3g})")
        if kde_note:
            ax.text(0.99, 0.80, kde_note, transform=ax.transAxes, ha="right", va="top", fontsize=9)
        ax.set_xlim(lo, hi)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        # one row of legend entries in the headroom above the bars (see the y limit below)
        ax.legend(loc="upper center", ncol=3, fontsize=9, columnspacing=1.0, handlelength=1.6)
        _apply_style(ax)
    for ax in axes:
        ax.set_ylim(0, ymax * 1.3 if ymax > 0 else 1)
    fig.suptitle("Distribution of final per-client accuracy")
    return _save(fig, out, pdf)


# --------------------------------------------------------------------------- sensitivity


def normalised_cumulative_sensitivity(s: np.ndarray) -> Optional[np.ndarray]:
    """PLayer-FL's plotted curve F~_l = Σ_{k≤l} s_k / s_1 for one client (ALGORITHMS.md §1.1)."""
    s = np.asarray(s, dtype=float)
    if s.size == 0 or not np.isfinite(s).all() or not s[0] > 0:
        return None
    return np.cumsum(s / s[0])


def split_label(p: int, name: str, layers: Sequence[str]) -> str:
    """Legend text of the split line: 'split after fc1 (fc1 federated)', 'split after conv3 (conv1..conv3
    federated)'; ``name`` is /playerfl/split_layer's attribute, layers[p-1] when it is empty."""
    last = name or layers[p - 1]
    federated = last if p == 1 else f"{layers[0]}..{last}"
    return f"split after {last} ({federated} federated)"


def sensitivity(run: Run, out: str, stage: str = "round0", pdf: bool = False) -> List[str]:
    if stage not in run.sensitivity:
        raise InputError(run.path, f"no /sensitivity/{stage} dataset")
    s = run.sensitivity[stage]
    layers = run.sensitivity_layers or [f"block {i + 1}" for i in range(s.shape[1])]
    if len(layers) != s.shape[1]:
        raise InputError(run.path, f"/sensitivity/layers has {len(layers)} names but /sensitivity/{stage} "
                                   f"has {s.shape[1]} columns")
    curves = [(k, normalised_cumulative_sensitivity(s[k])) for k in range(s.shape[0])]
    good = [(k, c) for k, c in curves if c is not None]
    if not good:
        raise InputError(run.path, f"/sensitivity/{stage}: no client has a positive, finite first-block "
                                   f"sensitivity to normalise by")
    fig, (ax,) = _figure(SINGLE)
    x = np.arange(len(layers))
    colours = _colours(len(good))
    show_each_in_legend = len(good) <= 10
    for (k, c), colour in zip(good, colours):
        ax.plot(x, c, marker="o", markersize=4, linewidth=1.2, color=colour, alpha=0.8,
                label=f"client {k}" if show_each_in_legend else None)
    mean_curve = np.mean(np.vstack([c for _, c in good]), axis=0)
    ax.plot(x, mean_curve, color="black", linewidth=2.5, label=f"mean over {len(good)} clients")
    if not show_each_in_legend:
        ax.plot([], [], color="grey", linewidth=1.2, label=f"{len(good)} clients (one line each)")
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels(layers, rotation=30 if len(layers) > 4 else 0, ha="right" if len(layers) > 4 else "center")
    ax.set_xlabel("layer block (model order)")
    ax.set_ylabel(r"cumulative sensitivity $\Sigma_{k \leq l}\, s_k / s_1$ (log scale)")
    if len(layers) == 1:
        raw = s[:, 0][np.isfinite(s[:, 0])]
        ax.text(0.5, 0.62, f"one layer block ({layers[0]}): the normalised curve is 1 for every client\n"
                           f"raw s_1 over clients: {raw.min():.3g} .. {raw.max():.3g}",
                transform=ax.transAxes, ha="center", va="center", fontsize=10,
                bbox=dict(facecolor="white", edgecolor="grey", alpha=0.9))
    skipped = len(curves) - len(good)
    title = f"Federation sensitivity, {stage}: {run.algorithm} ({run.dataset}, seed {run.seed})"
    if skipped:
        title += f"\n{skipped} client(s) without a positive first-block value left out"
    ax.set_title(title)
    if run.split_layer is not None:
        p, name = run.split_layer
        if 1 <= p <= len(layers):
            xs = p - 0.5  # between block p (federated) and block p+1 (local)
            lbl = split_label(p, name, layers)
            ax.axvline(xs, color="red", linestyle="--", linewidth=1.8, label=lbl)
    ax.legend(loc="upper left", ncol=2 if show_each_in_legend and len(good) > 5 else 1)
    _apply_style(ax)
    return _save(fig, out, pdf)


# --------------------------------------------------------------------------- convergence


def legend_label(key: str, extra: str) -> str:
    """``key`` with ``extra`` in its parentheses: "fedavg (extra)", "qffl (q=0; extra)"."""
    return f"{key[:-1]}; {extra})" if key.endswith(")") else f"{key} ({extra})"


def group_by_algorithm(runs: Sequence[Run]) -> Dict[str, List[Run]]:
    """{legend key: runs}: one key per algorithm variant (settings.variant_labels); "algorithm
    (setting)" when the runs span several settings (settings.py), the setting shortened to the parts in
    which the settings differ."""
    from .settings import setting_labels, short_labels, variant_labels

    labels = setting_labels(runs)
    many = len(set(labels)) > 1
    short = short_labels(labels)
    groups: Dict[str, List[Run]] = {}
    order = sorted(zip(labels, variant_labels(runs), runs), key=lambda x: (x[1], x[0], x[2].seed, x[2].path))
    for label, v, r in order:
        groups.setdefault(legend_label(v, short[label]) if many else v, []).append(r)
    return groups


def convergence_curves(runs: Sequence[Run]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rounds, mean, worst-10%) client accuracy per evaluated round, averaged over the runs (seeds) at
    the rounds all of them evaluated; rows of rounds that were not evaluated (NaN) are skipped."""
    curves = []
    for r in runs:
        rnd, acc = r.evaluated_rounds("client_accuracy")
        if acc.shape[0] == 0:
            raise InputError(r.path, "no evaluated /rounds/client_accuracy rows to plot")
        curves.append({int(t): (M.mean(row), M.worst10(row)) for t, row in zip(rnd, acc)})
    common = sorted(set.intersection(*[set(c) for c in curves]))
    if not common:
        raise InputError(runs[0].path, "the runs of one algorithm share no evaluated round")
    means = np.array([np.mean([c[t][0] for c in curves]) for t in common])
    worst = np.array([np.mean([c[t][1] for c in curves]) for t in common])
    return np.array(common, dtype=float), means, worst


def convergence(runs: Sequence[Run], out: str, pdf: bool = False, title: Optional[str] = None) -> List[str]:
    """Mean and worst-10% client accuracy per round; one colour per algorithm, averaged over seeds.

    An algorithm with a single evaluated round (one-shot GEMS and its baselines) is drawn as markers
    only: a filled circle for the mean, an open one for the worst 10%.
    """
    from matplotlib.lines import Line2D

    groups = group_by_algorithm(runs)
    fig, (ax,) = _figure(WIDE)
    handles = []
    single = curves = False
    for (key, rs), colour in zip(groups.items(), _colours(len(groups))):
        xs, means, worst = convergence_curves(rs)
        seeds = f"{len(rs)} seeds" if len(rs) > 1 else f"seed {rs[0].seed}"
        key = legend_label(key, seeds)  # wrapped below, so that long variant labels leave the axes room
        if xs.size == 1:
            single = True
            ax.plot(xs, means, color=colour, linestyle="none", marker="o", markersize=9)
            ax.plot(xs, worst, color=colour, linestyle="none", marker="o", markersize=9, markerfacecolor="white",
                    markeredgewidth=2)
            handles.append(Line2D([], [], color=colour, linestyle="none", marker="o", markersize=9,
                                  label=textwrap.fill(f"{key}, one evaluated round", 60)))
            continue
        curves = True
        mk = "o" if len(xs) <= 30 else None
        ax.plot(xs, means, color=colour, linestyle="-", linewidth=2, marker=mk, markersize=4)
        ax.plot(xs, worst, color=colour, linestyle="--", linewidth=1.6, marker=mk, markersize=3)
        handles.append(Line2D([], [], color=colour, linewidth=2, marker=mk, markersize=4,
                              label=textwrap.fill(key, 60)))
    if curves:
        handles.append(Line2D([], [], color="black", linestyle="-", linewidth=2, label="mean over clients"))
        handles.append(Line2D([], [], color="black", linestyle="--", linewidth=1.6, label="worst 10% of clients"))
    if single:
        handles.append(Line2D([], [], color="black", linestyle="none", marker="o", markersize=8,
                              label="one round: mean (filled)"))
        handles.append(Line2D([], [], color="black", linestyle="none", marker="o", markersize=8,
                              markerfacecolor="white", markeredgewidth=2, label="one round: worst 10% (open)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              fontsize=9 if len(handles) > 8 else 10)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    lo, hi = ax.get_xlim()
    if hi - lo < 2:  # a single round: one tick, centred, with room either side
        mid = round((lo + hi) / 2)
        ax.set_xlim(mid - 0.6, mid + 0.6)
        ax.set_xticks([mid])
    ax.set_xlabel("round (0-based)")
    ax.set_ylabel("client test accuracy (fraction)")
    datasets = sorted({r.dataset for r in runs})
    fig.suptitle(title or f"Convergence on {', '.join(datasets)} (curves averaged over seeds)")
    _apply_style(ax)
    return _save(fig, out, pdf)


# --------------------------------------------------------------------------- alpha-tradeoff


def parse_alphas(text: str) -> np.ndarray:
    """'LO..HI' (200 points, linear), 'LO..HI:STEP' or a comma list; every α must be > 0."""
    text = text.strip()
    try:
        if ".." in text:
            rng, _, step = text.partition(":")
            lo_s, hi_s = rng.split("..", 1)
            lo, hi = float(lo_s), float(hi_s)
            if not hi > lo:
                raise ValueError
            if step:
                st = float(step)
                if not st > 0:
                    raise ValueError
                vals = np.arange(lo, hi + st * 1e-9, st)
            else:
                vals = np.linspace(lo, hi, 200)
        else:
            vals = np.array([float(v) for v in text.split(",") if v.strip()])
    except ValueError:
        raise InputError("--alphas", f"cannot parse {text!r}: use LO..HI, LO..HI:STEP or a comma list")
    if vals.size == 0 or not np.all(vals > 0) or not np.all(np.isfinite(vals)):
        raise InputError("--alphas", f"{text!r}: every alpha must be a finite number > 0")
    return np.sort(vals)


DEFAULT_ALPHA_RANGE = (1.0, 20.0)


def default_alphas(chosen: Optional[float] = None) -> np.ndarray:
    """200 α spaced evenly on a log scale over 1..20, widened to chosen/2 .. 1.5 chosen when the run's
    chosen α lies near or outside that range (α-FedAvg's search can give α < 1)."""
    lo, hi = DEFAULT_ALPHA_RANGE
    if chosen is not None and math.isfinite(chosen) and chosen > 0:
        lo, hi = min(lo, chosen / 2.0), max(hi, chosen * 1.5)
    return np.geomspace(lo, hi, 200)


def alpha_tradeoff(run: Run, out: str, alphas: Optional[np.ndarray] = None, pdf: bool = False,
                   sample_weighted: bool = False) -> List[str]:
    """E(α) and J(α) from the run's final client accuracies. ``alphas`` None: default_alphas(chosen α);
    otherwise the given α, with the chosen α added when it lies outside them."""
    acc = np.asarray(run.client_accuracy, dtype=float)
    ok = np.isfinite(acc)
    a = acc[ok]
    if a.size == 0:
        raise InputError(run.path, "no finite final client accuracy")
    chosen = run.alpha if run.alpha is not None and math.isfinite(run.alpha) and run.alpha > 0 else None
    if alphas is None:
        alphas = default_alphas(chosen)
    elif chosen is not None and not (alphas[0] <= chosen <= alphas[-1]):
        # extend the given α out to the chosen one (with a margin), log-spaced
        ext = (np.geomspace(chosen / 1.5, alphas[0], 50) if chosen < alphas[0]
               else np.geomspace(alphas[-1], chosen * 1.5, 50))
        alphas = np.union1d(alphas, np.append(ext, chosen))
    alphas = np.asarray(alphas, dtype=float)
    w = None
    n = None if run.num_train is None else run.num_train[ok]
    if sample_weighted:
        if n is None:
            raise InputError(run.path, "--sample-weighted needs /clients/num_train")
        w = n / n.sum()
    E, J = M.alpha_tradeoff(a, alphas, w)
    fig, (ax1, ax2) = _figure(DOUBLE, ncols=2)
    ax1b = ax1.twinx()
    e1 = "sample-weighted mean" if sample_weighted else "unweighted mean"
    handles1 = ax1.plot(alphas, E, color="tab:blue", linewidth=2,
                        label=f"efficiency E(α) = Σ p_k a_k, left axis (E(1) = {e1})")
    handles1 += ax1b.plot(alphas, J, color="tab:orange", linewidth=2,
                          label="fairness J(α) = (Σ R_k)² / (K Σ R_k²), right axis")
    if n is not None and n.sum() > 0:
        eff = float(np.sum(n * a) / n.sum())
        handles1.append(ax1.axhline(eff, color="tab:blue", linestyle=":", linewidth=1.5,
                                    label=f"summary efficiency Σ (n_k/n) a_k = {eff:.3f} (sample-weighted)"))
    if alphas[-1] / alphas[0] >= 10:
        ax1.set_xscale("log")
        ticks = [t for t in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500) if alphas[0] <= t <= alphas[-1]]
        ax1.set_xticks(ticks)
        ax1.set_xticklabels([f"{t:g}" for t in ticks])
        ax1.minorticks_off()
    ax1.set_xlim(alphas[0], alphas[-1])
    ax1.set_xlabel("α (dimensionless)")
    ax1.set_ylabel("efficiency E(α) (accuracy, fraction)", color="tab:blue")
    ax1b.set_ylabel("fairness J(α) (Jain's index, in [1/K, 1])", color="tab:orange")
    ax1.tick_params(axis="y", colors="tab:blue")
    ax1b.tick_params(axis="y", colors="tab:orange")
    ax1.set_title("Efficiency and fairness against α")
    ax2.plot(E, J, color="tab:green", linewidth=2, label="α from %.3g to %.3g" % (alphas[0], alphas[-1]))
    ax2.scatter([E[0], E[-1]], [J[0], J[-1]], color="tab:green", zorder=3)
    ax2.annotate(f"α = {alphas[0]:.3g}", (E[0], J[0]), textcoords="offset points", xytext=(-8, 8),
                 ha="right", fontsize=10)
    ax2.annotate(f"α = {alphas[-1]:.3g}", (E[-1], J[-1]), textcoords="offset points", xytext=(8, -14),
                 ha="left", fontsize=10)
    ax2.margins(x=0.12, y=0.12)
    ax2.set_xlabel("efficiency E(α) (accuracy, fraction)")
    ax2.set_ylabel("fairness J(α) (Jain's index of R_k)")
    ax2.set_title("Trade-off: J against E")
    if chosen is not None:
        e_star, j_star = M.alpha_tradeoff(a, [chosen], w)
        handles1.append(ax1.axvline(chosen, color="red", linestyle="--", linewidth=1.6,
                                    label=f"chosen α = {chosen:.3g} (/alpha_fedavg/alpha)"))
        ax2.scatter(e_star, j_star, color="red", marker="*", s=180, zorder=4,
                    label=f"chosen α = {chosen:.3g} (E = {e_star[0]:.3f}, J = {j_star[0]:.3f})")
    # legends below the panels, so that they hide no curve
    ax1.legend(handles=handles1, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, fontsize=9)
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, fontsize=9)
    for ax in (ax1, ax2):
        _apply_style(ax)
    weights = "p_k ∝ w_k^(1/α) a_k^(1/α−1), w_k = n_k/n" if sample_weighted else "p_k ∝ a_k^(1/α−1)"
    fig.suptitle(f"α-FedAvg trade-off from final client accuracies ({weights}): "
                 f"{run.algorithm} ({run.dataset}, seed {run.seed}, K = {a.size})")
    return _save(fig, out, pdf)


# --------------------------------------------------------------------------- gems-finetune


def gems_finetune(runs: Sequence[Run], out: str, pdf: bool = False, title: Optional[str] = None) -> List[str]:
    """Accuracy after fine-tuning against the number of public samples, one line per method, on a
    symmetric-log x axis (linear up to the smallest positive sample count) so that 0 shows."""
    for r in runs:
        if r.gems_finetune is None:
            raise InputError(r.path, "no /gems/finetune group (needs datasets samples and accuracy)")
    groups = group_by_algorithm(runs)
    fig, (ax,) = _figure(SINGLE)
    all_x = set()
    for (key, rs), colour in zip(groups.items(), _colours(len(groups))):
        points: Dict[float, List[float]] = {}
        for r in rs:
            for s, a in zip(*r.gems_finetune):
                if math.isfinite(a):
                    points.setdefault(float(s), []).append(float(a))
        xs = np.array(sorted(points))
        all_x.update(xs.tolist())
        ys = np.array([np.mean(points[x]) for x in xs])
        sd = np.array([np.std(points[x]) for x in xs])
        lbl = legend_label(key, f"{len(rs)} runs, mean ± sd" if len(rs) > 1 else f"seed {rs[0].seed}")
        ax.plot(xs, ys, color=colour, marker="o", linewidth=2, label=lbl)
        if len(rs) > 1:
            ax.fill_between(xs, ys - sd, ys + sd, color=colour, alpha=0.2)
    positive = sorted(x for x in all_x if x > 0)
    if positive:
        ax.set_xscale("symlog", linthresh=positive[0], linscale=0.5)
        ticks = sorted(all_x)
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlim(min(ticks) - 0.2 * positive[0] if min(ticks) <= 0 else min(ticks) / 1.5, max(ticks) * 1.5)
    ax.set_xlabel("public samples used for fine-tuning (count; symmetric log scale)")
    ax.set_ylabel("test accuracy after fine-tuning (fraction)")
    datasets = sorted({r.dataset for r in runs})
    ax.set_title(title or f"Fine-tuning with public samples ({', '.join(datasets)})")
    ax.legend(loc="best", fontsize=9)
    _apply_style(ax)
    return _save(fig, out, pdf)


# --------------------------------------------------------------------------- scaling


def read_scaling_csv(path: str):
    import csv

    if not os.path.exists(path):
        raise InputError(path, "no such file")
    need = {"mode", "ranks", "clients", "seconds_per_round"}
    rows = []
    try:
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            cols = {c.strip() for c in (reader.fieldnames or [])}
            if not need <= cols:
                raise InputError(path, f"scaling CSV needs columns mode,ranks,clients,seconds_per_round; "
                                       f"missing {', '.join(sorted(need - cols))}")
            for i, raw in enumerate(reader, start=2):
                row = {k.strip(): (v or "").strip() for k, v in raw.items() if k is not None}
                mode = row["mode"].lower()
                if mode not in ("strong", "weak"):
                    raise InputError(path, f"line {i}: mode must be strong or weak, got {row['mode']!r}")
                try:
                    ranks, clients, sec = int(row["ranks"]), int(row["clients"]), float(row["seconds_per_round"])
                except ValueError:
                    raise InputError(path, f"line {i}: ranks and clients must be integers and "
                                           f"seconds_per_round a number")
                if ranks < 1 or not sec > 0:
                    raise InputError(path, f"line {i}: ranks must be >= 1 and seconds_per_round > 0")
                rows.append((mode, ranks, clients, sec))
    except UnicodeDecodeError:
        raise InputError(path, "not a text CSV file")
    if not rows:
        raise InputError(path, "scaling CSV has no data rows")
    return rows


def scaling_series(rows):
    """Per mode: ranks, median seconds per round, parallel efficiency, baseline ranks.

    Strong scaling: E(p) = t_1 / (p t_p); weak scaling: E(p) = t_1 / t_p. Repeated rows for one
    (mode, ranks) are reduced to their median. Without a 1-rank row the smallest rank count p0 is the
    baseline: strong E = p0 t_p0 / (p t_p), weak E = t_p0 / t_p.
    """
    out = {}
    for mode in ("strong", "weak"):
        by: Dict[int, List[float]] = {}
        for m, p, _, t in rows:
            if m == mode:
                by.setdefault(p, []).append(t)
        if not by:
            continue
        ps = np.array(sorted(by))
        ts = np.array([float(np.median(by[p])) for p in ps])
        p0, t0 = ps[0], ts[0]
        eff = (p0 * t0) / (ps * ts) if mode == "strong" else t0 / ts
        out[mode] = (ps, ts, eff, int(p0))
    return out


def scaling(csv_path: str, out: str, pdf: bool = False) -> List[str]:
    rows = read_scaling_csv(csv_path)
    series = scaling_series(rows)
    fig, (ax1, ax2) = _figure(DOUBLE, ncols=2)
    colours = {"strong": "tab:blue", "weak": "tab:orange"}
    for mode, (ps, ts, eff, p0) in series.items():
        clients = sorted({c for m, _, c, _ in rows if m == mode})
        cl = f"{clients[0]} clients" if len(clients) == 1 else "clients ∝ ranks"
        base = "" if p0 == 1 else f", baseline {p0} ranks"
        ax1.plot(ps, ts, marker="o", linewidth=2, color=colours[mode], label=f"{mode} scaling ({cl})")
        ax2.plot(ps, eff, marker="o", linewidth=2, color=colours[mode], label=f"{mode} scaling{base}")
        if mode == "strong" and len(ps) > 1:
            ax1.plot(ps, ts[0] * ps[0] / ps, color=colours[mode], linestyle=":", linewidth=1.3,
                     label="ideal strong scaling (t ∝ 1/p)")
    all_p = sorted({p for _, p, _, _ in rows})
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log")
    ax1.set_xticks(all_p)
    ax1.set_xticklabels([str(p) for p in all_p])
    from matplotlib.ticker import FormatStrFormatter

    ax1.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax1.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax1.tick_params(axis="y", which="minor", labelsize=9)
    ax1.set_xlabel("MPI ranks")
    ax1.set_ylabel("wall time per round (s)")
    ax1.set_title("Time per round")
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(all_p)
    ax2.set_xticklabels([str(p) for p in all_p])
    ax2.axhline(1.0, color="grey", linestyle=":", linewidth=1.2, label="ideal (efficiency 1)")
    ax2.set_ylim(0, max(1.1, max(float(np.max(s[2])) for s in series.values()) * 1.05))
    ax2.set_xlabel("MPI ranks")
    ax2.set_ylabel("parallel efficiency (fraction)")
    ax2.set_title("Parallel efficiency (strong: t₁/(p·tₚ), weak: t₁/tₚ)")
    for ax in (ax1, ax2):
        ax.legend(loc="best")
        _apply_style(ax)
    fig.suptitle(f"Scaling: {os.path.basename(csv_path)}")
    return _save(fig, out, pdf)
