"""Algorithm variants: runs of one algorithm and setting that differ in the algorithm's own options
(settings.variant_labels) are listed apart as "algorithm (key=value, ...)"; seeds of one variant pool.

The fedsilo tests run 13 tiny experiments ($FEDSILO_EXE, about a second each; the four local and fedavg
runs are test_fedsilo_runs's own when it ran first) in two settings:

* A (test_fedsilo_runs.SETTING_A): qffl with q = 0 and q = 1 (the default), local and fedavg, seeds 0
  and 1, and one fedavg run with --qffl.q 0 (a second fedavg variant, seed 0);
* C (test_fedsilo_runs.SETTING_C, one-shot): public_only as configured and with
  --gems.public_epochs 2 --gems.finetune_lr 0.05, seeds 0 and 1.

The label rules themselves (short and full key names, empty values, options that define no variant,
one label across settings) are checked on fake files.
"""

import math
import os
import shutil

import numpy as np
import pytest

from analysis.tests.images import SINGLE, WIDE, check_png
from analysis.tests.test_fedsilo_runs import LABEL_A, LABEL_C, SETTING_A, SETTING_C, _csv, read, run_all
from analysis.tests.test_fedsilo_runs import pytestmark as FEDSILO_MARKS


def fedsilo_exe(test):
    """Marks a test that needs the fedsilo executable (skipped without $FEDSILO_EXE)."""
    for mark in FEDSILO_MARKS:
        test = mark(test)
    return test


# file name prefix -> (fedsilo arguments, expected variant label)
VARIANTS = {
    "qffl_q0": (SETTING_A + ["--algorithm", "qffl", "--qffl.q", "0"], "qffl (q=0)"),
    "qffl_q1": (SETTING_A + ["--algorithm", "qffl"], "qffl (q=1)"),
    "local": (SETTING_A + ["--algorithm", "local"], "local"),
    "fedavg": (SETTING_A + ["--algorithm", "fedavg"], "fedavg (q=1)"),
    "fedavgq0": (SETTING_A + ["--algorithm", "fedavg", "--qffl.q", "0"], "fedavg (q=0)"),
    "po": (SETTING_C + ["--algorithm", "public_only"], "public_only (finetune_lr=0.01, public_epochs=0)"),
    "po2": (SETTING_C + ["--algorithm", "public_only", "--gems.public_epochs", "2", "--gems.finetune_lr", "0.05"],
            "public_only (finetune_lr=0.05, public_epochs=2)"),
}
SEEDS = {"fedavgq0": (0,)}  # the others: seeds 0 and 1


@pytest.fixture(scope="module")
def vruns(tmp_path_factory):
    """{(prefix, seed): path} of the fedsilo results files (local and fedavg: test_fedsilo_runs's files of
    the same runs when that module ran first)."""
    plan = {(prefix, s): args + ["--seed", str(s)]
            for prefix, (args, _) in VARIANTS.items() for s in SEEDS.get(prefix, (0, 1))}
    paths = run_all(tmp_path_factory.mktemp("variants"), {f"{p}_s{s}": args for (p, s), args in plan.items()})
    return {(p, s): paths[f"{p}_s{s}"] for p, s in plan}


@fedsilo_exe
def test_summary_labels_each_run_with_its_variant(vruns, inproc):
    p = inproc("summary", "--format", "csv", *vruns.values())
    assert p.returncode == 0, p.stderr
    rows = {r["file"]: r for r in _csv(p.stdout)}
    assert set(rows) == set(vruns.values())
    for (prefix, seed), path in vruns.items():
        assert rows[path]["algorithm"] == VARIANTS[prefix][1], path
        assert rows[path]["setting"] == (LABEL_C if prefix.startswith("po") else LABEL_A), path
        assert int(rows[path]["seed"]) == seed


@fedsilo_exe
def test_compare_lists_variants_apart_and_pools_their_seeds(vruns, inproc):
    p = inproc("compare", "--format", "csv", *vruns.values())
    assert p.returncode == 0, p.stderr
    rows = {(r["setting"], r["algorithm"]): r for r in _csv(p.stdout)}
    setting = {prefix: LABEL_C if prefix.startswith("po") else LABEL_A for prefix in VARIANTS}
    assert set(rows) == {(setting[prefix], label) for prefix, (_, label) in VARIANTS.items()}
    acc = {key: read(path)["acc"] for key, path in vruns.items()}
    medians = {}
    for prefix, (_, label) in VARIANTS.items():
        row = rows[(setting[prefix], label)]
        seeds = SEEDS.get(prefix, (0, 1))
        assert row["seeds"] == ";".join(map(str, seeds)) and int(row["runs"]) == len(seeds), label
        medians[prefix] = float(np.median([acc[(prefix, s)].mean() for s in seeds]))
        assert float(row["median"]) == pytest.approx(medians[prefix], abs=1e-12), label
        assert "share a seed" not in row["note"], label
    # ranks are over the variants of setting A
    a = [prefix for prefix in VARIANTS if setting[prefix] == LABEL_A]
    for prefix in a:
        rank = sum(medians[o] > medians[prefix] for o in a) + (sum(medians[o] == medians[prefix] for o in a) + 1) / 2
        assert float(rows[(LABEL_A, VARIANTS[prefix][1])]["rank"]) == pytest.approx(rank), prefix
    # IPR is paired with the default fedavg variant (the options most of the setting's runs share),
    # never with fedavg (q=0), and a note says so; both fedavg variants are baselines
    for prefix in ("qffl_q0", "qffl_q1"):
        row = rows[(LABEL_A, VARIANTS[prefix][1])]
        shares = [np.mean(acc[(prefix, s)] > np.maximum(acc[("local", s)], acc[("fedavg", s)])) for s in (0, 1)]
        assert float(row["ipr_percent"]) == pytest.approx(100.0 * float(np.median(shares))), prefix
        assert "2 fedavg variants in this setting" in row["note"] and "fedavg (q=1) is used" in row["note"]
    for prefix in ("fedavg", "fedavgq0", "local"):
        row = rows[(LABEL_A, VARIANTS[prefix][1])]
        assert math.isnan(float(row["ipr_percent"])) and row["note"].startswith("baseline"), prefix

    p = inproc("compare", *vruns.values())
    assert p.returncode == 0, p.stderr
    for prefix, (_, label) in VARIANTS.items():
        assert f"| {label} " in p.stdout, label  # the per-setting and the average-rank tables


