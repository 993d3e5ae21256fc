"""`report DIR`: every results file under DIR in one Markdown report with its figures beside it."""

from __future__ import annotations

import datetime
import os
import re
import sys
from typing import Dict, List, Tuple

import numpy as np

from . import tables as T
from .errors import InputError
from .results import Run, load_run
from .settings import baseline_variant, group_by_setting, group_by_variant

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


def build_report(root: str, out: str, pdf: bool = False, stage: str = "round0") -> Tuple[str, List[str]]:
    """Write the report and its figures; return (report path, figure paths)."""
    from . import plots as P  # matplotlib only when needed

    if not os.path.exists(root):
        raise InputError(root, "no such directory")
    if not os.path.isdir(root):
        raise InputError(root, "not a directory")
    out_dir = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(out_dir):
        raise InputError(out, f"cannot write: directory {out_dir} does not exist")
    stem = os.path.splitext(os.path.basename(out))[0]

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

    def rel(p: str) -> str:
        return os.path.relpath(os.path.abspath(p), out_dir)

    figures: List[str] = []
    fig_notes: List[str] = []
    lines: List[str] = []

    def figure(kind: str, key: str, caption: str, fn, *args, **kwargs):
        png = os.path.join(out_dir, f"{stem}-{kind}-{_slug(key)}.png")
        try:
            written = fn(*args, out=png, pdf=pdf, **kwargs)
        except InputError as exc:
            fig_notes.append(f"{kind} figure for {key} not drawn: {exc}")
            lines.append(f"*{caption}: not drawn ({exc}).*\n")
            return
        figures.extend(written)
        lines.append(f"![{caption}]({rel(png)})\n")
        lines.append(f"*{caption}.*\n")

    groups = group_by_setting(T.sort_runs(runs))
    variants = group_by_variant(T.sort_runs(runs))  # {setting: {variant label: runs}}
    variant_of = {id(r): v for by in variants.values() for v, rs in by.items() for r in rs}
    lines.append("# fedsilo results report\n")
    lines.append(f"Generated {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} from `{root}`: "
                 f"{len(runs)} run(s) in {len(groups)} setting(s), algorithms "
                 f"{', '.join(sorted(set(variant_of.values())))}. A setting is a dataset, model, number of "
                 f"clients and rounds with the data, partition, model, training and client-sampling options "
                 f"(docs/analysis.md); tables and figures compare runs within one setting. Runs of one algorithm that "
                 f"differ in its options are distinct variants, labelled with the options in which they differ.\n")
    lines.extend(f"- {label}: {len(rs)} run(s)" for label, rs in groups.items())
    lines.append("")
    if skipped:
        lines.append("Files skipped:\n")
        lines.extend(f"- `{s}`" for s in skipped)
        lines.append("")

    lines.append("## Summary\n")
    lines.append("One row per run, final round. Worst/best 10% = mean of the lowest/highest ceil(K/10) client "
                 "values; variance with 1/K; Jain = (Σa)²/(K Σa²); efficiency = Σ (n_k/Σn) a_k with "
                 "n_k = training samples; s / round = fedsilo's /summary/seconds_per_round (median round "
                 "time). See docs/analysis.md.\n")
    lines.append(T.render_summary(T.summary_rows(runs), "markdown", file_label=rel))

    lines.append(T.render_compare(T.compare(runs, metric="accuracy"), "markdown", heading_level=2))
    if any(np.isfinite(r.client_f1).any() for r in runs):
        lines.append(T.render_compare(T.compare(runs, metric="f1"), "markdown", heading_level=2))

    lines.append("## Figures\n")

    lines.append("### Convergence\n")
    for label, rs in groups.items():
        rs = [r for r in rs if r.evaluated_rounds("client_accuracy")[1].shape[0] > 0]
        if rs:
            figure("convergence", label, f"Mean and worst-10% client accuracy per evaluated round, {label}",
                   P.convergence, rs, title=f"Convergence: {label} (curves averaged over seeds)")

    # round 0 sensitivity is measured after the first local training, before the algorithms differ much:
    # one figure per setting (a PLayer-FL run when there is one, for its split line); the final stage
    # differs between algorithms: one figure per setting and algorithm variant. One-block models are left out.
    sens_runs: Dict[Tuple[str, str], Run] = {}
    one_block: List[str] = []
    for label, rs in groups.items():
        with_sens = [r for r in rs if r.sensitivity]
        multi = [r for r in with_sens if next(iter(r.sensitivity.values())).shape[1] > 1]
        if with_sens and not multi:
            one_block.append(label)
        for r in sorted(multi, key=lambda r: (r.split_layer is None, r.seed, r.path)):
            key = (label, "" if stage == "round0" else variant_of[id(r)])
            sens_runs.setdefault(key, r)
    if sens_runs or one_block:
        lines.append("### Federation sensitivity\n")
        lines.append(f"Stage `{stage}` where present. " + (
            "One run per setting: a PLayer-FL run (with its split) when there is one, else the lowest seed."
            if stage == "round0" else "One run per setting and algorithm variant, the lowest seed.") + "\n")
        for (label, _), r in sens_runs.items():
            st = stage if stage in r.sensitivity else sorted(r.sensitivity)[0]
            name = variant_of[id(r)]
            figure("sensitivity", f"{label}-{name}-seed{r.seed}",
                   f"Normalised cumulative sensitivity per client, {name}, {label} (seed {r.seed}, {st})",
                   P.sensitivity, r, stage=st)
        for label in one_block:
            lines.append(f"*{label}: the model has one layer block, so the normalised cumulative "
                         f"sensitivity is 1 for every client; no figure.*\n")

    alpha_groups = {(label, v): [r for r in rs if r.is_alpha_fedavg]
                    for label, by in variants.items() for v, rs in by.items()}
    alpha_groups = {key: rs for key, rs in alpha_groups.items() if rs}
    if alpha_groups:
        pairs = []
        for (label, v), alpha_runs in alpha_groups.items():
            fed_runs, note = baseline_variant(variants[label], "fedavg")
            fed = {}
            for r in fed_runs:
                fed.setdefault(r.seed, r)
            pair = next(((r, fed[r.seed]) for r in alpha_runs if r.seed in fed), None)
            if pair:
                pairs.append((label, v, pair))
                if note and f"{label}: {note}" not in fig_notes:
                    fig_notes.append(f"{label}: {note}")
        if pairs:
            lines.append("### α-FedAvg against FedAvg: per-client accuracy\n")
            lines.append("Per setting and α-FedAvg variant, the first α-FedAvg run that has a FedAvg run of the "
                         "same setting and seed.\n")
            for label, v, (a, f) in pairs:
                figure("accuracy-hist", f"{label}-{v}-seed{a.seed}",
                       f"Final per-client accuracy, {v} against {variant_of[id(f)]}, {label} (seed {a.seed})",
                       P.accuracy_hist, [a, f])
        lines.append("### α-FedAvg efficiency/fairness trade-off\n")
        lines.append("Per setting and α-FedAvg variant, the run with the lowest seed. E(1) is the unweighted mean "
                     "accuracy; the dotted line is the summary's sample-weighted efficiency.\n")
        for (label, v), alpha_runs in alpha_groups.items():
            r = alpha_runs[0]
            figure("alpha-tradeoff", f"{label}-{v}-seed{r.seed}",
                   f"E(α) and J(α) from the final client accuracies of {v}, {label} (seed {r.seed})",
                   P.alpha_tradeoff, r)

    gems_groups = {label: [r for r in rs if r.gems_finetune is not None] for label, rs in groups.items()}
    gems_groups = {label: rs for label, rs in gems_groups.items() if rs}
    if gems_groups:
        lines.append("### GEMS fine-tuning\n")
        for label, rs in gems_groups.items():
            figure("gems-finetune", label, f"Accuracy after fine-tuning on public samples, {label}",
                   P.gems_finetune, rs, title=f"Fine-tuning with public samples: {label}")

    csvs = find_scaling_csvs(root)
    if csvs:
        lines.append("### Scaling\n")
        for path in csvs:
            name = os.path.relpath(path, root)
            figure("scaling", os.path.splitext(name)[0], f"Seconds per round and parallel efficiency against "
                   f"MPI ranks, from `{rel(path)}`", P.scaling, path)

    if fig_notes:
        lines.append("Figure notes:\n")
        lines.extend(f"- {n}" for n in fig_notes)
        lines.append("")

    text = "\n".join(lines).rstrip() + "\n"
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return out, figures
