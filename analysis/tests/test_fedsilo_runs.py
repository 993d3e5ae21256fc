"""Every command on small results files written by fedsilo itself ($FEDSILO_EXE; ctest sets it).

The module fixture runs 13 tiny experiments (1 rank each, about a second apiece) in three settings:

* A: FashionMNIST, MLP 784-16-10, 4 clients (Dirichlet, 200 samples each), 2 rounds:
  fedavg, local, playerfl and alpha_fedavg (fixed α = 0.4, below the default α axis) at seeds 0 and 1;
* B: the same data with logistic regression (one layer block: 1-D /sensitivity), 3 rounds evaluated
  every 2 (rounds 0 and 2): fedavg, local, alpha_fedavg at seed 0;
* C: GEMS, configs/gems_fmnist_logreg.ini made tiny: gems and average, seed 0 (one-shot).

Expected table values are computed here from the HDF5 datasets with h5py and numpy, not through the
analysis package; every figure must be a non-empty PNG of the documented size.
"""

import csv
import io
import math
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
import pytest

from analysis.tests.images import DOUBLE, SINGLE, SIZE_OF_KIND, TRIPLE, WIDE, check_png

EXE = os.environ.get("FEDSILO_EXE", "")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = [
    pytest.mark.fedsilo_exe,
    pytest.mark.skipif(not (EXE and os.path.isfile(EXE) and os.access(EXE, os.X_OK)),
                       reason="set FEDSILO_EXE to the fedsilo executable to run these tests"),
]

DATA = ["--dataset", "fashion_mnist", "--clients", "4", "--partition.scheme", "dirichlet",
        "--partition.samples_per_client", "200", "--eval.batch", "1000"]
SETTING_A = DATA + ["--model", "mlp", "--model.hidden", "16", "--rounds", "2"]
SETTING_B = DATA + ["--model", "logreg", "--rounds", "3", "--eval.every", "2"]
SETTING_C = ["--config", os.path.join(REPO, "configs", "gems_fmnist_logreg.ini"), "--gems.local_epochs", "1",
             "--gems.samples", "20", "--partition.samples_per_client", "300", "--gems.public_samples", "100",
             "--gems.finetune_sizes", "0,10,100"]
LABEL_A = "fashion_mnist / mlp / 4 clients / dirichlet / 2 rounds"
LABEL_B = "fashion_mnist / logreg / 4 clients / dirichlet / 3 rounds"
LABEL_C = "fashion_mnist / logreg / 5 clients / labels / one-shot"
ALPHA_A = 0.4


def _plan():
    plan = {}
    for seed in (0, 1):
        for algo in ("fedavg", "local", "playerfl", "alpha_fedavg"):
            extra = ["--alpha_fedavg.alpha", str(ALPHA_A)] if algo == "alpha_fedavg" else []
            plan[f"A_{algo}_s{seed}"] = SETTING_A + ["--algorithm", algo, "--seed", str(seed)] + extra
    for algo in ("fedavg", "local", "alpha_fedavg"):
        plan[f"B_{algo}_s0"] = SETTING_B + ["--algorithm", algo, "--seed", "0"]
    for algo in ("gems", "average"):
        plan[f"C_{algo}_s0"] = SETTING_C + ["--algorithm", algo, "--seed", "0"]
    return plan


# fedsilo's arguments (a tuple) -> the results file a fixture ran with them. The files are only read,
# so a later fixture asking for the same run (test_variants repeats four of setting A's) gets the file
# instead of a second run.
_RESULTS = {}


