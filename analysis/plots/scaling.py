"""`plot scaling`: seconds per round and parallel efficiency against MPI ranks, from the CSV that
jobs/scaling.sbatch, jobs/local/scaling.sh and bench/scaling.sh write."""

from __future__ import annotations

import os
from typing import Dict, List, Optional

import numpy as np
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator

from ..errors import InputError
from ..figdata import FigureData
from .common import DOUBLE, grid, new_figure, save


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


def _clients_text(rows, mode: str) -> str:
    """"10 clients" (fixed), "10 clients per rank" (weak scaling with clients ∝ ranks) or "clients 4..16"."""
    pairs = sorted({(p, c) for m, p, c, _ in rows if m == mode})
    clients = sorted({c for _, c in pairs})
    if len(clients) == 1:
        return f"{clients[0]} clients"
    per_rank = {c / p for p, c in pairs}
    if len(per_rank) == 1:
        return f"{next(iter(per_rank)):g} clients per rank"
    return f"{clients[0]}..{clients[-1]} clients"


def _time_axis(ax, values: np.ndarray) -> None:
    """A log y axis whose labelled ticks cover the data: ~6 evenly spaced round numbers over the
    range drawn (a log axis' own labels can all fall outside a narrow range such as 1.1..1.4 s)."""
    lo, hi = float(np.min(values)), float(np.max(values))
    ax.set_yscale("log")
    ax.set_ylim(lo / 1.08, hi * 1.08)
    ticks = [t for t in MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]).tick_values(lo / 1.08, hi * 1.08)
             if lo / 1.08 <= t <= hi * 1.08 and t > 0]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels([f"{t:g}" for t in ticks])


def scaling(csv_path: str, out: str, pdf: bool = False, csv: Optional[str] = None) -> List[str]:
    rows = read_scaling_csv(csv_path)
    series = scaling_series(rows)
    fig, (ax1, ax2) = new_figure(DOUBLE, ncols=2)
    colours = {"strong": "tab:blue", "weak": "tab:orange"}
    data = FigureData()
    drawn = []
    titles = []
    for mode, (ps, ts, eff, p0) in series.items():
        cl = _clients_text(rows, mode)
        titles.append(f"{mode} ({cl})")
        base = "" if p0 == 1 else f", baseline {p0} ranks"
        ax1.plot(ps, ts, marker="o", linewidth=2, color=colours[mode], label=f"{mode} scaling ({cl})")
        ax2.plot(ps, eff, marker="o", linewidth=2, color=colours[mode], label=f"{mode} scaling{base}")
        data.add_series("", mode, "", "seconds_per_round", ps, ts)
        data.add_series("", mode, "", "efficiency", ps, eff)
        drawn.append(ts)
        if mode == "strong" and len(ps) > 1:
            ideal = ts[0] * ps[0] / ps
            ax1.plot(ps, ideal, color=colours[mode], linestyle=":", linewidth=1.3,
                     label="ideal strong scaling (t ∝ 1/p)")
            data.add_series("", mode, "", "ideal_seconds_per_round", ps, ideal)
            drawn.append(ideal)
    all_p = sorted({p for _, p, _, _ in rows})
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(all_p)
        ax.set_xticklabels([str(p) for p in all_p])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("MPI ranks")
    _time_axis(ax1, np.concatenate(drawn))
    ax1.set_ylabel("wall time per round (s, log scale)")
    ax1.set_title("Time per round (median of repeats)")
    ax2.axhline(1.0, color="grey", linestyle=":", linewidth=1.2, label="ideal (efficiency 1)")
    ax2.set_ylim(0, max(1.1, max(float(np.max(s[2])) for s in series.values()) * 1.05))
    ax2.set_ylabel("parallel efficiency (fraction)")
    ax2.set_title("Parallel efficiency (strong: t₁/(p·tₚ), weak: t₁/tₚ)")
    for ax in (ax1, ax2):
        ax.legend(loc="best")
        grid(ax)
    fig.suptitle(f"fedsilo scaling, {min(all_p)} to {max(all_p)} MPI ranks: " + "; ".join(titles))
    return save(fig, out, pdf, data, csv)
