"""`plot sensitivity`: PLayer-FL's per-client normalised cumulative federation sensitivity per layer
block, or for a one-block model the raw sensitivity per client. A client that cannot be drawn is
left out with the reason: not selected (or dropped) in that round, its update dropped as diverged,
or a first-block value that cannot normalise the curve."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np

from ..errors import InputError
from ..figdata import FigureData
from ..results import Run
from .common import SINGLE, colours, grid, new_figure, save, setting_of, shown


def normalised_cumulative_sensitivity(s: np.ndarray) -> Optional[np.ndarray]:
    """PLayer-FL's plotted curve F~_l = Σ_{k≤l} s_k / s_1 for one client (Elhussein et al.,
    arXiv 2502.08829); None when s_1 is not positive and finite."""
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


def _stage_round(stage: str) -> str:
    return "round 0" if stage == "round0" else "the last round"


def absence_reason(run: Run, stage: str, client: int, first_block: float) -> str:
    """Why a client's curve is missing, from /rounds/participated of the round the stage measures
    (1 took part, 0 not selected or dropped out, -1 diverged and dropped) and its first-block value."""
    part = run.rounds.get("participated")
    when = _stage_round(stage)
    if part is not None and part.ndim == 2 and part.shape[0] > 0 and client < part.shape[1]:
        p = part[0 if stage == "round0" else -1, client]
        if p == 0:
            dropout = run.float_option("fl.dropout", 0.0)
            return f"not selected in {when}" if dropout == 0 else f"not selected or dropped out in {when}"
        if p == -1:
            return f"update diverged and dropped in {when}"
    if not np.isfinite(first_block):
        return "no sensitivity recorded"
    return "first-block sensitivity not positive (cannot normalise)"


def _absence_note(reasons: Dict[int, str], total: int) -> str:
    by_reason: Dict[str, List[int]] = {}
    for k, why in sorted(reasons.items()):
        by_reason.setdefault(why, []).append(k)
    parts = [f"{len(ks)} {why} ({', '.join(map(str, ks[:8]))}{', ...' if len(ks) > 8 else ''})"
             for why, ks in by_reason.items()]
    return f"{len(reasons)} of {total} clients not shown: " + "; ".join(parts)


def _one_block(ax, run: Run, stage: str, s: np.ndarray, layer: str, data: FigureData, setting: str) -> Dict[int, str]:
    """A one-block model: the normalised curve is 1 for everyone, so the raw s_1 per client is drawn."""
    raw = s[:, 0]
    ok = np.flatnonzero(np.isfinite(raw) & (raw > 0))
    drawn = set(ok.tolist())
    reasons = {k: absence_reason(run, stage, k, raw[k]) for k in range(raw.size) if k not in drawn}
    if ok.size == 0:
        raise InputError(run.path, f"/sensitivity/{stage}: no client has a positive, finite value to draw ("
                                   + _absence_note(reasons, raw.size) + ")")
    ax.scatter(ok, raw[ok], color="tab:blue", s=36, zorder=3, label=f"s_1 of block {layer}, per client")
    data.add_series(setting, run.algorithm, run.seed, "s1", ok, raw[ok])
    ax.set_yscale("log")
    ax.set_xlabel("client")
    ax.set_xticks(ok if ok.size <= 20 else ax.get_xticks())
    ax.set_ylabel(f"federation sensitivity s_1 of {layer} (log scale)")
    return reasons


def _blocks(ax, run: Run, stage: str, s: np.ndarray, layers: List[str], data: FigureData,
            setting: str) -> Dict[int, str]:
    curves = [(k, normalised_cumulative_sensitivity(s[k])) for k in range(s.shape[0])]
    good = [(k, c) for k, c in curves if c is not None]
    reasons = {k: absence_reason(run, stage, k, s[k, 0]) for k, c in curves if c is None}
    if not good:
        raise InputError(run.path, f"/sensitivity/{stage}: no client's curve can be drawn ("
                                   + _absence_note(reasons, s.shape[0]) + ")")
    x = np.arange(len(layers))
    each_in_legend = len(good) <= 10
    for (k, c), colour in zip(good, colours(len(good))):
        ax.plot(x, c, marker="o", markersize=4, linewidth=1.2, color=colour, alpha=0.8,
                label=f"client {k}" if each_in_legend else None)
        data.add_series(setting, run.algorithm, run.seed, f"client {k}", layers, c)
    mean_curve = np.mean(np.vstack([c for _, c in good]), axis=0)
    ax.plot(x, mean_curve, color="black", linewidth=2.5, label=f"mean over {len(good)} clients")
    data.add_series(setting, run.algorithm, run.seed, "mean", layers, mean_curve)
    if not each_in_legend:
        ax.plot([], [], color="grey", linewidth=1.2, label=f"{len(good)} clients (one line each)")
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels(layers, rotation=30 if len(layers) > 4 else 0, ha="right" if len(layers) > 4 else "center")
    ax.set_xlabel("layer block (model order)")
    ax.set_ylabel(r"cumulative sensitivity $\Sigma_{k \leq l}\, s_k / s_1$ (log scale)")
    if run.split_layer is not None:
        p, name = run.split_layer
        if 1 <= p <= len(layers):
            ax.axvline(p - 0.5, color="red", linestyle="--", linewidth=1.8, label=split_label(p, name, layers))
            data.add(setting, run.algorithm, run.seed, "split_after", layers[p - 1], p)
    ax.legend(loc="upper left", ncol=2 if each_in_legend and len(good) > 5 else 1)
    return reasons


def sensitivity(run: Run, out: str, stage: str = "round0", pdf: bool = False, csv: Optional[str] = None) -> List[str]:
    if stage not in run.sensitivity:
        raise InputError(run.path, f"no /sensitivity/{stage} dataset")
    s = run.sensitivity[stage]
    layers = run.sensitivity_layers or [f"block {i + 1}" for i in range(s.shape[1])]
    if len(layers) != s.shape[1]:
        raise InputError(run.path, f"/sensitivity/layers has {len(layers)} names but /sensitivity/{stage} "
                                   f"has {s.shape[1]} columns")
    setting_title, setting = setting_of([run])
    fig, (ax,) = new_figure(SINGLE)
    data = FigureData()
    if len(layers) == 1:
        reasons = _one_block(ax, run, stage, s, layers[0], data, setting[id(run)])
    else:
        reasons = _blocks(ax, run, stage, s, layers, data, setting[id(run)])
    grid(ax)
    title = (f"Federation sensitivity after local training in {_stage_round(stage)}: "
             f"{shown(run.algorithm)}, seed {run.seed}\n{setting_title}")
    if len(layers) == 1:
        title += f"\none layer block ({layers[0]}): raw s_1 per client (the normalised curve is 1 for all)"
    ax.set_title(title, fontsize=11)
    rect = None
    if reasons:
        fig.text(0.01, 0.015, _absence_note(reasons, s.shape[0]), fontsize=8.5, ha="left", va="bottom")
        rect = (0, 0.05, 1, 1)
    return save(fig, out, pdf, data, csv, rect=rect)
