"""The `summary` and `compare` tables: computation and Markdown / CSV rendering."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import metrics as M
from .results import Run, normalise_algorithm
from .settings import baseline_variant, group_by_variant, setting_labels, variant_labels

# --------------------------------------------------------------------------- rendering helpers


def fmt(value, kind: str = "acc") -> str:
    """Format a number for Markdown; NaN / None become 'n/a'."""
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    v = float(value)
    if not math.isfinite(v):
        return "n/a"
    if kind == "acc":
        return f"{v:.4f}"
    if kind == "sci":
        return f"{v:.3g}"
    if kind == "pct":
        return f"{v:.1f}"
    if kind == "rank":
        return f"{v:.2f}"
    if kind == "stat":
        return f"{v:.4g}"
    return str(v)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] = ()) -> str:
    def cell(s):
        return str(s).replace("|", "\\|").replace("\n", " ")

    right = list(right) + [False] * (len(headers) - len(right))
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "| " + " | ".join("---:" if r else "---" for r in right) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def csv_text(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for row in rows:
        w.writerow(["nan" if isinstance(c, float) and not math.isfinite(c) else
                    (repr(c) if isinstance(c, float) else c) for c in row])
    return buf.getvalue()


# --------------------------------------------------------------------------- summary

SUMMARY_COLUMNS: List[Tuple[str, str, str]] = [
    # key, Markdown header, format kind
    ("file", "file", "text"),
    ("algorithm", "algorithm", "text"),
    ("dataset", "dataset", "text"),
    ("seed", "seed", "int"),
    ("clients", "K", "int"),
    ("acc_mean", "acc mean", "acc"),
    ("acc_median", "acc median", "acc"),
    ("acc_worst10", "acc worst 10%", "acc"),
    ("acc_best10", "acc best 10%", "acc"),
    ("f1_mean", "F1 mean", "acc"),
    ("f1_median", "F1 median", "acc"),
    ("f1_worst10", "F1 worst 10%", "acc"),
    ("f1_best10", "F1 best 10%", "acc"),
    ("variance", "acc variance", "sci"),
    ("jain", "Jain", "acc"),
    ("efficiency", "efficiency", "acc"),
    ("global_accuracy", "global acc", "acc"),
    ("seconds_per_round", "s / round", "sci"),
    ("setting", "setting", "text"),
]


def summary_row(run: Run, setting: str = "", variant: Optional[str] = None) -> Dict[str, object]:
    """``variant``: the label in the algorithm column (settings.variant_labels), the algorithm if None."""
    acc, f1 = run.client_accuracy, run.client_f1
    row: Dict[str, object] = {
        "setting": setting,
        "file": run.path,
        "algorithm": run.algorithm if variant is None else variant,
        "dataset": run.dataset,
        "seed": run.seed,
        "clients": int(run.client_accuracy.size),
    }
    for prefix, values in (("acc", acc), ("f1", f1)):
        for key, v in M.client_stats(values).items():
            row[f"{prefix}_{key}"] = v
    row["variance"] = M.variance(acc)
    row["jain"] = M.jain(acc)
    row["efficiency"] = M.efficiency(acc, run.num_train)
    row["global_accuracy"] = run.global_accuracy
    row["seconds_per_round"] = run.seconds_per_round
    return row


def sort_runs(runs: Sequence[Run]) -> List[Run]:
    return sorted(runs, key=lambda r: (r.dataset, r.algorithm, r.seed, r.path))


def summary_rows(runs: Sequence[Run]) -> List[Dict[str, object]]:
    """One row per run, sorted by setting (settings.py), algorithm variant, seed and file."""
    rows = [summary_row(r, s, v) for r, s, v in zip(runs, setting_labels(runs), variant_labels(runs))]
    return sorted(rows, key=lambda row: (row["setting"], row["algorithm"], row["seed"], row["file"]))


def render_summary(rows: List[Dict[str, object]], fmt_name: str = "markdown", file_label=None) -> str:
    keys = [c[0] for c in SUMMARY_COLUMNS]
    if fmt_name == "csv":
        return csv_text(keys, [[row[k] for k in keys] for row in rows])
    headers = [c[1] for c in SUMMARY_COLUMNS]
    right = [c[2] not in ("text",) for c in SUMMARY_COLUMNS]
    body = []
    for row in rows:
        cells = []
        for key, _, kind in SUMMARY_COLUMNS:
            v = row[key]
            if key == "file" and file_label is not None:
                v = file_label(v)
            cells.append(str(v) if kind in ("text", "int") else fmt(v, kind))
        body.append(cells)
    return markdown_table(headers, body, right)


# --------------------------------------------------------------------------- compare

BASELINES = ("local", "fedavg")


@dataclass
class CompareRow:
    setting: str  # settings.py label of the group
    dataset: str
    algorithm: str  # variant label (settings.variant_labels)
    seeds: List[int]
    median: float
    ci_low: float
    ci_high: float
    fairness: float
    ipr: float  # fraction in [0, 1], NaN when not computed
    rank: float = float("nan")
    average_rank: float = float("nan")
    fairness_rank: float = float("nan")
    average_fairness_rank: float = float("nan")
    notes: List[str] = field(default_factory=list)
    is_baseline: bool = False  # a local or fedavg variant: no IPR


Friedman = Tuple[float, float, List[str], List[str], Optional[str]]


@dataclass
class CompareResult:
    metric: str
    ipr_mode: str
    resamples: int
    bootstrap_seed: int
    rows: List[CompareRow]
    average_ranks: Dict[str, Tuple[float, int]]
    friedman: Friedman
    fairness_average_ranks: Dict[str, Tuple[float, int]]
    fairness_friedman: Friedman
    notes: List[str]


def _values(run: Run, metric: str) -> np.ndarray:
    return run.client_accuracy if metric == "accuracy" else run.client_f1


def _per_client_median(arrays: List[np.ndarray]) -> Optional[np.ndarray]:
    """Per-client median over seeds; None when the runs have different numbers of clients."""
    if not arrays or len({a.size for a in arrays}) != 1:
        return None
    stack = np.vstack(arrays)
    out = np.full(stack.shape[1], np.nan)
    for j in range(stack.shape[1]):
        col = stack[:, j][np.isfinite(stack[:, j])]
        if col.size:
            out[j] = np.median(col)
    return out


def _paired_ipr(rs: List[Run], baselines: Dict[str, List[Run]], metric: str, notes: List[str]) -> float:
    """IPR per seed against the local and fedavg runs of the same setting and seed; median over seeds."""
    by_seed = {b: {} for b in BASELINES}
    for b in BASELINES:
        for run in baselines[b]:
            by_seed[b].setdefault(run.seed, []).append(run)
    shares = []
    for r in rs:
        pair = []
        for b in BASELINES:
            same = by_seed[b].get(r.seed, [])
            if len(same) > 1:
                note = (f"{len(same)} {b} runs with seed {r.seed} in this setting; IPR uses the first by "
                        f"file name, {same[0].path}")
                if note not in notes:
                    notes.append(note)
            pair.append(same[0] if same else None)
        if pair[0] is None or pair[1] is None:
            continue
        share, n = M.improved_share(_values(r, metric), _values(pair[0], metric), _values(pair[1], metric))
        if n:
            shares.append(share)
    if not shares:
        notes.append("IPR not computed: no seed has both a local and a fedavg run of this setting "
                     "with the same seed")
        return float("nan")
    if len(shares) < len(rs):
        notes.append(f"IPR over the {len(shares)} of {len(rs)} seeds that have local and fedavg runs "
                     f"of this setting with the same seed")
    return M.median(shares)


def _median_ipr(client_meds: Optional[np.ndarray], baselines: Dict[str, List[Run]], metric: str,
                notes: List[str]) -> float:
    """PLayer-FL's code: per-client medians over all seeds of the algorithm and of both baselines."""
    loc = _per_client_median([_values(b, metric) for b in baselines["local"]])
    fed = _per_client_median([_values(b, metric) for b in baselines["fedavg"]])
    if client_meds is None or loc is None or fed is None:
        notes.append("IPR not computed: runs differ in the number of clients")
        return float("nan")
    share, n = M.improved_share(client_meds, loc, fed)
    if not n:
        notes.append("IPR not computed: no client has finite scores in all three")
        return float("nan")
    return share