@fedsilo_exe
def test_figures_have_one_entry_per_variant(vruns, inproc, tmp_path):
    from analysis.plots import group_by_algorithm
    from analysis.results import load_runs

    a = [p for (prefix, _), p in vruns.items() if not prefix.startswith("po")]
    c = [p for (prefix, _), p in vruns.items() if prefix.startswith("po")]
    groups = {k: sorted(r.path for r in rs) for k, rs in group_by_algorithm(load_runs(a)).items()}
    assert groups == {label: sorted(p for (x, _), p in vruns.items() if x == prefix)
                      for prefix, (_, label) in VARIANTS.items() if not prefix.startswith("po")}
    groups = group_by_algorithm(load_runs(c))
    assert {k: len(rs) for k, rs in groups.items()} == {VARIANTS["po"][1]: 2, VARIANTS["po2"][1]: 2}
    # files of two settings: "variant (variant options; setting parts)"
    keys = group_by_algorithm(load_runs(list(vruns.values())))
    assert "qffl (q=0; mlp / 4 clients / dirichlet / 2 rounds)" in keys
    assert "public_only (finetune_lr=0.05, public_epochs=2; logreg / 5 clients / labels / one-shot)" in keys

    for kind, files, size in (("convergence", a, WIDE), ("gems-finetune", c, SINGLE)):
        out = tmp_path / f"{kind}.png"
        p = inproc("plot", kind, *files, "--out", out)
        assert p.returncode == 0, (kind, p.stderr)
        check_png(out, size)


@fedsilo_exe
def test_report_uses_variant_labels(vruns, inproc, tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    for path in vruns.values():
        shutil.copy(path, root / os.path.basename(path))
    out = tmp_path / "report.md"
    p = inproc("report", root, "--out", out)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    for _, label in VARIANTS.values():
        assert f"| {label} |" in text or f"| {label} [" in text, label
    assert "not drawn" not in text


# --------------------------------------------------------------------------- label rules, on fake files


def test_variant_label_rules(make_run):
    from analysis.results import load_runs
    from analysis.settings import group_by_variant, variant_labels

    def run(name, algo, sections, **kw):
        return make_run(name, [0.5, 0.6], algorithm=algo, config_sections=sections, **kw)

    paths = [
        # x: gems.finetune_epochs and fedbabu.finetune_epochs both differ (full names), liars is empty
        # in one; seed, [eval], [output] and [checkpoint] define no variant
        run("x1.h5", "x", "[gems]\nfinetune_epochs = 1\n[fedbabu]\nfinetune_epochs = 1\n[alpha_fedavg]\nliars = \n"
                          "[eval]\nevery = 1\n", seed=1),
        run("x2.h5", "x", "[gems]\nfinetune_epochs = 1\n[fedbabu]\nfinetune_epochs = 1\n[alpha_fedavg]\nliars = \n"
                          "[eval]\nevery = 2\n[output]\nclient_models = true\n[checkpoint]\nevery = 3\n", seed=2),
        run("x3.h5", "x", "[gems]\nfinetune_epochs = 2\n[fedbabu]\nfinetune_epochs = 3\n[alpha_fedavg]\nliars = 1\n"),
        # qffl: q differs in the logreg setting only; the mlp setting's run gets the same label as its
        # variant there. A key only some files have (an older fedsilo) is not compared.
        run("q0.h5", "qffl", "[qffl]\nq = 0\n[gems]\nnew = 1\n"),
        run("q1.h5", "qffl", "[qffl]\nq = 1\n"),
        run("q1_mlp.h5", "qffl", "[qffl]\nq = 1\n", model="mlp"),
        # fedavg: one variant, plain name
        run("f.h5", "fedavg", "[qffl]\nq = 1\n"),
    ]
    runs = load_runs(paths)
    assert variant_labels(runs) == [
        "x (liars=\"\", fedbabu.finetune_epochs=1, gems.finetune_epochs=1)",
        "x (liars=\"\", fedbabu.finetune_epochs=1, gems.finetune_epochs=1)",
        "x (liars=1, fedbabu.finetune_epochs=3, gems.finetune_epochs=2)",
        "qffl (q=0)", "qffl (q=1)", "qffl (q=1)", "fedavg"]
    groups = group_by_variant(runs)
    logreg = next(s for s in groups if "logreg" in s)
    assert [len(rs) for rs in groups[logreg].values()] == [1, 1, 1, 2, 1]  # x1 and x2 pool (seeds 1, 2)
