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

    runs = [load_run(p) for p in paths]
    for run in runs:
        for warning in run.warnings:
            print(f"analysis: warning: {warning}", file=sys.stderr)
    return runs


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


def cmd_select(args) -> int:
    from . import select as SEL

    runs = _load(args.files)
    params = args.param or ["train.lr"]
    selections, warnings = SEL.select(runs, params, args.metric)
    for warning in warnings:
        print(f"analysis: warning: {warning}", file=sys.stderr)
    _write(SEL.render(selections, params, args.metric, args.format, args.config, args.seeds), args.out)
    return 0


def _plot_done(written: List[str]) -> int:
    for p in written:
        print(f"wrote {p}")
    return 0


def cmd_plot(args) -> int:
    from . import plots as P

    sub, out = args.plot, dict(pdf=args.pdf, csv=args.csv)
    if sub == "accuracy-hist":
        return _plot_done(P.accuracy_hist(_load(args.files), args.out, bins=args.bins, **out))
    if sub == "sensitivity":
        (run,) = _load([args.file])
        return _plot_done(P.sensitivity(run, args.out, stage=args.stage, **out))
    if sub == "convergence":
        return _plot_done(P.convergence(_load(args.files), args.out, **out))
    if sub == "oneshot":
        return _plot_done(P.oneshot(_load(args.files), args.out, **out))
    if sub == "alpha-tradeoff":
        alphas = None if args.alphas is None else P.parse_alphas(args.alphas)
        (run,) = _load([args.file])
        return _plot_done(P.alpha_tradeoff(run, args.out, alphas, sample_weighted=args.sample_weighted or None,
                                           **out))
    if sub == "gems-finetune":
        return _plot_done(P.gems_finetune(_load(args.files), args.out, **out))
    if sub == "privacy-utility":
        return _plot_done(P.privacy_utility(_load(args.files), args.out, **out))
    if sub == "scaling":
        return _plot_done(P.scaling(args.csv_in, args.out, **out))
    raise AssertionError(sub)


def cmd_simtime(args) -> int:
    from . import simtime as S

    runs = [S.read_run(p, args.metric) for p in args.files]
    text = S.curves_csv(runs) if args.curves else S.table(runs, args.target, "csv" if args.csv else "markdown")
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    if args.plot:
        print(f"wrote {S.plot(runs, args.plot, args.metric)}")
    return 0