def compare(runs: Sequence[Run], metric: str = "accuracy", ipr_mode: str = "paired",
            resamples: int = M.BOOTSTRAP_RESAMPLES, bootstrap_seed: int = M.BOOTSTRAP_SEED) -> CompareResult:
    """Group runs by setting, then algorithm variant (settings.py), and compute the PLayer-FL table
    columns (ALGORITHMS.md §1.3, §1.5); settings are the blocks of the ranks and the Friedman tests."""
    notes: List[str] = []
    groups = group_by_variant(sort_runs(runs))

    rows: List[CompareRow] = []
    table: Dict[str, Dict[str, float]] = {}
    fair_table: Dict[str, Dict[str, float]] = {}
    for setting, by_algo in groups.items():
        chosen = {b: baseline_variant(by_algo, b) for b in BASELINES}
        baselines = {b: rs for b, (rs, _) in chosen.items()}
        for algo, rs in by_algo.items():
            row_notes: List[str] = []
            seeds = [r.seed for r in rs]
            if len(set(seeds)) != len(seeds):
                row_notes.append("several files of this variant share a seed (reruns, or runs that differ "
                                 "only in options that define no variant); each file counts as one run")
            per_run = np.array([M.mean(_values(r, metric)) for r in rs])
            med = M.median(per_run)
            lo, hi = M.bootstrap_median_ci(per_run, resamples=resamples, seed=bootstrap_seed)

            client_meds = _per_client_median([_values(r, metric) for r in rs])
            if client_meds is not None:
                fair = M.variance(client_meds)
            else:
                fair = M.median([M.variance(_values(r, metric)) for r in rs])
                row_notes.append("runs differ in the number of clients: fairness is the median over "
                                 "seeds of each run's variance")

            ipr = float("nan")
            is_baseline = normalise_algorithm(rs[0].algorithm) in BASELINES
            if is_baseline:
                pass  # PLayer-FL leaves Local and FedAvg out of the IPR table
            elif not baselines["local"] or not baselines["fedavg"]:
                missing = [b for b in BASELINES if not baselines[b]]
                row_notes.append(f"IPR not computed: no {' and no '.join(missing)} run of this setting")
            else:
                row_notes.extend(note for _, note in chosen.values() if note)
                if ipr_mode == "paired":
                    ipr = _paired_ipr(rs, baselines, metric, row_notes)
                else:
                    ipr = _median_ipr(client_meds, baselines, metric, row_notes)

            rows.append(CompareRow(setting, rs[0].dataset, algo, seeds, med, lo, hi, fair, ipr, notes=row_notes,
                                   is_baseline=is_baseline))
            table.setdefault(setting, {})[algo] = med
            fair_table.setdefault(setting, {})[algo] = fair

    per_ranks = M.ranks_per_block(table)
    avg = M.average_ranks(table)
    fair_ranks = M.ranks_per_block(fair_table, higher_is_better=False)
    fair_avg = M.average_ranks(fair_table, higher_is_better=False)
    for row in rows:
        row.rank = per_ranks.get(row.setting, {}).get(row.algorithm, float("nan"))
        row.average_rank = avg.get(row.algorithm, (float("nan"), 0))[0]
        row.fairness_rank = fair_ranks.get(row.setting, {}).get(row.algorithm, float("nan"))
        row.average_fairness_rank = fair_avg.get(row.algorithm, (float("nan"), 0))[0]
    all_algos = sorted({r.algorithm for r in rows})
    partial = [a for a in all_algos if avg.get(a, (0, 0))[1] < len(table)]
    if partial:
        notes.append("not every algorithm has runs in every setting; average ranks are over the settings "
                     "each algorithm was ranked in: " + ", ".join(partial))
    return CompareResult(metric, ipr_mode, resamples, bootstrap_seed, rows, avg, M.friedman(table),
                         fair_avg, M.friedman(fair_table), notes)


