"""The numbers behind a figure, as one tidy table (``plot ... --csv FILE``).

Every figure writes exactly the numbers it draws, one per row, with the columns

    setting, algorithm, seed, statistic, x, y

``setting`` is the setting label (docs/analysis.md, "Settings"; empty where the figure has none),
``algorithm`` the algorithm variant label (code names, as in the tables), ``seed`` the seed of a
per-run value or the seeds a value summarises joined by ";", ``statistic`` what the row holds
(documented per figure), and (x, y) the point drawn. Numbers are written at full precision
(``repr``); a missing value is empty, NaN is ``nan`` and an unbounded ε is ``inf``.
"""

from __future__ import annotations

import csv
import math
import os
from typing import List, Sequence

from .errors import InputError

COLUMNS = ("setting", "algorithm", "seed", "statistic", "x", "y")


def seeds_text(seeds: Sequence[int]) -> str:
    return ";".join(str(s) for s in seeds)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if hasattr(value, "item"):  # numpy scalars
        return _cell(value.item())
    return str(value)


class FigureData:
    """Rows of one figure's table, in the order they were drawn."""

    def __init__(self) -> None:
        self.rows: List[tuple] = []

    def add(self, setting: str, algorithm: str, seed, statistic: str, x, y) -> None:
        seed = seeds_text(seed) if isinstance(seed, (list, tuple)) else seed
        self.rows.append((setting, algorithm, seed, statistic, x, y))

    def add_series(self, setting: str, algorithm: str, seed, statistic: str, xs, ys) -> None:
        for x, y in zip(xs, ys):
            self.add(setting, algorithm, seed, statistic, x, y)

    def write(self, path: str) -> str:
        path = os.fspath(path)
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise InputError(path, f"cannot write: directory {parent} does not exist")
        try:
            with open(path, "w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh, lineterminator="\n")
                w.writerow(COLUMNS)
                for row in self.rows:
                    w.writerow([_cell(c) for c in row])
        except OSError as exc:
            raise InputError(path, f"cannot write: {exc.strerror or exc}")
        return path