def cmd_async(args) -> int:
    from . import asyncruns as A

    text, figure = A.run_command(args.view, args.files, args.metric, getattr(args, "target", 0.0),
                                 "csv" if args.csv else "markdown", getattr(args, "plot", None))
    _write(text, args.out)
    if figure:
        print(f"wrote {figure}")
    return 0


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
                                  "'qffl (q=0)' and 'qffl (q=1)', are listed apart), over seeds: median over "
                                  "seeds of the mean client score (weighted as the run's own client mean, "
                                  "eval.client_weighting) with its spread over seeds ([min, max] below 5 "
                                  "seeds, a percentile bootstrap 95% CI from 5 on), fairness (population "
                                  "variance across clients of the per-client medians over seeds), IPR (% of "
                                  "clients better than both their Local and their FedAvg score; needs algorithm "
                                  "'local' and 'fedavg' runs of the same setting), rank and fairness rank "
                                  "(lowest variance = 1) per setting, "
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

    q = sp.add_parser("select", formatter_class=fmt, help="hyper-parameters by validation score, final runs",
                      description="The runs of a grid (jobs/grid.py) grouped by setting (the tuned parameters "
                                  "left out) and algorithm variant; per group, the value of the tuned "
                                  "parameters with the best mean over seeds of the runs' validation score: the "
                                  "mean over clients of /summary/client_val_accuracy (or _loss with --metric "
                                  "loss), the validation figures of the evaluations the summary reports "
                                  "(eval.select), weighted as the run's client mean (eval.client_weighting). "
                                  "Prints the choice per group and, with --config, the final runs' commands "
                                  "(--format manifest: jobs/sweep.manifest lines for jobs/local/sweep.sh and "
                                  "jobs/sweep.sbatch).")
    q.add_argument("files", nargs="+", metavar="FILE", help="fedsilo results files (.h5) of the grid")
    q.add_argument("--param", action="append", metavar="SECTION.KEY",
                   help="the tuned option, as in the configuration (repeat for several; default: train.lr)")
    q.add_argument("--metric", choices=["accuracy", "loss"], default="accuracy",
                   help="highest validation accuracy (default) or lowest validation loss")
    q.add_argument("--config", metavar="INI", help="configuration of the final runs (their commands are printed)")
    q.add_argument("--seeds", type=int, nargs="+", default=[0], metavar="SEED",
                   help="seeds of the final runs (default: 0)")
    q.add_argument("--format", choices=["markdown", "csv", "manifest"], default="markdown",
                   help="markdown table and commands (default), csv (every value tried), or manifest (the final "
                        "runs only, one 'CONFIG ALGORITHM SEED options' line each; needs --config)")
    q.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    q.set_defaults(func=cmd_select)

    q = sp.add_parser("plot", formatter_class=fmt, help="figures (PNG, optional PDF)",
                      description="Write one figure as PNG (and FILE.pdf beside it with --pdf).")
    pp = q.add_subparsers(dest="plot", metavar="FIGURE")
    pp.required = True

    def plot_opts(r):
        r.add_argument("--out", required=True, metavar="FILE.png", help="PNG file to write")
        r.add_argument("--pdf", action="store_true", help="also write a PDF beside the PNG")
        r.add_argument("--csv", metavar="FILE.csv",
                       help="also write the numbers drawn, one tidy table: setting,algorithm,seed,statistic,x,y "
                            "(docs/analysis.md lists the statistics of each figure)")
        r.set_defaults(func=cmd_plot)

    r = pp.add_parser("accuracy-hist", help="per-client accuracy histograms + KDE of two runs",
                      description="Histogram (client counts) and a smoothed distribution (Gaussian KDE reflected "
                                  "at 0 and 1, scaled to counts) of the final per-client accuracy of two runs, side "
                                  "by side (α-FedAvg Fig. 3 style), over the range of the data with a small margin.")
    r.add_argument("files", nargs=2, metavar="RUN.h5")
    r.add_argument("--bins", type=int, default=20, help="histogram bins over the accuracy range (default 20)")
    plot_opts(r)

    r = pp.add_parser("sensitivity", help="per-client normalised cumulative federation sensitivity",
                      description="Per-client curves of Σ_{k<=l} s_k / s_1 over the layer blocks "
                                  "(/sensitivity/layers), log y-axis; a vertical line marks "
                                  "/playerfl/split_layer when present ('split after fc1 (fc1 federated)'). A "
                                  "one-block model shows the raw s_1 per client. Clients left out are named "
                                  "with the reason (not selected in that round, diverged, s_1 not positive).")
    r.add_argument("file", metavar="RUN.h5")
    r.add_argument("--stage", choices=["round0", "final"], default="round0",
                   help="/sensitivity/round0 (default) or /sensitivity/final")
    plot_opts(r)

    r = pp.add_parser("convergence", help="mean and worst-10%% client accuracy per round",
                      description="Two panels, mean and worst-10% client accuracy per evaluated round: one "
                                  "colour, marker and dash pattern per algorithm variant (per variant and setting "
                                  "when the files span several settings), the mean over seeds with the spread "
                                  "over seeds as a band (min-max below 5 seeds, bootstrap 95% CI of the mean "
                                  "from 5 on). One-shot runs are left out (see `plot oneshot`).")
    r.add_argument("files", nargs="+", metavar="FILE")
    plot_opts(r)

    r = pp.add_parser("oneshot", help="one-shot methods (GEMS and baselines) as points",
                      description="Per one-shot method: client scores (mean and worst 10% over clients; the tick "
                                  "label says which model they were measured on and whether it was fine-tuned) "
                                  "and the test-set accuracy without and after fine-tuning (/gems/accuracy_before, "
                                  "/gems/accuracy_after), mean over seeds with the spread as an error bar.")
    r.add_argument("files", nargs="+", metavar="FILE")
    plot_opts(r)

    r = pp.add_parser("alpha-tradeoff", help="α-FedAvg E(α) and J(α) from a run's final client accuracies",
                      description="Three panels, E(α), J(α) and J against E: E(α) = Σ p_k a_k and J(α) = "
                                  "(Σ R_k)²/(K Σ R_k²), R_k = p_k a_k, p_k ∝ a_k^(1/α-1), from the run's final "
                                  "client accuracies clamped to [alpha_fedavg.accuracy_floor, 1] of the run, and "
                                  "weighted as the run was (alpha_fedavg.weighted); marks /alpha_fedavg/alpha "
                                  "when present. The summary's sample-weighted efficiency is a dotted line.")
    r.add_argument("file", metavar="RUN.h5")
    r.add_argument("--alphas", default=None,
                   help="LO..HI (200 points), LO..HI:STEP or a comma list; all > 0; the chosen α is added "
                        "when outside (default: 200 points log-spaced over 1..20, widened to include the "
                        "chosen α)")
    r.add_argument("--sample-weighted", action="store_true",
                   help="use p_k ∝ w_k^(1/α) a_k^(1/α-1) with w_k = n_k/n (unconfirmed variant) even when the run "
                        "did not (alpha_fedavg.weighted = false)")
    plot_opts(r)

    r = pp.add_parser("gems-finetune", help="accuracy against public fine-tuning samples, per method",
                      description="Reads /gems/finetune/samples and /gems/finetune/accuracy of each file; one "
                                  "line per method (algorithm variant: root attribute algorithm and the options "
                                  "in which its runs differ), mean ± sd over runs, on a "
                                  "symmetric-log sample axis (0, 100 and 1000 equally apart).")
    r.add_argument("files", nargs="+", metavar="FILE")
    plot_opts(r)

    r = pp.add_parser("privacy-utility", help="client accuracy against the privacy loss ε, per algorithm",
                      description="Mean and worst-10% client accuracy against ε (the last /privacy/epsilon of "
                                  "each run), one colour per algorithm: each run a point, the mean over the seeds "
                                  "of each privacy configuration joined by a line with the spread over seeds, "
                                  "runs without privacy as a horizontal line.")
    r.add_argument("files", nargs="+", metavar="FILE")
    plot_opts(r)

    r = pp.add_parser("scaling", help="seconds per round and parallel efficiency against ranks",
                      description="From a CSV with columns mode,ranks,clients,seconds_per_round "
                                  "(mode strong|weak): strong efficiency t1/(p tp), weak t1/tp.")
    r.add_argument("csv_in", metavar="CSV")
    plot_opts(r)

    q = sp.add_parser("simtime", formatter_class=fmt, help="time to a target accuracy on the simulated clock",
                      description="Runs with the system model (docs/system.md): per run the rounds and simulated "
                                  "seconds to --target and the bytes each silo sent and received until then (mean "
                                  "over silos; the whole run when never reached); --curves: accuracy against "
                                  "simulated time per algorithm (mean, min, max over its runs); --plot: that figure.")
    q.add_argument("files", nargs="+", metavar="FILE")
    q.add_argument("--target", type=float, default=0.85, help="target accuracy (default 0.85)")
    q.add_argument("--metric", default="mean_client", help="mean_client (default) or global")
    q.add_argument("--csv", action="store_true", help="the table as CSV")
    q.add_argument("--curves", action="store_true", help="accuracy against simulated time as CSV instead of the table")
    q.add_argument("--plot", metavar="PNG", help="also write the accuracy-against-time figure")
    q.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    q.set_defaults(func=cmd_simtime)

    q = sp.add_parser("async", formatter_class=fmt, help="synchronous and asynchronous runs on the simulated clock",
                      description="Runs with a simulated clock (/rounds/sim_time), synchronous and asynchronous, "
                                  "grouped by algorithm (a synchronous run with fl.deadline_seconds > 0 as "
                                  "'ALG (deadline)'); the band of a group is mean +- sd over its runs (seeds).")
    ap = q.add_subparsers(dest="view", metavar="VIEW")
    ap.required = True

    def async_opts(r, plot=True):
        r.add_argument("files", nargs="+", metavar="FILE")
        r.add_argument("--metric", default="mean_client", help="mean_client (default) or global")
        r.add_argument("--csv", action="store_true", help="CSV instead of a Markdown table")
        r.add_argument("--out", metavar="FILE", help="write the table to FILE instead of stdout")
        if plot:
            r.add_argument("--plot", metavar="PNG", help="also write the figure")
        r.set_defaults(func=cmd_async)

    async_opts(ap.add_parser("curves", help="accuracy against simulated time, mean +- sd over seeds",
                             description="Per group and at every row end of its runs: the mean and sd over "
                                         "its runs of the accuracy each had reached by then."))
    async_opts(ap.add_parser("staleness", help="histogram of the staleness of applied updates",
                             description="Per group: how many applied updates had each staleness "
                                         "(/rounds/staleness, NaN entries skipped), summed over its runs."))
    r = ap.add_parser("targets", help="simulated time to a target accuracy, mean +- sd over seeds",
                      description="Per group: runs, runs that reached --target, and the mean, sd, min and max "
                                  "of their simulated seconds to it.")
    async_opts(r, plot=False)
    r.add_argument("--target", type=float, default=0.85, help="target accuracy (default 0.85)")

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


# the Python packages analysis/ imports, and the Debian packages that provide them
DEBIAN_PACKAGES = {"numpy": "python3-numpy", "h5py": "python3-h5py", "matplotlib": "python3-matplotlib",
                   "scipy": "python3-scipy"}


def missing_package_message(exc: ImportError) -> Optional[str]:
    """One line naming the Debian package of a missing dependency; None for any other ImportError."""
    name = (exc.name or "").split(".")[0]
    if name not in DEBIAN_PACKAGES:
        return None
    return (f"the Python package {name} cannot be imported ({exc}): install Debian's {DEBIAN_PACKAGES[name]} "
            f"(apt-get install {' '.join(DEBIAN_PACKAGES.values())}) and run analysis with the Python it "
            f"belongs to, /usr/bin/python3")


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InputError as exc:
        print(f"analysis: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        message = missing_package_message(exc)
        if message is None:
            raise
        print(f"analysis: error: {message}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
