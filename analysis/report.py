"""`report DIR`: every results file under DIR in one Markdown report a group can paste into a paper
draft: per setting the comparison, fairness and (one-shot) fine-tuning tables, the figures with the
numbers behind each (CSV), and the exact commands and fedsilo version that produced the runs."""

from __future__ import annotations

import datetime
import math
import os
import re
import sys
from typing import Dict, List, Sequence, Tuple

import numpy as np

from . import tables as T
from .errors import InputError
from .results import Run, load_run
from .settings import baseline_variant, group_by_setting, group_by_variant, is_one_shot

SKIP_SUFFIXES = (".partial", ".ckpt")


def find_results(root: str) -> List[str]:
    """Every *.h5 under root, recursively, sorted; names with a .partial or .ckpt suffix are skipped."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            parts = name.split(".")
            suffixes = {"." + p for p in parts[1:]}
            if not name.endswith(".h5") or suffixes & set(SKIP_SUFFIXES):
                continue
            found.append(os.path.join(dirpath, name))
    return found


def find_scaling_csvs(root: str) -> List[str]:
    """Every *.csv under root whose header has the columns mode,ranks,clients,seconds_per_round (what
    jobs/scaling.sbatch, jobs/local/scaling.sh and bench/scaling.sh write), sorted."""
    need = {"mode", "ranks", "clients", "seconds_per_round"}
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".csv"):
                continue
            path = os.path.join(dirpath, name)
            try:
                with open(path, encoding="utf-8") as fh:
                    header = fh.readline()
            except (OSError, UnicodeDecodeError):
                continue
            if need <= {c.strip() for c in header.split(",")}:
                found.append(path)
    return found


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


class Report:
    """The report's lines and the files written beside it (figures, their CSV, the run configurations)."""

    def __init__(self, root: str, out: str, pdf: bool):
        self.root, self.out, self.pdf = root, out, pdf
        self.out_dir = os.path.dirname(os.path.abspath(out))
        self.stem = os.path.splitext(os.path.basename(out))[0]
        self.lines: List[str] = []
        self.figures: List[str] = []
        self.fig_notes: List[str] = []

    def rel(self, path: str) -> str:
        return os.path.relpath(os.path.abspath(path), self.out_dir)

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def figure(self, kind: str, key: str, caption: str, fn, *args, **kwargs) -> None:
        """Draw one figure beside the report with its CSV, and link both; a figure that cannot be drawn
        is replaced by a sentence saying why."""
        png = os.path.join(self.out_dir, f"{self.stem}-{kind}-{_slug(key)}.png")
        csv = os.path.splitext(png)[0] + ".csv"
        try:
            written = fn(*args, out=png, pdf=self.pdf, csv=csv, **kwargs)
        except InputError as exc:
            self.fig_notes.append(f"{kind} figure for {key} not drawn: {exc}")
            self.add(f"*{caption}: not drawn ({exc}).*\n")
            return
        self.figures.extend(written)
        self.add(f"![{caption}]({self.rel(png)})\n", f"*{caption}.* Data: [{os.path.basename(csv)}]({self.rel(csv)})\n")

    def write(self) -> str:
        text = "\n".join(self.lines).rstrip() + "\n"
        with open(self.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        return self.out


# --------------------------------------------------------------------------- commands


def _command(rep: Report, run: Run, variant: str) -> List[str]:
    """A table row: file, variant, seed, version, ranks and the command that reruns the run from its
    resolved configuration (root attribute config), written beside the report."""
    if not run.config.strip():
        cmd = "no resolved configuration in this file"
    else:
        cfg_dir = os.path.join(rep.out_dir, f"{rep.stem}-configs")
        os.makedirs(cfg_dir, exist_ok=True)
        ini = os.path.join(cfg_dir, _slug(os.path.splitext(os.path.relpath(run.path, rep.root))[0]) + ".ini")
        with open(ini, "w", encoding="utf-8") as fh:
            fh.write(run.config if run.config.endswith("\n") else run.config + "\n")
        launch = f"mpirun -n {run.num_ranks} " if run.num_ranks and run.num_ranks > 1 else ""
        cmd = f"`{launch}fedsilo --config {rep.rel(ini)} --output {rep.rel(run.path)}`"
    return [f"`{rep.rel(run.path)}`", variant, str(run.seed), run.version or "?",
            str(run.num_ranks) if run.num_ranks else "?", cmd]


def _commands(rep: Report, runs: Sequence[Run], variant_of: Dict[int, str]) -> None:
    rep.add("#### Runs and commands\n",
            "Each command reruns one run from the resolved configuration stored in its results file "
            f"(written beside this report under `{rep.stem}-configs/`); fedsilo's results do not depend on the "
            "number of MPI ranks.\n")
    order = sorted(runs, key=lambda r: (variant_of[id(r)], r.seed, r.path))
    rows = [_command(rep, r, variant_of[id(r)]) for r in order]
    rep.add(T.markdown_table(["file", "algorithm", "seed", "fedsilo", "ranks", "command"], rows))


# --------------------------------------------------------------------------- figures


def _sensitivity_figures(rep: Report, P, label: str, rs: List[Run], variant_of, stage: str) -> None:
    """round0: one figure per setting (a PLayer-FL run, for its split line, when there is one); final:
    one per algorithm variant. A one-block model gets one figure of the raw s_1."""
    with_sens = [r for r in rs if r.sensitivity]
    chosen: Dict[str, Run] = {}
    for r in sorted(with_sens, key=lambda r: (r.split_layer is None, r.seed, r.path)):
        chosen.setdefault("" if stage == "round0" else variant_of[id(r)], r)
    for r in chosen.values():
        st = stage if stage in r.sensitivity else sorted(r.sensitivity)[0]
        name = variant_of[id(r)]
        rep.figure("sensitivity", f"{label}-{name}-seed{r.seed}",
                   f"Federation sensitivity per client, {name} (seed {r.seed}, {st})", P.sensitivity, r, stage=st)


def _alpha_figures(rep: Report, P, label: str, by_variant: Dict[str, List[Run]], variant_of) -> None:
    """Per α-FedAvg variant: its first run paired with a FedAvg run of the same seed (accuracy-hist),
    and the trade-off of its lowest seed."""
    alpha = {v: [r for r in rs if r.is_alpha_fedavg] for v, rs in by_variant.items()}
    alpha = {v: rs for v, rs in alpha.items() if rs}
    fed_runs, note = baseline_variant(by_variant, "fedavg")
    fed = {}
    for r in fed_runs:
        fed.setdefault(r.seed, r)
    for v, rs in alpha.items():
        pair = next(((r, fed[r.seed]) for r in rs if r.seed in fed), None)
        if pair:
            if note and f"{label}: {note}" not in rep.fig_notes:
                rep.fig_notes.append(f"{label}: {note}")
            a, f = pair
            rep.figure("accuracy-hist", f"{label}-{v}-seed{a.seed}",
                       f"Final per-client accuracy, {v} against {variant_of[id(f)]} (seed {a.seed})",
                       P.accuracy_hist, [a, f])
        r = rs[0]
        rep.figure("alpha-tradeoff", f"{label}-{v}-seed{r.seed}",
                   f"E(α) and J(α) on the final client accuracies of {v} (seed {r.seed})", P.alpha_tradeoff, r)


def _figures(rep: Report, P, label: str, rs: List[Run], by_variant, variant_of, stage: str) -> None:
    rep.add("#### Figures\n")
    iterative = [r for r in rs if not is_one_shot(r) and r.evaluated_rounds("client_accuracy")[1].shape[0] > 0]
    one_shot = [r for r in rs if is_one_shot(r)]
    if iterative:
        rep.figure("convergence", label, "Mean and worst-10% client accuracy per evaluated round", P.convergence,
                   iterative, title=f"Convergence: {label}")
    if one_shot:
        rep.figure("oneshot", label, "One-shot methods: client scores and test-set accuracy without and after "
                                     "fine-tuning", P.oneshot, one_shot, title=None)
    _sensitivity_figures(rep, P, label, rs, variant_of, stage)
    _alpha_figures(rep, P, label, by_variant, variant_of)
    gems = [r for r in rs if r.gems_finetune is not None]
    if gems:
        rep.figure("gems-finetune", label, "Test-set accuracy after fine-tuning on public samples", P.gems_finetune,
                   gems)
    if any(math.isfinite(r.epsilon) for r in rs):
        rep.figure("privacy-utility", label, "Client accuracy against the privacy loss ε", P.privacy_utility, rs)


# --------------------------------------------------------------------------- the report


def _setting_section(rep: Report, P, label: str, rs: List[Run], by_variant, variant_of, results, footnotes,
                     stage: str) -> None:
    rep.add(f"### Setting: {label}\n",
            f"{len(rs)} run(s): " + "; ".join(f"{v} (seeds {', '.join(str(r.seed) for r in vr)})"
                                               for v, vr in by_variant.items()) + ".\n")
    for res in results:
        rows = [r for r in res.rows if r.setting == label]
        what = "client accuracy" if res.metric == "accuracy" else "client macro-F1"
        rep.add(f"#### Comparison ({what})\n", T.comparison_table(res, rows, footnotes))
    rows = [r for r in results[0].rows if r.setting == label]
    rep.add("#### Fairness across clients\n", "Median over seeds of each run's statistic of its client accuracies.\n",
            T.fairness_table(results[0], rows))
    if any(r.client_model for r in rows):
        rep.add("#### One-shot methods and fine-tuning\n",
                "Which model the client scores were measured on, and the test-set accuracy without fine-tuning "
                "(/gems/accuracy_before), after fine-tuning on gems.public_samples (/gems/accuracy_after) and "
                "along the recorded sweep (/gems/finetune); medians over seeds.\n", T.one_shot_table(rows))
    _figures(rep, P, label, rs, by_variant, variant_of, stage)
    _commands(rep, rs, variant_of)


def _load_all(root: str) -> Tuple[List[Run], List[str]]:
    runs: List[Run] = []
    skipped: List[str] = []
    for path in find_results(root):
        try:
            runs.append(load_run(path))
        except InputError as exc:
            skipped.append(str(exc))
            print(f"analysis: warning: skipped {exc}", file=sys.stderr)
    if not runs:
        raise InputError(root, "no fedsilo results files under this directory (looked for *.h5, "
                               "skipping *.partial and *.ckpt)")
    return runs, skipped


def _check_paths(root: str, out: str) -> None:
    if not os.path.exists(root):
        raise InputError(root, "no such directory")
    if not os.path.isdir(root):
        raise InputError(root, "not a directory")
    out_dir = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(out_dir):
        raise InputError(out, f"cannot write: directory {out_dir} does not exist")


def _header(rep: Report, runs: List[Run], groups, skipped: List[str], warnings: List[str]) -> None:
    versions = sorted({r.version or "?" for r in runs})
    rep.add("# fedsilo results report\n",
            f"Generated {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} from `{rep.root}`: {len(runs)} run(s) "
            f"in {len(groups)} setting(s), written by fedsilo {', '.join(versions)}. A setting is a dataset, "
            f"model, number of clients and rounds with the data, partition, model, training and client-sampling "
            f"options (docs/analysis.md); tables and figures compare runs within one setting. Runs of one "
            f"algorithm that differ in its options are distinct variants, labelled with the options in which "
            f"they differ.\n")
    rep.add(*[f"- {label}: {len(rs)} run(s)" for label, rs in groups.items()], "")
    if skipped:
        rep.add("Files skipped:\n", *[f"- `{s}`" for s in skipped], "")
    if warnings:
        rep.add("Warnings:\n", *[f"- {w}" for w in warnings], "")


def build_report(root: str, out: str, pdf: bool = False, stage: str = "round0") -> Tuple[str, List[str]]:
    """Write the report and its figures; return (report path, figure and data paths)."""
    from . import plots as P  # matplotlib only when needed

    _check_paths(root, out)
    rep = Report(root, out, pdf)
    runs, skipped = _load_all(root)
    warnings = [w for r in runs for w in r.warnings]
    for w in warnings:
        print(f"analysis: warning: {w}", file=sys.stderr)
    groups = group_by_setting(T.sort_runs(runs))
    variants = group_by_variant(T.sort_runs(runs))  # {setting: {variant label: runs}}
    variant_of = {id(r): v for by in variants.values() for v, rs in by.items() for r in rs}
    results = [T.compare(runs, metric="accuracy")]
    if any(np.isfinite(r.client_f1).any() for r in runs):
        results.append(T.compare(runs, metric="f1"))

    _header(rep, runs, groups, skipped, warnings)
    rep.add("## Results by setting\n")
    footnotes: List[str] = []
    for label, rs in groups.items():
        _setting_section(rep, P, label, rs, variants[label], variant_of, results, footnotes, stage)

    rep.add("## Comparison by algorithm (client accuracy)\n", T.compare_intro(results[0]))
    for res in results:
        rep.add(T.rank_summary(res, "###").replace("Average rank across settings",
                                                    f"Average rank across settings ({res.metric})"))
    notes = footnotes and T.notes_text(results[0], footnotes)
    extra = [n for res in results[1:] for n in res.notes if n not in results[0].notes]
    if notes or extra:
        rep.add(notes or "Notes:\n", *[f"- {n}" for n in extra], "")

    rep.add("## Summary\n",
            "One row per run, final round. Worst/best 10% = mean of the lowest/highest ceil(K/10) client values; "
            "variance with 1/K; Jain = (Σa)²/(K Σa²); efficiency = Σ (n_k/Σn) a_k with n_k = training samples; "
            "s / round = fedsilo's /summary/seconds_per_round (median round time). See docs/analysis.md.\n",
            T.render_summary(T.summary_rows(runs), "markdown", file_label=rep.rel))

    csvs = find_scaling_csvs(root)
    if csvs:
        rep.add("## Scaling\n")
        for path in csvs:
            name = os.path.relpath(path, root)
            rep.figure("scaling", os.path.splitext(name)[0], f"Seconds per round and parallel efficiency against "
                       f"MPI ranks, from `{rep.rel(path)}`", P.scaling, path)
    if rep.fig_notes:
        rep.add("Figure notes:\n", *[f"- {n}" for n in rep.fig_notes], "")
    return rep.write(), rep.figures
