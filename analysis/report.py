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
from .results import Run, load_run, normalise_algorithm

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

    datasets = sorted({r.dataset for r in runs})
    lines.append("# fedsilo results report\n")
    lines.append(f"Generated {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} from `{root}`: "
                 f"{len(runs)} run(s) on {len(datasets)} dataset(s) ({', '.join(datasets)}), algorithms "
                 f"{', '.join(sorted({r.algorithm for r in runs}))}.\n")
    if skipped:
        lines.append("Files skipped:\n")
        lines.extend(f"- `{s}`" for s in skipped)
        lines.append("")

    lines.append("## Summary\n")
    lines.append("One row per run, final round. Worst/best 10% = mean of the lowest/highest ceil(K/10) client "
                 "values; variance with 1/K; Jain = (Σa)²/(K Σa²); efficiency = Σ (n_k/Σn) a_k with "
                 "n_k = training samples; s / round = median round wall time. See docs/analysis.md.\n")
    lines.append(T.render_summary(T.summary_rows(runs), "markdown", file_label=rel))

    lines.append(T.render_compare(T.compare(runs, metric="accuracy"), "markdown", heading_level=2))
    if any(np.isfinite(r.client_f1).any() for r in runs):
        lines.append(T.render_compare(T.compare(runs, metric="f1"), "markdown", heading_level=2))

    lines.append("## Figures\n")
    by_dataset: Dict[str, List[Run]] = {}
    for r in T.sort_runs(runs):
        by_dataset.setdefault(r.dataset, []).append(r)

    lines.append("### Convergence\n")
    for ds, rs in by_dataset.items():
        rs = [r for r in rs if r.rounds.get("client_accuracy") is not None
              and r.rounds["client_accuracy"].ndim == 2 and r.rounds["client_accuracy"].shape[0] > 0]
        if rs:
            figure("convergence", ds, f"Mean (solid) and worst-10% (dashed) client accuracy per round on {ds}",
                   P.convergence, rs)

    sens_runs: Dict[Tuple[str, str], Run] = {}
    for r in T.sort_runs(runs):
        if r.sensitivity and (r.dataset, r.algorithm) not in sens_runs:
            sens_runs[(r.dataset, r.algorithm)] = r
    if sens_runs:
        lines.append("### Federation sensitivity\n")
        lines.append(f"One run per dataset and algorithm (the lowest seed), stage `{stage}` where present.\n")
        for (ds, algo), r in sens_runs.items():
            st = stage if stage in r.sensitivity else sorted(r.sensitivity)[0]
            figure("sensitivity", f"{ds}-{algo}-seed{r.seed}",
                   f"Normalised cumulative sensitivity per client, {algo} on {ds} (seed {r.seed}, {st})",
                   P.sensitivity, r, stage=st)

    alpha_runs = [r for r in T.sort_runs(runs) if r.is_alpha_fedavg]
    if alpha_runs:
        pairs = []
        for ds in datasets:
            fed = {r.seed: r for r in reversed(by_dataset[ds]) if normalise_algorithm(r.algorithm) == "fedavg"}
            for r in alpha_runs:
                if r.dataset == ds and r.seed in fed:
                    pairs.append((r, fed[r.seed]))
                    break
        if pairs:
            lines.append("### α-FedAvg against FedAvg: per-client accuracy\n")
            for a, f in pairs:
                figure("accuracy-hist", f"{a.dataset}-seed{a.seed}",
                       f"Final per-client accuracy, {a.algorithm} against {f.algorithm} on {a.dataset} (seed {a.seed})",
                       P.accuracy_hist, [a, f])
        lines.append("### α-FedAvg efficiency/fairness trade-off\n")
        from .plots import parse_alphas

        seen = set()
        for r in alpha_runs:
            if r.dataset in seen:
                continue
            seen.add(r.dataset)
            figure("alpha-tradeoff", f"{r.dataset}-seed{r.seed}",
                   f"E(α) and J(α) from the final client accuracies of {r.algorithm} on {r.dataset} (seed {r.seed})",
                   P.alpha_tradeoff, r, alphas=parse_alphas("1..20"))

    gems_runs = [r for r in runs if r.gems_finetune is not None]
    if gems_runs:
        lines.append("### GEMS fine-tuning\n")
        for ds in datasets:
            rs = [r for r in gems_runs if r.dataset == ds]
            if rs:
                figure("gems-finetune", ds, f"Accuracy after fine-tuning on public samples, {ds}",
                       P.gems_finetune, rs)

    if fig_notes:
        lines.append("Figure notes:\n")
        lines.extend(f"- {n}" for n in fig_notes)
        lines.append("")

    text = "\n".join(lines).rstrip() + "\n"
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return out, figures
