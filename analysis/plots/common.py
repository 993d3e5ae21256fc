"""What every figure shares: fixed pixel sizes, the style, one colour, marker and dash pattern per
series, the saving of PNG / PDF / CSV, and the grouping of runs into legend entries."""

from __future__ import annotations

import os
import textwrap
from typing import Dict, List, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..errors import InputError  # noqa: E402
from ..figdata import FigureData  # noqa: E402
from ..names import display_label  # noqa: E402
from ..results import Run  # noqa: E402

DPI = 150
SINGLE = (8.0, 5.0)     # one panel: 1200 x 750 px at 150 dpi
DOUBLE = (13.0, 5.0)    # two panels side by side: 1950 x 750 px
TRIPLE = (15.0, 5.0)    # three panels side by side: 2250 x 750 px
WIDE = (14.0, 5.0)      # two panels with the legend outside on the right: 2100 x 750 px

STYLE = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 9,
    "figure.titlesize": 13,
}
matplotlib.rcParams.update(STYLE)

# one marker and one dash pattern per series, so that series that overlap stay visible
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h")
DASHES = ("-", "--", "-.", ":", (0, (5, 1.5)), (0, (3, 1, 1, 1, 1, 1)))


def pixel_size(figsize: Tuple[float, float], dpi: int = DPI) -> Tuple[int, int]:
    """(width, height) in pixels of a figure written by this package."""
    return (int(round(figsize[0] * dpi)), int(round(figsize[1] * dpi)))


def new_figure(figsize, ncols=1):
    fig, axes = plt.subplots(1, ncols, figsize=figsize, dpi=DPI, squeeze=False)
    return fig, list(axes[0])


def check_writable(path: str) -> None:
    parent = os.path.dirname(os.path.abspath(os.fspath(path)))
    if not os.path.isdir(parent):
        raise InputError(path, f"cannot write: directory {parent} does not exist")


def save(fig, out: str, pdf: bool, data: Optional[FigureData] = None, csv: Optional[str] = None,
         rect: Optional[Tuple[float, float, float, float]] = None) -> List[str]:
    """Write the PNG (and the PDF beside it), and with ``csv`` the figure's numbers; the paths written.
    ``rect``: the part of the figure tight_layout may fill (room for a note below the panels)."""
    out = os.fspath(out)
    try:
        check_writable(out)
        if csv is not None:
            check_writable(csv)
    except InputError:
        plt.close(fig)
        raise
    if rect is None:
        fig.tight_layout()
    else:
        fig.tight_layout(rect=rect)
    fig.savefig(out, format="png", dpi=DPI)
    written = [out]
    if pdf:
        root, _ = os.path.splitext(out)
        fig.savefig(root + ".pdf", format="pdf")
        written.append(root + ".pdf")
    plt.close(fig)
    if csv is not None:
        written.append((data or FigureData()).write(csv))
    return written


def colours(n: int):
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def grid(ax) -> None:
    ax.grid(True, alpha=0.3)


def wrap(text: str, width: int = 42) -> str:
    return textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False)


def legend_label(key: str, extra: str) -> str:
    """``key`` with ``extra`` in its parentheses: "fedavg (extra)", "qffl (q=0; extra)"."""
    return f"{key[:-1]}; {extra})" if key.endswith(")") else f"{key} ({extra})"


def seeds_phrase(runs: Sequence[Run]) -> str:
    """"seed 3" or "n = 4 seeds" (no-break spaces: a wrapped legend keeps it on one line)."""
    return f"seed\u00a0{runs[0].seed}" if len(runs) == 1 else f"n\u00a0=\u00a0{len(runs)}\u00a0seeds"


def group_by_algorithm(runs: Sequence[Run]) -> Dict[str, List[Run]]:
    """{legend key: runs}: one key per algorithm variant (settings.variant_labels); "algorithm
    (setting)" when the runs span several settings (settings.py), the setting shortened to the parts in
    which the settings differ. Keys are code names; figures show them through display_label."""
    from ..settings import setting_labels, short_labels, variant_labels

    labels = setting_labels(runs)
    many = len(set(labels)) > 1
    short = short_labels(labels)
    groups: Dict[str, List[Run]] = {}
    order = sorted(zip(labels, variant_labels(runs), runs), key=lambda x: (x[1], x[0], x[2].seed, x[2].path))
    for label, v, r in order:
        groups.setdefault(legend_label(v, short[label]) if many else v, []).append(r)
    return groups


def setting_of(runs: Sequence[Run]) -> Tuple[str, Dict[int, str]]:
    """(title part, {id(run): setting label}): the one setting's label, or "N settings"."""
    from ..settings import setting_labels

    labels = setting_labels(runs)
    distinct = sorted(set(labels))
    title = distinct[0] if len(distinct) == 1 else f"{len(distinct)} settings"
    return title, {id(r): s for r, s in zip(runs, labels)}


def shown(key: str) -> str:
    """A legend key as a reader sees it: display names for the algorithm."""
    return display_label(key)
