"""Hyper-parameter selection by validation score (``python3 -m analysis select``; docs/analysis.md).

The runs of a grid (jobs/grid.py) differ in the tuned parameters (``--param``, default train.lr), the
algorithm and the seed. They are grouped by setting (as ``compare`` groups, with the tuned parameters
left out of the signature) and algorithm variant; within a group every value of the tuned parameters
gets the mean over its seeds of the runs' validation scores, and the best value is chosen: the
highest validation accuracy (``--metric accuracy``) or the lowest validation loss (``loss``), ties
to the value listed first (values in ascending order).

A run's validation score is the mean over its clients of the validation figures of the evaluations
its summary reports (/summary/client_val_accuracy or /summary/client_val_loss: the selected models
under eval.select), weighted as the run's own client mean (eval.client_weighting = samples: by
/clients/num_train); a file without them falls back to the last evaluated row of
/rounds/client_val_accuracy or /rounds/client_val_loss. Runs without a validation score are left
out with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import settings as S
from .errors import InputError
from .results import Run
from .tables import csv_text, markdown_table

METRICS = ("accuracy", "loss")


def validation_score(run: Run, metric: str) -> float:
    """The run's validation score (NaN when it has none), weighted as its summary's client mean."""
    name = f"client_val_{metric}"
    values = run.summary_per_client.get(name)
    if values is None:
        _, rows = run.evaluated_rounds(name)
        values = rows[-1] if rows.shape[0] else None
    if values is None:
        return float("nan")
    return run.client_mean(values)


def _value_key(text: str) -> Tuple[int, float, str]:
    """Numbers in numeric order before other values, which sort as text."""
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


@dataclass
class Candidate:
    values: Tuple[str, ...]        # one per tuned parameter, as in the runs' configuration
    scores: List[float]            # per seed
    seeds: List[int]

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores))


@dataclass
class Selection:
    setting: str
    algorithm: str                 # the variant label (algorithm, and its options where variants differ)
    run_algorithm: str             # the algorithm's name
    options: List[Tuple[str, str]]  # the variant's algorithm options that tell it apart
    candidates: List[Candidate] = field(default_factory=list)
    best: Optional[Candidate] = None


# The evaluation rules change the scores a run reports, so runs that differ in them are not compared.
EVAL_RULES = ("eval.select", "eval.select_metric", "eval.point", "eval.client_weighting")


def _signatures(runs: Sequence[Run], params: Sequence[str]) -> List[S.Signature]:
    """The setting signature of each run (settings.signatures: only the keys present in every run) with
    the tuned parameters left out, plus the evaluation rules the run used."""
    return [sig + tuple((k, run.option(k)) for k in EVAL_RULES if run.option(k) is not None and k not in params)
            for sig, run in zip(S.signatures(runs, leave_out=params), runs)]


def _variant_options(runs: Sequence[Run]) -> List[List[Tuple[str, str]]]:
    """Per run, the algorithm options in which runs of its algorithm differ (what tells variants apart)."""
    options = [S._config_keys(r, setting=False) for r in runs]
    differing: Dict[str, set] = {}
    for algo in {r.algorithm for r in runs}:
        mine = [o for r, o in zip(runs, options) if r.algorithm == algo]
        common = set.intersection(*[set(o) for o in mine])
        differing[algo] = {k for k in common if len({o[k] for o in mine}) > 1}
    return [sorted((k, o[k]) for k in differing[r.algorithm]) for r, o in zip(runs, options)]


def select(runs: Sequence[Run], params: Sequence[str], metric: str) -> Tuple[List[Selection], List[str]]:
    """(one Selection per setting and variant, sorted; warnings about runs left out)."""
    if metric not in METRICS:
        raise InputError("--metric", f"expected one of {', '.join(METRICS)}, got {metric!r}")
    warnings: List[str] = []
    for p in params:
        missing = [r.path for r in runs if r.option(p) is None]
        if missing:
            raise InputError("--param", f"{p} is not an option of the runs' configuration ({missing[0]})")
    sigs = _signatures(runs, params)
    names = S.labels(sigs)
    groups: Dict[Tuple[str, str], Selection] = {}
    for run, sig, opts in zip(runs, sigs, _variant_options(runs)):
        score = validation_score(run, metric)
        if not np.isfinite(score):
            warnings.append(f"{run.path}: no validation {metric} (no /summary/client_val_{metric} nor an evaluated "
                            f"/rounds/client_val_{metric} row with a finite value); left out")
            continue
        label = run.algorithm + (" (" + ", ".join(f"{k}={v}" for k, v in opts) + ")" if opts else "")
        sel = groups.setdefault((names[sig], label), Selection(names[sig], label, run.algorithm, opts))
        values = tuple(run.option(p) for p in params)
        cand = next((c for c in sel.candidates if c.values == values), None)
        if cand is None:
            cand = Candidate(values, [], [])
            sel.candidates.append(cand)
        cand.scores.append(score)
        cand.seeds.append(run.seed)
    if not groups:
        raise InputError("select", f"none of the {len(runs)} run(s) has a validation {metric} "
                                   f"(/summary/client_val_{metric}, or a /rounds/client_val_{metric} row with a "
                                   f"finite value): files of a fedsilo without validation records, or clients "
                                   f"without validation samples (data.split)")
    better = (lambda a, b: a > b) if metric == "accuracy" else (lambda a, b: a < b)
    for sel in groups.values():
        sel.candidates.sort(key=lambda c: [_value_key(v) for v in c.values])
        for c in sel.candidates:
            if sel.best is None or better(c.mean, sel.best.mean):
                sel.best = c
    return [groups[k] for k in sorted(groups)], warnings


def final_runs(selections: Sequence[Selection], params: Sequence[str],
               seeds: Sequence[int]) -> List[Tuple[str, int, List[str]]]:
    """The final runs: (algorithm, seed, options) with the chosen values and the variant's options."""
    runs = []
    for sel in selections:
        extra = [f"--{p} {v}" for p, v in zip(params, sel.best.values)]
        extra += [f"--{k} {v}" for k, v in sel.options]
        runs += [(sel.run_algorithm, seed, extra) for seed in seeds]
    return runs


