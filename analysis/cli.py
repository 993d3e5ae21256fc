"""Command line: ``/usr/bin/python3 -m analysis <command> ...`` (see docs/analysis.md)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from .errors import InputError

PROG = "python3 -m analysis"


def _write(text: str, out: Optional[str]) -> None:
    if out is None:
        sys.stdout.write(text)
        return
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise InputError(out, f"cannot write: directory {parent} does not exist")
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise InputError(out, f"cannot write: {exc.strerror or exc}")


def _load(paths):
    from .results import load_run

    return [load_run(p) for p in paths]


# --------------------------------------------------------------------------- commands


def cmd_summary(args) -> int:
    from . import tables as T

    runs = _load(args.files)
    _write(T.render_summary(T.summary_rows(runs), args.format), args.out)
    return 0


def cmd_compare(args) -> int:
    from . import tables as T

    runs = _load(args.files)
    if args.resamples < 1:
        raise InputError("--resamples", "must be >= 1")
    res = T.compare(runs, metric=args.metric, ipr_mode=args.ipr, resamples=args.resamples,
                    bootstrap_seed=args.bootstrap_seed)
    _write(T.render_compare(res, args.format), args.out)
    return 0


def cmd_report(args) -> int:
    from .report import build_report

    out = args.out or os.path.join(args.dir, "report.md")
    path, figures = build_report(args.dir, out, pdf=args.pdf, stage=args.stage)
    print(f"wrote {path} and {len(figures)} figure file(s)")
    return 0


def _plot_done(written: List[str]) -> int:
    for p in written:
        print(f"wrote {p}")
    return 0


def cmd_plot(args) -> int:
    from . import plots as P

    sub = args.plot
    if sub == "accuracy-hist":
        return _plot_done(P.accuracy_hist(_load(args.files), args.out, pdf=args.pdf, bins=args.bins))
    if sub == "sensitivity":
        (run,) = _load([args.file])
        return _plot_done(P.sensitivity(run, args.out, stage=args.stage, pdf=args.pdf))
    if sub == "convergence":
        return _plot_done(P.convergence(_load(args.files), args.out, pdf=args.pdf))
    if sub == "alpha-tradeoff":
        alphas = None if args.alphas is None else P.parse_alphas(args.alphas)
        (run,) = _load([args.file])
        return _plot_done(P.alpha_tradeoff(run, args.out, alphas, pdf=args.pdf,
                                           sample_weighted=args.sample_weighted))
    if sub == "gems-finetune":
        return _plot_done(P.gems_finetune(_load(args.files), args.out, pdf=args.pdf))
    if sub == "scaling":
        return _plot_done(P.scaling(args.csv, args.out, pdf=args.pdf))
    raise AssertionError(sub)


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=fmt,
        description="Tables, figures and reports from fedsilo results files (docs/results.md). "
                    "Bad input (missing file, not a fedsilo results file, interrupted .partial run) "
                    "gives a one-line error on stderr and exit code 2. See docs/analysis.md.")
    sp = p.add_subparsers(dest="command", metavar="COMMAND")
    sp.required = True

    def output_opts(q):
        q.add_argument("--format", choices=["markdown", "csv"], default="markdown",
                       help="output format (default: markdown)")
        q.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")

    q = sp.add_parser("summary", formatter_class=fmt, help="one row per run: client accuracy/F1 statistics",
                      description="One row per run (final round): mean, median, worst-10% and best-10% client "
                                  "accuracy and macro-F1, population variance (1/K) and Jain's index of the "
                                  "client accuracies, efficiency (sample-weighted mean accuracy, n_k = "
                                  "num_train), global accuracy and seconds per round "
                                  "(/summary/seconds_per_round; the median of /rounds/seconds in files "
                                  "without it).")
    q.add_argument("files", nargs="+", metavar="FILE", help="fedsilo results files (.h5)")
    output_opts(q)
    q.set_defaults(func=cmd_summary)

    q = sp.add_parser("compare", formatter_class=fmt, help="PLayer-FL style table: algorithms over seeds",
                      description="Group runs by setting (dataset, model, clients, rounds and the data, "
                                  "partition, model, training and client-sampling options of the resolved "
                                  "configuration; not algorithm, seed or algorithm options), then algorithm "
                                  "variant (runs of one algorithm that differ in its options, e.g. "
                                  "'qffl (q=0)' and 'qffl (q=1)', are listed apart), over seeds: median over seeds of the mean client score with a percentile "
                                  "bootstrap 95% CI, fairness (population variance across clients of the "
                                  "per-client medians over seeds), IPR (% of clients better than both their "
                                  "Local and their FedAvg score; needs algorithm 'local' and 'fedavg' runs of "
                                  "the same setting), rank and fairness rank (lowest variance = 1) per setting, "
                                  "average ranks across settings and a Friedman test on each (>= 3 "
                                  "algorithms with results in every one of >= 2 settings). See "
                                  "docs/analysis.md.")
    q.add_argument("files", nargs="+", metavar="FILE", help="fedsilo results files (.h5)")
    q.add_argument("--by", choices=["algorithm"], default="algorithm",
                   help="grouping (only 'algorithm' is supported; default)")
    q.add_argument("--metric", choices=["accuracy", "f1"], default="accuracy",
                   help="per-client score to compare (default: accuracy)")
    q.add_argument("--ipr", choices=["paired", "median"], default="paired",
                   help="paired (default): IPR per seed against the local/fedavg runs with the same setting "
                        "and seed, median over seeds; median: per-client medians over seeds of all three, "
                        "as PLayer-FL's code")
    q.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default: 1000)")
    q.add_argument("--bootstrap-seed", type=int, default=0, help="seed of numpy's Generator (default: 0)")
    output_opts(q)
    q.set_defaults(func=cmd_compare)

    q = sp.add_parser("plot", formatter_class=fmt, help="figures (PNG, optional PDF)",
                      description="Write one figure as PNG (and FILE.pdf beside it with --pdf).")
    pp = q.add_subparsers(dest="plot", metavar="FIGURE")
    pp.required = True

    def plot_opts(r):
        r.add_argument("--out", required=True, metavar="FILE.png", help="PNG file to write")
        r.add_argument("--pdf", action="store_true", help="also write a PDF beside the PNG")
        r.set_defaults(func=cmd_plot)

    r = pp.add_parser("accuracy-hist", help="per-client accuracy histograms + KDE of two runs",
                      description="Histogram (client counts) and Gaussian KDE (scaled to counts) of the final "
                                  "per-client accuracy of two runs, side by side (α-FedAvg Fig. 3 style), over "
                                  "the range of the data with a small margin.")
    r.add_argument("files", nargs=2, metavar="RUN.h5")
    r.add_argument("--bins", type=int, default=20, help="histogram bins over the accuracy range (default 20)")
    plot_opts(r)

    r = pp.add_parser("sensitivity", help="per-client normalised cumulative federation sensitivity",
                      description="Per-client curves of Σ_{k<=l} s_k / s_1 over the layer blocks "
                                  "(/sensitivity/layers), log y-axis; a vertical line marks "
                                  "/playerfl/split_layer when present ('split after fc1 (fc1 federated)').")
    r.add_argument("file", metavar="RUN.h5")
    r.add_argument("--stage", choices=["round0", "final"], default="round0",
                   help="/sensitivity/round0 (default) or /sensitivity/final")
    plot_opts(r)

    r = pp.add_parser("convergence", help="mean and worst-10%% client accuracy per round",
                      description="Mean (solid) and worst-10% (dashed) client accuracy per evaluated round, "
                                  "one colour per algorithm variant (per variant and setting when the files "
                                  "span several settings); runs of one variant (seeds) are averaged; a "
                                  "variant with one evaluated round is drawn as markers.")
    r.add_argument("files", nargs="+", metavar="FILE")
    plot_opts(r)

    r = pp.add_parser("alpha-tradeoff", help="α-FedAvg E(α) and J(α) from a run's final client accuracies",
                      description="E(α) = Σ p_k a_k and J(α) = (Σ R_k)²/(K Σ R_k²), R_k = p_k a_k, "
                                  "p_k ∝ a_k^(1/α-1), from the run's final client accuracies; marks "
                                  "/alpha_fedavg/alpha when present. E(1) is the unweighted mean accuracy; "
                                  "the summary's sample-weighted efficiency is drawn as a dotted line "
                                  "(with --sample-weighted, E(1) equals it).")
    r.add_argument("file", metavar="RUN.h5")
    r.add_argument("--alphas", default=None,
                   help="LO..HI (200 points), LO..HI:STEP or a comma list; all > 0; the chosen α is added "
                        "when outside (default: 200 points log-spaced over 1..20, widened to include the "
                        "chosen α)")
    r.add_argument("--sample-weighted", action="store_true",
                   help="use p_k ∝ w_k^(1/α) a_k^(1/α-1) with w_k = n_k/n (unconfirmed variant)")
    plot_opts(r)

    r = pp.add_parser("gems-finetune", help="accuracy against public fine-tuning samples, per method",
                      description="Reads /gems/finetune/samples and /gems/finetune/accuracy of each file; one "
                                  "line per method (algorithm variant: root attribute algorithm and the options "
                                  "in which its runs differ), mean ± sd over runs, on a "
                                  "symmetric-log sample axis (0, 100 and 1000 equally apart).")
    r.add_argument("files", nargs="+", metavar="FILE")
    plot_opts(r)

    r = pp.add_parser("scaling", help="seconds per round and parallel efficiency against ranks",
                      description="From a CSV with columns mode,ranks,clients,seconds_per_round "
                                  "(mode strong|weak): strong efficiency t1/(p tp), weak t1/tp.")
    r.add_argument("csv", metavar="CSV")
    plot_opts(r)

    q = sp.add_parser("report", formatter_class=fmt, help="one Markdown report for a directory of runs",
                      description="Every results file under DIR (recursively; *.h5, skipping *.partial and "
                                  "*.ckpt) in one Markdown report: summary table, compare tables and the "
                                  "figures that apply, written beside the report; a scaling CSV under DIR "
                                  "(columns mode,ranks,clients,seconds_per_round) adds the scaling figure.")
    q.add_argument("dir", metavar="DIR")
    q.add_argument("--out", metavar="FILE.md", help="report file (default: DIR/report.md)")
    q.add_argument("--pdf", action="store_true", help="also write PDF figures")
    q.add_argument("--stage", choices=["round0", "final"], default="round0",
                   help="sensitivity stage for the figures (default round0)")
    q.set_defaults(func=cmd_report)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InputError as exc:
        print(f"analysis: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
