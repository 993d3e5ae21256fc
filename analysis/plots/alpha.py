"""`plot alpha-tradeoff`: α-FedAvg's efficiency E(α) and fairness J(α) on a run's final client
accuracies, with the run's own accuracy floor and weighting, and the α the run chose."""

from __future__ import annotations

import math
from typing import List, Optional

import numpy as np

from .. import metrics as M
from ..errors import InputError
from ..figdata import FigureData
from ..results import Run
from .common import TRIPLE, grid, new_figure, save, setting_of, shown, wrap

DEFAULT_ALPHA_RANGE = (1.0, 20.0)


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


def default_alphas(chosen: Optional[float] = None) -> np.ndarray:
    """200 α spaced evenly on a log scale over 1..20, widened to chosen/2 .. 1.5 chosen when the run's
    chosen α lies near or outside that range (α-FedAvg's search can give α < 1)."""
    lo, hi = DEFAULT_ALPHA_RANGE
    if chosen is not None and math.isfinite(chosen) and chosen > 0:
        lo, hi = min(lo, chosen / 2.0), max(hi, chosen * 1.5)
    return np.geomspace(lo, hi, 200)


def chosen_alpha(run: Run) -> Optional[float]:
    """/alpha_fedavg/alpha when it is a positive number (NaN: the run never chose one)."""
    a = run.alpha
    return a if a is not None and math.isfinite(a) and a > 0 else None


def how_chosen(run: Run) -> str:
    """How the run came by its α, from /alpha_fedavg/search_round and efficiency_target."""
    rnd = run.alpha_records.get("search_round")
    target = run.alpha_records.get("efficiency_target")
    if rnd is None or not math.isfinite(rnd):
        return "/alpha_fedavg/alpha"
    target_text = f" for E_T = {target:.3g}" if target is not None and math.isfinite(target) else ""
    if rnd == -1:
        return "fixed by alpha_fedavg.alpha"
    if rnd == -2:
        return f"searched before training on the reference accuracies{target_text}"
    return f"searched on the reports of round {int(rnd)}{target_text}"


def _alpha_axis(alphas: Optional[np.ndarray], chosen: Optional[float]) -> np.ndarray:
    if alphas is None:
        return default_alphas(chosen)
    if chosen is not None and not (alphas[0] <= chosen <= alphas[-1]):
        # extend the given α out to the chosen one (with a margin), log-spaced
        ext = (np.geomspace(chosen / 1.5, alphas[0], 50) if chosen < alphas[0]
               else np.geomspace(alphas[-1], chosen * 1.5, 50))
        alphas = np.union1d(alphas, np.append(ext, chosen))
    return np.asarray(alphas, dtype=float)


def _log_alpha_axis(ax, alphas: np.ndarray) -> None:
    if alphas[-1] / alphas[0] >= 10:
        ax.set_xscale("log")
        ticks = [t for t in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500) if alphas[0] <= t <= alphas[-1]]
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" for t in ticks])
        ax.minorticks_off()
    if alphas[-1] > alphas[0]:
        ax.set_xlim(alphas[0], alphas[-1])
    else:  # a single α: a point with room either side
        ax.set_xlim(alphas[0] / 1.5, alphas[0] * 1.5)
    ax.set_xlabel("α")