def friedman_sentence(fr: Friedman, what: str) -> str:
    stat, p, algos, blocks, reason = fr
    if reason is not None and not math.isfinite(stat):
        return f"Friedman test on the {what} not run: {reason}."
    return (f"Friedman test on the {what} over {len(algos)} algorithms ({', '.join(algos)}) and "
            f"{len(blocks)} settings: chi-square = {stat:.4g}, p = {p:.4g}.")


COMPARE_CSV_COLUMNS = ["setting", "dataset", "algorithm", "metric", "seeds", "runs", "median", "ci_low", "ci_high",
                       "fairness_variance", "ipr_percent", "rank", "average_rank", "fairness_rank",
                       "average_fairness_rank", "friedman_statistic", "friedman_p", "fairness_friedman_statistic",
                       "fairness_friedman_p", "note"]


def render_compare(res: CompareResult, fmt_name: str = "markdown", heading_level: int = 2) -> str:
    if fmt_name == "csv":
        stat, p, _, _, reason = res.friedman
        fstat, fp, _, _, freason = res.fairness_friedman
        body = []
        for r in res.rows:
            note = "; ".join((["baseline: no IPR (as in PLayer-FL)"] if r.is_baseline else []) + r.notes
                             + ([f"Friedman: {reason}"] if reason else [])
                             + ([f"fairness Friedman: {freason}"] if freason else []))
            body.append([r.setting, r.dataset, r.algorithm, res.metric, ";".join(str(s) for s in r.seeds),
                         len(r.seeds), r.median, r.ci_low, r.ci_high, r.fairness, r.ipr * 100.0, r.rank,
                         r.average_rank, r.fairness_rank, r.average_fairness_rank, stat, p, fstat, fp, note])
        return csv_text(COMPARE_CSV_COLUMNS, body)

    h = "#" * heading_level
    what = "client accuracy" if res.metric == "accuracy" else "client macro-F1"
    mode = ("paired by seed with the local and fedavg runs of the same setting, median over seeds"
            if res.ipr_mode == "paired" else "per-client medians over seeds, as PLayer-FL's code")
    out = [f"{h} Comparison by algorithm ({what})\n",
           f"Runs are grouped by setting (dataset, model, clients, rounds and the data, partition, model, "
           f"training and client-sampling options; see docs/analysis.md), then by algorithm variant (runs of "
           f"one algorithm that differ in its options are listed apart, with the options in which they "
           f"differ); seeds are pooled. "
           f"Median over seeds of each run's mean {what}, with a 95% percentile bootstrap CI of that median "
           f"({res.resamples} resamples, numpy seed {res.bootstrap_seed}). Fairness = population variance "
           f"across clients of the per-client medians over seeds (lower is fairer). IPR = % of clients "
           f"whose score is above both their Local and their FedAvg score ({mode}); the baselines local and "
           f"fedavg get none, as in PLayer-FL. Rank 1 = highest median; fairness rank 1 = lowest "
           f"variance.\n"]
    footnotes: List[str] = []
    by_setting: Dict[str, List[CompareRow]] = {}
    for r in res.rows:
        by_setting.setdefault(r.setting, []).append(r)
    for setting, rows in by_setting.items():
        out.append(f"{h}# Setting: {setting}\n")
        body = []
        for r in sorted(rows, key=lambda r: (r.rank if math.isfinite(r.rank) else 1e9, r.algorithm)):
            note_marks = []
            for n in r.notes:
                if n not in footnotes:
                    footnotes.append(n)
                note_marks.append(f"[{footnotes.index(n) + 1}]")
            ipr = "baseline" if r.is_baseline else fmt(r.ipr * 100.0, "pct")
            body.append([r.algorithm + (" " + " ".join(note_marks) if note_marks else ""),
                         ", ".join(str(s) for s in r.seeds), fmt(r.median),
                         f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}]", fmt(r.fairness, "sci"), ipr, fmt(r.rank, "rank"),
                         fmt(r.fairness_rank, "rank")])
        out.append(markdown_table(["algorithm", "seeds", f"median {res.metric}", "95% CI", "fairness (variance)",
                                   "IPR (%)", "rank", "fairness rank"], body,
                                  [False, False, True, True, True, True, True, True]))
    out.append(f"{h}# Average rank across settings\n")
    body = [[a, fmt(v, "rank"), fmt(res.fairness_average_ranks.get(a, (float("nan"), 0))[0], "rank"), str(n)]
            for a, (v, n) in sorted(res.average_ranks.items(), key=lambda kv: (kv[1][0], kv[0]))]
    out.append(markdown_table(["algorithm", "average rank", "average fairness rank", "settings"], body,
                              [False, True, True, True]))
    out.append(friedman_sentence(res.friedman, f"{res.metric} ranks"))
    out.append(friedman_sentence(res.fairness_friedman, "fairness ranks") + "\n")
    if footnotes or res.notes:
        out.append("Notes:\n")
        for i, n in enumerate(footnotes, 1):
            out.append(f"- [{i}] {n}")
        for n in res.notes:
            out.append(f"- {n}")
        out.append("")
    return "\n".join(out)