def run_all(d, plan):
    """Run fedsilo once per {name: arguments}, two at a time, writing d/<name>.h5, unless an earlier
    call ran the same arguments; {name: path}."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def one(item):
        name, args = item
        out = d / f"{name}.h5"
        cmd = [EXE, *args, "--output", str(out)]
        p = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=300, env=env)
        assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout}\n{p.stderr}"
        assert out.exists() and not (d / f"{name}.h5.partial").exists()
        return name, str(out)

    todo = {name: args for name, args in plan.items() if tuple(args) not in _RESULTS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(pool.map(one, todo.items()))
    _RESULTS.update({tuple(args): done[name] for name, args in todo.items()})
    return {name: _RESULTS[tuple(args)] for name, args in plan.items()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{name: path} of the fedsilo results files, all in one directory."""
    return run_all(tmp_path_factory.mktemp("fedsilo_runs"), _plan())


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


# --------------------------------------------------------------------------- independent reference values


def read(path):
    """What the tables need, straight from the file."""
    with h5py.File(path, "r") as f:
        return {
            "algorithm": f.attrs["algorithm"].decode(),
            "seed": int(f.attrs["seed"]),
            "acc": np.asarray(f["summary/client_accuracy"], dtype=float),
            "f1": np.asarray(f["summary/client_f1"], dtype=float),
            "n": np.asarray(f["clients/num_train"], dtype=float),
            "global": float(f["summary/global_accuracy"][()]),
            "seconds": float(f["summary/seconds_per_round"][()]),
            "stored": {k: float(f["summary"][k][()]) for k in
                       ("mean", "median", "worst10", "best10", "variance", "jain", "efficiency")},
        }


def stats(values, n=None):
    a = np.asarray(values, dtype=float)
    ok = np.isfinite(a)
    v = np.sort(a[ok])
    m = int(math.ceil(v.size / 10))
    out = {"mean": v.mean(), "median": np.median(v), "worst10": v[:m].mean(), "best10": v[-m:].mean(),
           "variance": ((v - v.mean()) ** 2).mean(), "jain": v.sum() ** 2 / (v.size * (v * v).sum())}
    if n is not None:
        out["efficiency"] = float((a[ok] * n[ok]).sum() / n[ok].sum())
    return out


def ranks(values, best_high=True):
    """Rank 1 = best; ties share the mean of their positions."""
    names = list(values)
    key = {k: (-values[k] if best_high else values[k]) for k in names}
    out = {}
    for k in names:
        better = sum(1 for j in names if key[j] < key[k])
        ties = sum(1 for j in names if key[j] == key[k])
        out[k] = better + (ties + 1) / 2
    return out


# --------------------------------------------------------------------------- summary


def test_summary_values(runs, inproc):
    p = inproc("summary", "--format", "csv", *runs.values())
    assert p.returncode == 0, p.stderr
    rows = {r["file"]: r for r in _csv(p.stdout)}
    assert set(rows) == set(runs.values())
    for path in runs.values():
        ref = read(path)
        row = rows[path]
        assert row["algorithm"] == ref["algorithm"] and int(row["seed"]) == ref["seed"]
        acc = stats(ref["acc"], ref["n"])
        f1 = stats(ref["f1"])
        for key in ("mean", "median", "worst10", "best10"):
            assert float(row["acc_" + key]) == pytest.approx(acc[key], abs=1e-12), (path, key)
            assert float(row["f1_" + key]) == pytest.approx(f1[key], abs=1e-12), (path, key)
        for key in ("variance", "jain", "efficiency"):
            assert float(row[key]) == pytest.approx(acc[key], abs=1e-12), (path, key)
        # fedsilo's own /summary scalars agree with the same definitions
        for key, value in ref["stored"].items():
            assert value == pytest.approx(acc[key], rel=1e-6, abs=1e-9), (path, key)
        if math.isnan(ref["global"]):
            assert row["global_accuracy"] == "nan"
        else:
            assert float(row["global_accuracy"]) == pytest.approx(ref["global"])
        assert float(row["seconds_per_round"]) == pytest.approx(ref["seconds"], rel=1e-12)

    p = inproc("summary", *runs.values())
    assert p.returncode == 0 and p.stdout.count("\n| ") >= len(runs)


# --------------------------------------------------------------------------- compare