def alpha_tradeoff(run: Run, out: str, alphas: Optional[np.ndarray] = None, pdf: bool = False,
                   sample_weighted: Optional[bool] = None, csv: Optional[str] = None) -> List[str]:
    """E(α), J(α) and J against E from the run's finite final client accuracies, clamped to the run's
    alpha_fedavg.accuracy_floor; weighted by n_k as the run was (alpha_fedavg.weighted) unless
    ``sample_weighted`` says otherwise. ``alphas`` None: default_alphas(chosen α); otherwise the given
    α, with the chosen α added when it lies outside them."""
    acc = np.asarray(run.client_accuracy, dtype=float)
    ok = np.isfinite(acc)
    excluded = run.alpha_excluded
    n_excluded = 0
    if excluded is not None and excluded.size == acc.size:  # weight 0 in the run: not in its trade-off
        n_excluded = int(np.sum(ok & excluded))
        ok &= ~excluded
    a = acc[ok]
    if a.size == 0:
        raise InputError(run.path, "no finite final client accuracy (of a client not excluded by the report check)")
    floor = run.float_option("alpha_fedavg.accuracy_floor", M.ALPHA_ACCURACY_FLOOR)
    weighted = run.bool_option("alpha_fedavg.weighted") if sample_weighted is None else sample_weighted
    n = None if run.num_train is None else run.num_train[ok]
    w = None
    if weighted:
        if n is None:
            raise InputError(run.path, "the sample-weighted trade-off needs /clients/num_train")
        w = n / n.sum()
    chosen = chosen_alpha(run)
    alphas = _alpha_axis(alphas, chosen)
    E, J = M.alpha_tradeoff(a, alphas, w, floor)
    _, setting = setting_of([run])
    label, seed = run.algorithm, run.seed
    data = FigureData()
    data.add_series(setting[id(run)], label, seed, "E", alphas, E)
    data.add_series(setting[id(run)], label, seed, "J", alphas, J)

    fig, (ax_e, ax_j, ax_t) = new_figure(TRIPLE, ncols=3)
    ax_e.plot(alphas, E, color="tab:blue", linewidth=2, label="E(α) = Σ p_k a_k")
    eff = M.efficiency(run.client_accuracy, run.num_train)  # the summary's: every client with a score
    if math.isfinite(eff):
        ax_e.axhline(eff, color="grey", linestyle=":", linewidth=1.5,
                     label=f"summary efficiency Σ (n_k/n) a_k = {eff:.3f}")
        data.add(setting[id(run)], label, seed, "summary_efficiency", None, eff)
    ax_j.plot(alphas, J, color="tab:orange", linewidth=2, label="J(α) = (Σ R_k)² / (K Σ R_k²)")
    ax_t.plot(E, J, color="tab:green", linewidth=2, label=f"α from {alphas[0]:.3g} to {alphas[-1]:.3g}")
    ax_t.scatter([E[0], E[-1]], [J[0], J[-1]], color="tab:green", zorder=3)
    ax_t.annotate(f"α = {alphas[0]:.3g}", (E[0], J[0]), textcoords="offset points", xytext=(-8, 8), ha="right")
    ax_t.annotate(f"α = {alphas[-1]:.3g}", (E[-1], J[-1]), textcoords="offset points", xytext=(8, -14), ha="left")
    if chosen is not None:
        (e_star,), (j_star,) = M.alpha_tradeoff(a, [chosen], w, floor)
        data.add(setting[id(run)], label, seed, "chosen_E", chosen, e_star)
        data.add(setting[id(run)], label, seed, "chosen_J", chosen, j_star)
        text = wrap(f"chosen α = {chosen:.3g} ({how_chosen(run)})", 52)
        for ax, y in ((ax_e, e_star), (ax_j, j_star)):
            ax.axvline(chosen, color="red", linestyle="--", linewidth=1.4, label=text)
            ax.scatter([chosen], [y], color="red", marker="*", s=160, zorder=4)
        ax_t.scatter([e_star], [j_star], color="red", marker="*", s=180, zorder=4,
                     label=f"chosen α = {chosen:.3g}: E = {e_star:.3f}, J = {j_star:.3f}")
    for ax in (ax_e, ax_j):
        _log_alpha_axis(ax, alphas)
    ax_e.set_ylabel("efficiency E(α) (accuracy, fraction)")
    ax_j.set_ylabel("fairness J(α) (Jain's index of R_k)")
    ax_e.set_title("Efficiency against α")
    ax_j.set_title("Fairness against α")
    ax_t.margins(x=0.12, y=0.12)
    ax_t.set_xlabel("efficiency E(α)")
    ax_t.set_ylabel("fairness J(α)")
    ax_t.set_title("Trade-off: J against E")
    for ax in (ax_e, ax_j, ax_t):  # legends below the panels, so that they hide no curve
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8.5)
        grid(ax)
    weights = "p_k ∝ (n_k/n)^(1/α) a_k^(1/α−1)" if weighted else "p_k ∝ a_k^(1/α−1)"
    excluded_text = f" ({n_excluded} excluded by the report check)" if n_excluded else ""
    fig.suptitle(f"α-fair trade-off on the final client accuracies: {shown(label)}, seed {seed}, "
                 f"K = {a.size}{excluded_text}, "
                 f"{setting[id(run)]}\n{weights}, a_k clamped to [{floor:g}, 1] (the run's "
                 f"alpha_fedavg.accuracy_floor)")
    return save(fig, out, pdf, data, csv)
