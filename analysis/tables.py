"""The `summary` and `compare` tables: computation and Markdown / CSV rendering."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import metrics as M
from .oneshot import client_finetune_samples, client_model, public_samples
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
    ("epsilon", "ε", "sci"),
    ("client_model", "client scores on", "text"),
    ("setting", "setting", "text"),
]
# Markdown shows these columns only when some row has a value (CSV always has them)
OPTIONAL_SUMMARY_COLUMNS = {"epsilon", "client_model"}


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
    row["epsilon"] = run.epsilon
    row["client_model"] = client_model(run)
    return row


def sort_runs(runs: Sequence[Run]) -> List[Run]:
    return sorted(runs, key=lambda r: (r.dataset, r.algorithm, r.seed, r.path))


def summary_rows(runs: Sequence[Run]) -> List[Dict[str, object]]:
    """One row per run, sorted by setting (settings.py), algorithm variant, seed and file."""
    rows = [summary_row(r, s, v) for r, s, v in zip(runs, setting_labels(runs), variant_labels(runs))]
    return sorted(rows, key=lambda row: (row["setting"], row["algorithm"], row["seed"], row["file"]))


def _has_value(value) -> bool:
    if isinstance(value, str):
        return value != ""
    return value is not None and math.isfinite(float(value))


def render_summary(rows: List[Dict[str, object]], fmt_name: str = "markdown", file_label=None) -> str:
    keys = [c[0] for c in SUMMARY_COLUMNS]
    if fmt_name == "csv":
        return csv_text(keys, [[row[k] for k in keys] for row in rows])
    columns = [c for c in SUMMARY_COLUMNS
               if c[0] not in OPTIONAL_SUMMARY_COLUMNS or any(_has_value(row[c[0]]) for row in rows)]
    headers = [c[1] for c in columns]
    right = [c[2] not in ("text",) for c in columns]
    body = []
    for row in rows:
        cells = []
        for key, _, kind in columns:
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
    interval_low: float  # spread of the median over seeds: [min, max] below 5 seeds, bootstrap 95% CI from 5
    interval_high: float
    interval: str  # metrics.interval_kind: "95% CI", "min-max" or "single run"
    fairness: float
    ipr: float  # fraction in [0, 1], NaN when not computed
    rank: float = float("nan")
    average_rank: float = float("nan")
    fairness_rank: float = float("nan")
    average_fairness_rank: float = float("nan")
    notes: List[str] = field(default_factory=list)
    is_baseline: bool = False  # a local or fedavg variant: no IPR
    # median over seeds of each run's value: the fairness table
    spread: Dict[str, float] = field(default_factory=dict)  # mean, worst10, best10, variance, jain, efficiency
    epsilon: float = float("nan")  # median over seeds of the runs' privacy loss ε (NaN: no privacy)
    # one-shot runs: the model behind the client scores, and the test-set records (median over seeds)
    client_model: str = ""
    client_finetune_samples: Optional[int] = None
    public_samples: Optional[int] = None
    test_no_finetune: float = float("nan")
    test_finetuned: float = float("nan")
    finetune_sweep: Dict[int, float] = field(default_factory=dict)  # public samples S -> test accuracy


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


SPREAD_STATS = ("mean", "worst10", "best10", "variance", "jain", "efficiency")


def _spread(rs: List[Run], metric: str) -> Dict[str, float]:
    """The fairness table's values: the median over seeds of each run's statistic of the client scores."""
    per_run = {k: [] for k in SPREAD_STATS}
    for r in rs:
        v = _values(r, metric)
        for key, x in M.client_stats(v).items():
            if key in per_run:
                per_run[key].append(x)
        per_run["variance"].append(M.variance(v))
        per_run["jain"].append(M.jain(v))
        per_run["efficiency"].append(M.efficiency(v, r.num_train))
    return {k: M.median(v) for k, v in per_run.items()}


def _one_shot_records(row: CompareRow, rs: List[Run], notes: List[str]) -> None:
    """What the client scores of a one-shot variant were measured on, and its test-set records."""
    models = sorted({client_model(r) for r in rs})
    if models == [""]:
        return
    row.client_model = "; ".join(models)
    row.client_finetune_samples = client_finetune_samples(rs[0])
    row.public_samples = public_samples(rs[0])
    row.test_no_finetune = M.median([r.gems_records.get("accuracy_before", np.nan) for r in rs])
    row.test_finetuned = M.median([r.gems_records.get("accuracy_after", np.nan) for r in rs])
    sweep: Dict[int, List[float]] = {}
    for r in rs:
        if r.gems_finetune is not None:
            for size, acc in zip(*r.gems_finetune):
                sweep.setdefault(int(size), []).append(float(acc))
    row.finetune_sweep = {size: M.median(v) for size, v in sorted(sweep.items())}
    if len(models) > 1:
        notes.append("the runs of this variant scored their clients on different models: " + row.client_model)


def compare(runs: Sequence[Run], metric: str = "accuracy", ipr_mode: str = "paired",
            resamples: int = M.BOOTSTRAP_RESAMPLES, bootstrap_seed: int = M.BOOTSTRAP_SEED) -> CompareResult:
    """Group runs by setting, then algorithm variant (settings.py), and compute the PLayer-FL table
    columns (PLayer-FL, arXiv 2502.08829); settings are the blocks of the ranks and the Friedman tests."""
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
            per_run = np.array([r.client_mean(_values(r, metric)) for r in rs])
            med = M.median(per_run)
            lo, hi, kind = M.median_interval(per_run, resamples=resamples, seed=bootstrap_seed)

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

            row = CompareRow(setting, rs[0].dataset, algo, seeds, med, lo, hi, kind, fair, ipr, notes=row_notes,
                             is_baseline=is_baseline, spread=_spread(rs, metric),
                             epsilon=M.median([r.epsilon for r in rs]))
            _one_shot_records(row, rs, row_notes)
            rows.append(row)
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


COMPARE_CSV_COLUMNS = ["setting", "dataset", "algorithm", "metric", "seeds", "runs", "median", "interval_low",
                       "interval_high", "interval", "fairness_variance", "ipr_percent", "rank", "average_rank",
                       "fairness_rank", "average_fairness_rank", "friedman_statistic", "friedman_p",
                       "fairness_friedman_statistic", "fairness_friedman_p", "mean", "worst10", "best10", "variance",
                       "jain", "efficiency", "epsilon", "client_model", "client_finetune_samples",
                       "test_accuracy_no_finetune", "test_accuracy_finetuned", "public_samples", "note"]


def _csv_row(res: CompareResult, r: CompareRow) -> list:
    stat, p, _, _, reason = res.friedman
    fstat, fp, _, _, freason = res.fairness_friedman
    note = "; ".join((["baseline: no IPR (as in PLayer-FL)"] if r.is_baseline else []) + r.notes
                     + ([f"Friedman: {reason}"] if reason else [])
                     + ([f"fairness Friedman: {freason}"] if freason else []))
    optional = ["" if v is None else v for v in (r.client_finetune_samples, r.public_samples)]
    return ([r.setting, r.dataset, r.algorithm, res.metric, ";".join(str(s) for s in r.seeds), len(r.seeds),
             r.median, r.interval_low, r.interval_high, r.interval, r.fairness, r.ipr * 100.0, r.rank,
             r.average_rank, r.fairness_rank, r.average_fairness_rank, stat, p, fstat, fp]
            + [r.spread.get(k, float("nan")) for k in SPREAD_STATS]
            + [r.epsilon, r.client_model, optional[0], r.test_no_finetune, r.test_finetuned, optional[1], note])


def interval_cell(r: CompareRow) -> str:
    """"[0.6012, 0.6402] min-max", "[..] 95% CI" or "single run": the wording follows the number of runs."""
    if r.interval == "single run":
        return "single run"
    return f"[{fmt(r.interval_low)}, {fmt(r.interval_high)}] {r.interval}"


def _marks(r: CompareRow, footnotes: List[str]) -> str:
    marks = []
    for n in r.notes:
        if n not in footnotes:
            footnotes.append(n)
        marks.append(f"[{footnotes.index(n) + 1}]")
    return (" " + " ".join(marks)) if marks else ""


def _ranked(rows: List[CompareRow]) -> List[CompareRow]:
    return sorted(rows, key=lambda r: (r.rank if math.isfinite(r.rank) else 1e9, r.algorithm))


def comparison_table(res: CompareResult, rows: List[CompareRow], footnotes: List[str]) -> str:
    """The PLayer-FL style table of one setting, ranked; ε and the model behind one-shot client scores
    appear when some row has them."""
    with_eps = any(math.isfinite(r.epsilon) for r in rows)
    with_model = any(r.client_model for r in rows)
    headers = ["algorithm", "seeds", f"median {res.metric}", "spread over seeds", "fairness (variance)", "IPR (%)",
               "rank", "fairness rank"] + (["ε"] if with_eps else []) + (["client scores on"] if with_model else [])
    body = []
    for r in _ranked(rows):
        ipr = "baseline" if r.is_baseline else fmt(r.ipr * 100.0, "pct")
        body.append([r.algorithm + _marks(r, footnotes), ", ".join(str(s) for s in r.seeds), fmt(r.median),
                     interval_cell(r), fmt(r.fairness, "sci"), ipr, fmt(r.rank, "rank"), fmt(r.fairness_rank, "rank")]
                    + ([fmt(r.epsilon, "stat")] if with_eps else []) + ([r.client_model] if with_model else []))
    return markdown_table(headers, body, [False, False] + [True] * 6 + [True] * with_eps + [False] * with_model)


def fairness_table(res: CompareResult, rows: List[CompareRow]) -> str:
    """How the client scores spread within a run (the α-FedAvg paper's view): the median over seeds of
    each run's mean, worst 10%, best 10%, variance, Jain's index and sample-weighted efficiency."""
    body = [[r.algorithm, fmt(r.spread.get("mean")), fmt(r.spread.get("worst10")), fmt(r.spread.get("best10")),
             fmt(r.spread.get("variance"), "sci"), fmt(r.spread.get("jain")), fmt(r.spread.get("efficiency"))]
            for r in _ranked(rows)]
    return markdown_table(["algorithm", f"mean {res.metric}", "worst 10%", "best 10%", "variance", "Jain",
                           "efficiency"], body, [False] + [True] * 6)


def one_shot_table(rows: List[CompareRow]) -> str:
    """One-shot variants: the model behind the client scores (fine-tuned or not) and the test-set
    accuracy without fine-tuning, after fine-tuning on gems.public_samples and along the sweep."""
    rows = [r for r in rows if r.client_model]
    sizes = sorted({s for r in rows for s in r.finetune_sweep})
    headers = (["algorithm", "client scores on", "test acc., no fine-tuning", "test acc., fine-tuned on "
                "gems.public_samples"] + [f"test acc., fine-tuned on {s}" if s else "test acc., sweep size 0"
                                          for s in sizes])
    body = []
    for r in _ranked(rows):
        tuned = "n/a (public_samples = 0)" if not r.public_samples else f"{fmt(r.test_finetuned)} ({r.public_samples})"
        body.append([r.algorithm, r.client_model, fmt(r.test_no_finetune), tuned]
                    + [fmt(r.finetune_sweep.get(s)) for s in sizes])
    return markdown_table(headers, body, [False, False] + [True] * (2 + len(sizes)))


def compare_intro(res: CompareResult) -> str:
    what = "client accuracy" if res.metric == "accuracy" else "client macro-F1"
    mode = ("paired by seed with the local and fedavg runs of the same setting, median over seeds"
            if res.ipr_mode == "paired" else "per-client medians over seeds, as PLayer-FL's code")
    return (f"Runs are grouped by setting (dataset, model, clients, rounds and the data, partition, model, "
            f"training and client-sampling options; see docs/analysis.md), then by algorithm variant (runs of "
            f"one algorithm that differ in its options are listed apart, with the options in which they "
            f"differ); seeds are pooled. Median over seeds of each run's mean {what} (weighted by the "
            f"clients' training samples in runs with eval.client_weighting = samples, as their own summary "
            f"mean), with its spread over "
            f"seeds: the range [min, max] below {M.MIN_RUNS_FOR_CI} seeds, a 95% percentile bootstrap CI of the "
            f"median from {M.MIN_RUNS_FOR_CI} seeds on ({res.resamples} resamples, numpy seed "
            f"{res.bootstrap_seed}). Fairness = population variance across clients of the per-client medians "
            f"over seeds (lower is fairer). IPR = % of clients whose score is above both their Local and their "
            f"FedAvg score ({mode}); the baselines local and fedavg get none, as in PLayer-FL. Rank 1 = highest "
            f"median; fairness rank 1 = lowest variance. The fairness table gives the median over seeds of each "
            f"run's own statistics of its client scores. ε is the privacy loss of runs with differential "
            f"privacy. One-shot runs say which model their client scores were measured on, and whether it was "
            f"fine-tuned on public data.\n")


def setting_tables(res: CompareResult, setting: str, footnotes: List[str], heading: str) -> str:
    """The tables of one setting: comparison, fairness and (one-shot variants) fine-tuning."""
    rows = [r for r in res.rows if r.setting == setting]
    out = [f"{heading} Setting: {setting}\n", comparison_table(res, rows, footnotes),
           "Fairness across clients (median over seeds of each run's value):\n", fairness_table(res, rows)]
    if any(r.client_model for r in rows):
        out += ["One-shot methods: the model behind the client scores, and the test-set accuracy without and "
                "after fine-tuning on public samples (/gems/accuracy_before, /gems/accuracy_after, "
                "/gems/finetune; median over seeds):\n", one_shot_table(rows)]
    return "\n".join(out)


def rank_summary(res: CompareResult, heading: str) -> str:
    """Average ranks across settings and the two Friedman tests."""
    body = [[a, fmt(v, "rank"), fmt(res.fairness_average_ranks.get(a, (float("nan"), 0))[0], "rank"), str(n)]
            for a, (v, n) in sorted(res.average_ranks.items(), key=lambda kv: (kv[1][0], kv[0]))]
    return "\n".join([f"{heading} Average rank across settings\n",
                      markdown_table(["algorithm", "average rank", "average fairness rank", "settings"], body,
                                     [False, True, True, True]),
                      friedman_sentence(res.friedman, f"{res.metric} ranks"),
                      friedman_sentence(res.fairness_friedman, "fairness ranks") + "\n"])


def notes_text(res: CompareResult, footnotes: List[str]) -> str:
    if not footnotes and not res.notes:
        return ""
    lines = ["Notes:\n"] + [f"- [{i}] {n}" for i, n in enumerate(footnotes, 1)] + [f"- {n}" for n in res.notes]
    return "\n".join(lines) + "\n"


def render_compare(res: CompareResult, fmt_name: str = "markdown", heading_level: int = 2) -> str:
    if fmt_name == "csv":
        return csv_text(COMPARE_CSV_COLUMNS, [_csv_row(res, r) for r in res.rows])
    h = "#" * heading_level
    what = "client accuracy" if res.metric == "accuracy" else "client macro-F1"
    out = [f"{h} Comparison by algorithm ({what})\n", compare_intro(res)]
    footnotes: List[str] = []
    for setting in dict.fromkeys(r.setting for r in res.rows):
        out.append(setting_tables(res, setting, footnotes, h + "#"))
    out.append(rank_summary(res, h + "#"))
    out.append(notes_text(res, footnotes))
    return "\n".join(out)