def _expected_compare(paths_by_setting):
    """{setting: {algorithm: (median, fairness, ipr or None)}} from the files alone."""
    out = {}
    for setting, paths in paths_by_setting.items():
        by_algo = {}
        for p in paths:
            r = read(p)
            by_algo.setdefault(r["algorithm"], []).append(r)
        base = {b: {r["seed"]: r["acc"] for r in by_algo.get(b, [])} for b in ("local", "fedavg")}
        table = {}
        for algo, rs in by_algo.items():
            med = float(np.median([r["acc"].mean() for r in rs]))
            client_meds = np.median(np.vstack([r["acc"] for r in rs]), axis=0)
            fair = float(((client_meds - client_meds.mean()) ** 2).mean())
            ipr = None
            if algo not in ("local", "fedavg") and base["local"] and base["fedavg"]:
                shares = [float(np.mean(r["acc"] > np.maximum(base["local"][r["seed"]], base["fedavg"][r["seed"]])))
                          for r in rs]
                ipr = 100.0 * float(np.median(shares))
            table[algo] = (med, fair, ipr)
        out[setting] = table
    return out


def _by_setting(runs):
    return {LABEL_A: [p for n, p in runs.items() if n.startswith("A_")],
            LABEL_B: [p for n, p in runs.items() if n.startswith("B_")],
            LABEL_C: [p for n, p in runs.items() if n.startswith("C_")]}


def test_compare_groups_by_setting_and_values(runs, inproc):
    p = inproc("compare", "--format", "csv", *runs.values())
    assert p.returncode == 0, p.stderr
    rows = {(r["setting"], r["algorithm"]): r for r in _csv(p.stdout)}
    # same dataset, three settings: the MLP and logreg runs and the one-shot GEMS runs are not pooled
    assert {s for s, _ in rows} == {LABEL_A, LABEL_B, LABEL_C}
    expected = _expected_compare(_by_setting(runs))
    assert set(rows) == {(s, a) for s, t in expected.items() for a in t}
    for setting, table in expected.items():
        acc_rank = ranks({a: v[0] for a, v in table.items()})
        fair_rank = ranks({a: v[1] for a, v in table.items()}, best_high=False)
        for algo, (med, fair, ipr) in table.items():
            row = rows[(setting, algo)]
            assert row["dataset"] == "fashion_mnist"
            assert float(row["median"]) == pytest.approx(med, abs=1e-12), (setting, algo)
            assert float(row["fairness_variance"]) == pytest.approx(fair, abs=1e-12), (setting, algo)
            if ipr is None:
                assert math.isnan(float(row["ipr_percent"])), (setting, algo)
            else:  # paired with the local/fedavg runs of the same setting and seed
                assert float(row["ipr_percent"]) == pytest.approx(ipr), (setting, algo)
            assert float(row["rank"]) == pytest.approx(acc_rank[algo]), (setting, algo)
            assert float(row["fairness_rank"]) == pytest.approx(fair_rank[algo]), (setting, algo)
            assert row["seeds"] == ";".join(str(s) for s in sorted(read(p)["seed"] for p in _by_setting(runs)[setting]
                                                                   if read(p)["algorithm"] == algo))
    # the one-shot setting has no local/fedavg runs: no IPR, and nothing borrowed from setting A or B
    assert "no local and no fedavg run of this setting" in rows[(LABEL_C, "gems")]["note"]