def render(selections: Sequence[Selection], params: Sequence[str], metric: str, fmt: str,
           config: Optional[str], seeds: Sequence[int]) -> str:
    """The selection as a Markdown table (with the final runs' commands when ``config`` is given), a CSV
    (one row per value tried), or the final runs as manifest lines (jobs/sweep.manifest format)."""
    if fmt == "manifest":
        if not config:
            raise InputError("--format manifest", "needs --config (the configuration of the final runs)")
        return "".join(" ".join([config, alg, str(seed), *extra]) + "\n"
                       for alg, seed, extra in final_runs(selections, params, seeds))
    param = ",".join(params)
    if fmt == "csv":
        rows = [[s.setting, s.algorithm, param, ",".join(c.values), c.mean, len(c.scores),
                 " ".join(str(x) for x in c.seeds), c is s.best] for s in selections for c in s.candidates]
        return csv_text(["setting", "algorithm", "param", "value", f"val_{metric}", "runs", "seeds", "chosen"], rows)
    rows = []
    for s in selections:
        every = "; ".join(f"{','.join(c.values)}: {c.mean:.4f} ({len(c.scores)})" for c in s.candidates)
        rows.append([s.setting, s.algorithm, ",".join(s.best.values), f"{s.best.mean:.4f}", str(len(s.best.scores)),
                     every])
    text = markdown_table(["setting", "algorithm", f"chosen {param}", f"val {metric}", "runs",
                           "every value: mean (runs)"], rows, right=[False, False, False, True, True, False])
    if config:
        text += "\nFinal runs:\n\n" + "".join(
            f"    fedsilo --config {config} --algorithm {alg} --seed {seed} {' '.join(extra)}\n"
            for alg, seed, extra in final_runs(selections, params, seeds))
    return text