def test_compare_ranks_and_friedman(runs, inproc):
    from scipy.stats import friedmanchisquare

    paths = {s: ps for s, ps in _by_setting(runs).items() if s != LABEL_C}
    p = inproc("compare", "--format", "csv", *[x for ps in paths.values() for x in ps])
    assert p.returncode == 0, p.stderr
    rows = {(r["setting"], r["algorithm"]): r for r in _csv(p.stdout)}
    expected = _expected_compare(paths)
    common = sorted(set(expected[LABEL_A]) & set(expected[LABEL_B]))
    assert common == ["alpha_fedavg", "fedavg", "local"]
    for idx, (col, avg_col, stat_col, p_col, high) in enumerate([
            ("rank", "average_rank", "friedman_statistic", "friedman_p", True),
            ("fairness_rank", "average_fairness_rank", "fairness_friedman_statistic", "fairness_friedman_p", False)]):
        per = {s: ranks({a: v[idx] for a, v in t.items()}, best_high=high) for s, t in expected.items()}
        for algo in expected[LABEL_A]:
            avg = np.mean([per[s][algo] for s in per if algo in per[s]])
            assert float(rows[(LABEL_A, algo)][avg_col]) == pytest.approx(avg), (col, algo)
        stat, pval = friedmanchisquare(*[[expected[s][a][idx] for s in (LABEL_A, LABEL_B)] for a in common])
        if np.isfinite(stat):
            assert float(rows[(LABEL_A, "fedavg")][stat_col]) == pytest.approx(stat), col
            assert float(rows[(LABEL_A, "fedavg")][p_col]) == pytest.approx(pval), col
    p = inproc("compare", *[x for ps in paths.values() for x in ps])
    assert p.returncode == 0, p.stderr
    assert f"### Setting: {LABEL_A}" in p.stdout and f"### Setting: {LABEL_B}" in p.stdout
    assert "average fairness rank" in p.stdout and "Friedman test on the fairness ranks" in p.stdout


# --------------------------------------------------------------------------- plots


def test_every_plot(runs, inproc, tmp_path):
    def plot(kind, *args, size):
        out = tmp_path / f"{kind}.png"
        p = inproc("plot", kind, *args, "--out", out)
        assert p.returncode == 0, (kind, p.stderr)
        check_png(out, size)

    plot("accuracy-hist", runs["A_alpha_fedavg_s0"], runs["A_fedavg_s0"], size=DOUBLE)
    plot("sensitivity", runs["A_playerfl_s0"], size=SINGLE)
    plot("sensitivity", runs["B_fedavg_s0"], "--stage", "final", size=SINGLE)  # logreg: one block, 1-D
    plot("convergence", *[p for n, p in runs.items() if n.startswith("A_")], size=WIDE)
    plot("convergence", *runs.values(), size=WIDE)  # three settings, evaluation gaps, one-shot markers
    plot("alpha-tradeoff", runs["A_alpha_fedavg_s0"], size=TRIPLE)
    plot("alpha-tradeoff", runs["B_alpha_fedavg_s0"], "--alphas", "1..5", "--sample-weighted", size=TRIPLE)
    plot("gems-finetune", runs["C_gems_s0"], runs["C_average_s0"], size=SINGLE)
    csv_path = tmp_path / "scaling.csv"
    csv_path.write_text(_scaling_csv(runs))
    plot("scaling", csv_path, size=DOUBLE)


def _scaling_csv(runs):
    """A scaling CSV in the format of jobs/local/scaling.sh, from the runs' /summary/seconds_per_round."""
    t = [read(runs[f"A_fedavg_s{s}"])["seconds"] for s in (0, 1)]
    return f"mode,ranks,clients,seconds_per_round\nstrong,1,4,{t[0]!r}\nstrong,2,4,{t[1]!r}\n"


def test_reader_views_of_fedsilo_files(runs):
    from analysis.plots import convergence_curves, default_alphas
    from analysis.results import load_run

    lr = load_run(runs["B_fedavg_s0"])
    with h5py.File(runs["B_fedavg_s0"], "r") as f:
        sens = np.asarray(f["sensitivity/round0"])
        k = int(f.attrs["num_clients"])
    assert lr.sensitivity["round0"].shape == (k, 1)  # [K] in the file when L = 1 is read as [K, 1]
    np.testing.assert_array_equal(lr.sensitivity["round0"].reshape(-1), sens.reshape(-1))
    xs, _, _ = convergence_curves([lr])
    np.testing.assert_array_equal(xs, [0, 2])  # eval.every = 2: rounds 0 and 2 (the last)
    a = load_run(runs["A_alpha_fedavg_s0"])
    assert a.alpha == pytest.approx(ALPHA_A)
    alphas = default_alphas(a.alpha)
    assert alphas[0] <= ALPHA_A <= alphas[-1] and alphas[-1] >= 20


METRICS = ("global_accuracy", "global_loss", "client_accuracy", "client_f1", "client_loss")


def relayout(src, dst, per_round):
    """Copy a results file with /rounds in either layout fedsilo has written: one row per round (NaN
    evaluation entries in rounds not evaluated) or one row per evaluated round; the /summary values
    that have a /rounds fallback are removed so that the fallbacks are used."""
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        g = f["rounds"]
        t = int(f.attrs["num_rounds"])
        data = {name: np.asarray(g[name][()], dtype=float) for name in g}
        rnd = data["round"].astype(int)
        evaluated = np.isfinite(data["client_accuracy"]).any(axis=1)
        for name, old in data.items():
            if per_round:
                new = np.full((t,) + old.shape[1:], np.nan)
                new[rnd] = old
                if name not in METRICS:  # filled every round: the source's value, else the last one
                    missing = np.setdiff1d(np.arange(t), rnd)
                    new[missing] = old[-1]
                if name == "round":
                    new = np.arange(t, dtype=float)
            else:
                new = old[evaluated]
            del g[name]
            g[name] = new
        del f["summary/seconds_per_round"]
        del f["summary/client_accuracy"]
        return np.asarray(g["seconds"][()])


@pytest.mark.parametrize("per_round", [True, False], ids=["one-row-per-round", "evaluated-rows-only"])
def test_both_rounds_layouts(runs, tmp_path, inproc, per_round):
    """eval.every = 2 over 3 rounds: rounds 0 and 2 evaluated, in either /rounds layout."""
    from analysis.plots import convergence_curves
    from analysis.results import load_run

    src = runs["B_fedavg_s0"]
    dst = tmp_path / "relayout.h5"
    seconds = relayout(src, dst, per_round)
    run = load_run(str(dst))
    assert run.rounds["client_accuracy"].shape[0] == (3 if per_round else 2)
    xs, _, _ = convergence_curves([run])
    np.testing.assert_array_equal(xs, [0, 2])
    np.testing.assert_allclose(run.client_accuracy, read(src)["acc"])  # the last evaluated row
    assert run.seconds_per_round == pytest.approx(float(np.median(seconds)))
    out = tmp_path / "c.png"
    p = inproc("plot", "convergence", dst, "--out", out)
    assert p.returncode == 0, p.stderr
    check_png(out, WIDE)
    p = inproc("summary", "--format", "csv", dst)
    assert p.returncode == 0, p.stderr
    assert float(_csv(p.stdout)[0]["acc_mean"]) == pytest.approx(float(np.mean(read(src)["acc"])))


# --------------------------------------------------------------------------- report


def test_report(runs, inproc, tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    for name, path in runs.items():
        shutil.copy(path, root / f"{name}.h5")
    (root / "scaling.csv").write_text(_scaling_csv(runs))
    out = tmp_path / "report" / "report.md"
    out.parent.mkdir()
    p = inproc("report", root, "--out", out)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    for label in (LABEL_A, LABEL_B, LABEL_C):
        assert f"### Setting: {label}" in text
    # the summary row of one run holds its values, as computed from the file
    ref = read(runs["A_playerfl_s1"])
    summary = text.split("\n## Summary\n", 1)[1]
    row = next(l for l in summary.splitlines() if "A_playerfl_s1.h5" in l)
    assert f"{stats(ref['acc'])['mean']:.4f}" in row
    links = [l.split("](", 1)[1].rstrip(")") for l in text.splitlines() if l.startswith("![")]
    kinds = [os.path.basename(l).split("-")[1] for l in links]
    assert {"convergence", "oneshot", "sensitivity", "accuracy", "alpha", "gems", "scaling"} <= set(kinds), links
    assert kinds.count("convergence") == 2  # one per setting with rounds (A, B); the one-shot setting C:
    assert kinds.count("oneshot") == 1      # its point chart
    for link, kind in zip(links, kinds):
        check_png(out.parent / link, SIZE_OF_KIND[kind])
    assert "not drawn" not in text


# --------------------------------------------------------------------------- the numbers behind the figures


def _figure_rows(inproc, tmp_path, kind, *args):
    """Draw one figure with --csv and return its rows."""
    out, data = tmp_path / f"{kind}.png", tmp_path / f"{kind}.csv"
    p = inproc("plot", kind, *args, "--out", out, "--csv", data)
    assert p.returncode == 0, (kind, p.stderr)
    with open(data, newline="") as fh:
        return list(csv.DictReader(fh))


def _points(rows, algorithm, statistic):
    sel = [r for r in rows if r["algorithm"] == algorithm and r["statistic"] == statistic]
    return np.array([float(r["x"]) for r in sel]), np.array([float(r["y"]) for r in sel])


def _round_stats(path):
    """{round: (mean, worst-10% mean)} over the finite client accuracies of each evaluated round."""
    with h5py.File(path, "r") as f:
        acc = np.asarray(f["rounds/client_accuracy"], dtype=float)
        rnd = np.asarray(f["rounds/round"])
    out = {}
    for t, row in zip(rnd, acc):
        v = np.sort(row[np.isfinite(row)])
        if v.size:
            out[int(t)] = (v.mean(), v[: int(math.ceil(v.size / 10))].mean())
    return out


def test_convergence_numbers_from_the_files(runs, inproc, tmp_path):
    a = [p for n, p in runs.items() if n.startswith("A_")]
    rows = _figure_rows(inproc, tmp_path, "convergence", *a)
    for algo in ("fedavg", "local", "playerfl", "alpha_fedavg"):
        per_seed = [_round_stats(runs[f"A_{algo}_s{s}"]) for s in (0, 1)]
        rounds = sorted(per_seed[0])
        assert rounds == [0, 1]
        for j, stat in enumerate(("mean", "worst10")):
            values = np.array([[p[t][j] for t in rounds] for p in per_seed])
            xs, ys = _points(rows, algo, stat)
            np.testing.assert_array_equal(xs, rounds)
            np.testing.assert_allclose(ys, values.mean(axis=0), rtol=0, atol=1e-12)
            np.testing.assert_allclose(_points(rows, algo, stat + "_low")[1], values.min(axis=0), atol=1e-12)
            np.testing.assert_allclose(_points(rows, algo, stat + "_high")[1], values.max(axis=0), atol=1e-12)
    # setting B is evaluated every 2 of 3 rounds: points at rounds 0 and 2 only
    rows = _figure_rows(inproc, tmp_path, "convergence", runs["B_fedavg_s0"])
    xs, ys = _points(rows, "fedavg", "mean")
    np.testing.assert_array_equal(xs, [0, 2])
    stats = _round_stats(runs["B_fedavg_s0"])
    np.testing.assert_allclose(ys, [stats[0][0], stats[2][0]])


def test_histogram_sensitivity_and_one_shot_numbers_from_the_files(runs, inproc, tmp_path):
    pair = (runs["A_alpha_fedavg_s0"], runs["A_fedavg_s0"])
    rows = _figure_rows(inproc, tmp_path, "accuracy-hist", *pair)
    accs = [read(p)["acc"] for p in pair]
    both = np.concatenate([a[np.isfinite(a)] for a in accs])
    edges = np.linspace(both.min(), both.max(), 21)
    for name, acc in zip(("alpha_fedavg", "fedavg"), accs):
        np.testing.assert_array_equal(_points(rows, name, "clients_in_bin")[1], np.histogram(acc, bins=edges)[0])

    rows = _figure_rows(inproc, tmp_path, "sensitivity", runs["A_playerfl_s0"])
    with h5py.File(runs["A_playerfl_s0"], "r") as f:
        s = np.asarray(f["sensitivity/round0"], dtype=float)
        layers = [x.decode() for x in f["sensitivity/layers"][()]]
        split = int(f["playerfl/split_layer"][()])
    curves = np.cumsum(s / s[:, :1], axis=1)
    for k in range(s.shape[0]):
        sel = [r for r in rows if r["statistic"] == f"client {k}"]
        assert [r["x"] for r in sel] == layers
        np.testing.assert_allclose([float(r["y"]) for r in sel], curves[k], rtol=1e-12)
    np.testing.assert_allclose([float(r["y"]) for r in rows if r["statistic"] == "mean"], curves.mean(axis=0))
    (line,) = [r for r in rows if r["statistic"] == "split_after"]
    assert (line["x"], int(line["y"])) == (layers[split - 1], split)

    c = [runs["C_gems_s0"], runs["C_average_s0"]]
    rows = _figure_rows(inproc, tmp_path, "gems-finetune", *c)
    for name, path in zip(("gems", "average"), c):
        with h5py.File(path, "r") as f:
            samples, acc = np.asarray(f["gems/finetune/samples"]), np.asarray(f["gems/finetune/accuracy"])
        xs, ys = _points(rows, name, "mean")
        np.testing.assert_array_equal(xs, samples)
        np.testing.assert_allclose(ys, acc)
    rows = _figure_rows(inproc, tmp_path, "oneshot", *c)
    for name, path in zip(("gems", "average"), c):
        with h5py.File(path, "r") as f:
            before, after = float(f["gems/accuracy_before"][()]), float(f["gems/accuracy_after"][()])
        assert _points(rows, name, "client_mean")[1] == pytest.approx([read(path)["acc"].mean()])
        assert _points(rows, name, "test_no_finetune")[1] == pytest.approx([before])
        xs, ys = _points(rows, name, "test_finetuned")
        assert (xs, ys) == (pytest.approx([100]), pytest.approx([after]))  # SETTING_C: gems.public_samples 100


def test_one_shot_table_from_the_files(runs, inproc):
    c = [runs["C_gems_s0"], runs["C_average_s0"]]
    p = inproc("compare", "--format", "csv", *c)
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    rows = {r["algorithm"]: r for r in _csv(p.stdout)}
    for name, path in zip(("gems", "average"), c):
        with h5py.File(path, "r") as f:
            # the client scores are the final model's: fedsilo's own per-client evaluation agrees
            np.testing.assert_array_equal(f["summary/client_accuracy"][()], f["gems/client_accuracy"][()])
            before, after = float(f["gems/accuracy_before"][()]), float(f["gems/accuracy_after"][()])
        assert float(rows[name]["test_accuracy_no_finetune"]) == pytest.approx(before)
        assert float(rows[name]["test_accuracy_finetuned"]) == pytest.approx(after)
        assert rows[name]["client_finetune_samples"] == "100"
    assert rows["gems"]["client_model"] == "GEMS model, fine-tuned on 100 public samples"
    assert rows["average"]["client_model"] == "averaged model, fine-tuned on 100 public samples"


# runs that other tests must not see: a high α-FedAvg accuracy floor, and client sampling
EXTRA = {
    "D_alpha_floor": SETTING_A + ["--rounds", "3", "--algorithm", "alpha_fedavg", "--alpha_fedavg.accuracy_floor",
                                  "0.9", "--seed", "0"],
    "E_sampled": SETTING_A + ["--algorithm", "fedavg", "--fl.clients_per_round", "2", "--seed", "0"],
}


@pytest.fixture(scope="module")
def extra_runs(tmp_path_factory):
    return run_all(tmp_path_factory.mktemp("fedsilo_extra"), EXTRA)


def _floored_tradeoff(acc, alpha, floor):
    a = np.clip(acc, floor, 1.0)
    b = 1.0 / alpha
    return (a ** b).sum() / (a ** (b - 1)).sum(), (a ** b).sum() ** 2 / (a.size * (a ** (2 * b)).sum())


def test_alpha_tradeoff_with_the_runs_floor(extra_runs, inproc, tmp_path):
    path = extra_runs["D_alpha_floor"]
    with h5py.File(path, "r") as f:
        config = f.attrs["config"].decode()
        chosen = float(f["alpha_fedavg/alpha"][()])
    assert "accuracy_floor = 0.9" in config
    acc = read(path)["acc"]
    assert (acc < 0.9).any()  # the floor binds
    rows = _figure_rows(inproc, tmp_path, "alpha-tradeoff", path)
    alphas, es = _points(rows, "alpha_fedavg", "E")
    _, js = _points(rows, "alpha_fedavg", "J")
    for alpha, e, j in list(zip(alphas, es, js))[::25]:
        assert (e, j) == pytest.approx(_floored_tradeoff(acc, alpha, 0.9))
    (star,) = [r for r in rows if r["statistic"] == "chosen_E"]
    assert float(star["x"]) == pytest.approx(chosen)
    assert float(star["y"]) == pytest.approx(_floored_tradeoff(acc, chosen, 0.9)[0])
    assert float(star["y"]) != pytest.approx(_floored_tradeoff(acc, chosen, 1e-6)[0])


def test_sensitivity_of_clients_not_selected(extra_runs, inproc, tmp_path):
    from analysis.plots.sensitivity import absence_reason
    from analysis.results import load_run

    path = extra_runs["E_sampled"]
    with h5py.File(path, "r") as f:
        took_part = np.asarray(f["rounds/participated"][0]) == 1
        s = np.asarray(f["sensitivity/round0"], dtype=float)
    assert took_part.sum() == 2
    rows = _figure_rows(inproc, tmp_path, "sensitivity", path)
    drawn = {int(r["statistic"].split()[1]) for r in rows if r["statistic"].startswith("client ")}
    assert drawn == set(np.flatnonzero(took_part & (s[:, 0] > 0)))
    run = load_run(path)
    for k in np.flatnonzero(~took_part):
        assert absence_reason(run, "round0", int(k), s[k, 0]) == "not selected in round 0"


def test_report_commands_rerun_the_runs(runs, inproc, tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    for name in ("A_fedavg_s0", "A_local_s0", "C_gems_s0"):
        shutil.copy(runs[name], root / f"{name}.h5")
    out = tmp_path / "report" / "report.md"
    out.parent.mkdir()
    p = inproc("report", root, "--out", out)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "fedsilo 0.1.0" in text or "| 0.1.0 |" in text
    # every figure has its numbers beside it
    for link in [l.split("](", 1)[1].rstrip(")") for l in text.splitlines() if l.startswith("![")]:
        assert (out.parent / link).with_suffix(".csv").exists(), link
    (line,) = [l for l in text.splitlines() if l.startswith("| `../runs/A_fedavg_s0.h5` |")]
    command = line.split("`")[-2].split()
    assert command[:2] == ["fedsilo", "--config"] and command[-2] == "--output"
    with h5py.File(runs["A_fedavg_s0"], "r") as f:
        assert (out.parent / command[2]).read_text().strip() == f.attrs["config"].decode().strip()
    rerun = tmp_path / "rerun.h5"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    q = subprocess.run([EXE, *command[1:-1], str(rerun)], cwd=out.parent, capture_output=True, text=True,
                       timeout=300, env=env)
    assert q.returncode == 0, q.stderr
    with h5py.File(runs["A_fedavg_s0"], "r") as a, h5py.File(rerun, "r") as b:
        for name in ("summary/client_accuracy", "rounds/client_accuracy", "model/global"):
            np.testing.assert_array_equal(a[name][()], b[name][()], err_msg=name)
