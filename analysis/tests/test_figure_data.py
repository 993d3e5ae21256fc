"""The numbers behind every figure (`plot ... --csv`), recomputed here from the fake files with numpy,
and the figure fixes of issue 18: seed bands, bounded KDE, reasons for absent clients, the run's
own α-FedAvg floor, tick labels over the data on the scaling axis, interval wording in `compare`."""

import csv
import io
import math

import numpy as np
import pytest

from analysis import metrics as M
from analysis.figdata import COLUMNS


def _data(path):
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == COLUMNS
        return list(reader)


def _series(rows, algorithm, statistic):
    pts = [(float(r["x"]), float(r["y"])) for r in rows if r["algorithm"] == algorithm and r["statistic"] == statistic]
    return np.array([p[0] for p in pts]), np.array([p[1] for p in pts])


# --------------------------------------------------------------------------- seed bands


def test_seed_band_follows_the_number_of_runs():
    vals = [0.61, 0.64, 0.66, 0.70, 0.72, 0.69]
    centre, lo, hi, kind = M.seed_band([0.5])
    assert centre == 0.5 and math.isnan(lo) and math.isnan(hi) and kind == "single run"  # no band
    assert M.seed_band(vals[:3])[1:] == (0.61, 0.66, "min-max")
    centre, lo, hi, kind = M.seed_band(vals)
    assert kind == "95% CI" and centre == pytest.approx(np.mean(vals))
    rng = np.random.default_rng(0)  # the documented procedure, restated
    means = np.mean(np.array(vals)[rng.integers(0, 6, size=(1000, 6))], axis=1)
    assert (lo, hi) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))
    assert M.median_interval(vals[:4])[2] == "min-max" and M.median_interval(vals[:5])[2] == "95% CI"


def test_convergence_bands_and_points(make_run, cli, tmp_path):
    """Three seeds of FedAvg (min-max band), one seed of Ditto (no band); rows of rounds that were not
    evaluated (NaN) are no points."""
    files, acc = [], {}
    for s in (1, 2, 3):
        acc[s] = np.array([0.3, 0.5, 0.6, 0.9]) + 0.02 * s
        files.append(make_run(f"f{s}.h5", acc[s], algorithm="fedavg", seed=s, rounds=4))
    d = make_run("d.h5", [0.2, 0.4, 0.6, 0.8], algorithm="ditto", seed=1, rounds=4)
    import h5py

    with h5py.File(d, "r+") as f:  # round 1 not evaluated
        f["rounds/client_accuracy"][1] = np.nan
    data = tmp_path / "c.csv"
    assert cli("plot", "convergence", *files, d, "--out", tmp_path / "c.png", "--csv", data)[0] == 0
    rows = _data(data)
    frac = (np.arange(4) + 1) / 4  # fakes.py: round t holds acc * (t+1)/T
    per_seed = np.array([[np.mean(acc[s] * f) for f in frac] for s in (1, 2, 3)])
    worst = np.array([[np.min(acc[s] * f) for f in frac] for s in (1, 2, 3)])  # ceil(4/10) = 1 client
    xs, ys = _series(rows, "fedavg", "mean")
    np.testing.assert_array_equal(xs, [0, 1, 2, 3])
    np.testing.assert_allclose(ys, per_seed.mean(axis=0))
    np.testing.assert_allclose(_series(rows, "fedavg", "mean_low")[1], per_seed.min(axis=0))
    np.testing.assert_allclose(_series(rows, "fedavg", "mean_high")[1], per_seed.max(axis=0))
    np.testing.assert_allclose(_series(rows, "fedavg", "worst10")[1], worst.mean(axis=0))
    assert {r["seed"] for r in rows if r["algorithm"] == "fedavg"} == {"1;2;3"}
    xs, ys = _series(rows, "ditto", "mean")
    np.testing.assert_array_equal(xs, [0, 2, 3])
    assert not _series(rows, "ditto", "mean_low")[0].size  # one seed: no band


def test_identical_curves_are_named(make_run):
    from analysis.plots.convergence import _series as series_of
    from analysis.results import load_run

    a = load_run(make_run("a.h5", [0.4, 0.6], algorithm="fedavg"))
    b = load_run(make_run("b.h5", [0.4, 0.6], algorithm="alpha_fedavg"))
    c = load_run(make_run("c.h5", [0.4, 0.7], algorithm="qffl"))
    out = {s.key: s.identical_to for s in series_of([a, b, c])}
    assert out == {"alpha_fedavg": None, "fedavg": "alpha_fedavg", "qffl": None}


# --------------------------------------------------------------------------- accuracy-hist


def test_histogram_counts_and_a_kde_that_stays_in_0_1(make_run, cli, tmp_path):
    a_acc = [0.9, 0.95, 0.97, 0.99, 1.0, 1.0, 0.85, 0.92]  # piled up against 1
    b_acc = [0.0, 0.02, 0.05, 0.1, 0.3, 0.5, 0.04, 0.0]    # and against 0
    a = make_run("a.h5", a_acc, algorithm="alpha_fedavg")
    b = make_run("b.h5", b_acc, algorithm="fedavg")
    data = tmp_path / "h.csv"
    assert cli("plot", "accuracy-hist", a, b, "--bins", "10", "--out", tmp_path / "h.png", "--csv", data)[0] == 0
    rows = _data(data)
    edges = np.linspace(0.0, 1.0, 11)  # the range of both runs' data, 10 bins
    for name, acc in (("alpha_fedavg", a_acc), ("fedavg", b_acc)):
        xs, counts = _series(rows, name, "clients_in_bin")
        np.testing.assert_allclose(xs, (edges[:-1] + edges[1:]) / 2)
        np.testing.assert_array_equal(counts, np.histogram(acc, bins=edges)[0])
        xs, ys = _series(rows, name, "kde_clients_per_bin")
        assert xs.min() >= 0.0 and xs.max() <= 1.0
        # mass conserved on [0, 1]: the curve (clients per bin of width 0.1) integrates to K clients
        # (an unbounded KDE puts 21% and 29% of it beyond the bounds for these data)
        mass = float(np.sum((ys[1:] + ys[:-1]) / 2 * np.diff(xs))) / 0.1  # trapezoid rule
        assert mass == pytest.approx(len(acc), rel=0.02)
        (mean,) = [float(r["x"]) for r in rows if r["algorithm"] == name and r["statistic"] == "mean"]
        assert mean == pytest.approx(np.mean(acc))


# --------------------------------------------------------------------------- sensitivity


def test_sensitivity_names_why_clients_are_absent(make_run, cli, tmp_path):
    from analysis.plots.sensitivity import absence_reason
    from analysis.results import load_run

    nan = float("nan")
    sens = [[1.0, 3.0, 9.0], [nan, nan, nan], [0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [nan, nan, nan]]
    part = np.ones((3, 5))
    part[0, 1] = 0   # not selected in round 0
    part[0, 4] = -1  # diverged in round 0
    p = make_run("p.h5", [0.5] * 5, sensitivity=sens, participated=part,
                 config_sections="[fl]\nclients_per_round = 3\ndropout = 0\n")
    run = load_run(p)
    assert absence_reason(run, "round0", 1, nan) == "not selected in round 0"
    assert absence_reason(run, "round0", 4, nan) == "update diverged and dropped in round 0"
    assert absence_reason(run, "round0", 2, 0.0) == "first-block sensitivity not positive (cannot normalise)"
    data = tmp_path / "s.csv"
    assert cli("plot", "sensitivity", p, "--out", tmp_path / "s.png", "--csv", data)[0] == 0
    rows = _data(data)
    assert {r["statistic"] for r in rows} == {"client 0", "client 3", "mean"}
    assert [float(r["y"]) for r in rows if r["statistic"] == "client 0"] == [1.0, 4.0, 13.0]
    assert [r["x"] for r in rows if r["statistic"] == "mean"] == ["fc1", "fc2", "fc3"]


def test_sensitivity_of_one_block_shows_raw_values(make_run, cli, tmp_path):
    p = make_run("lr.h5", [0.5, 0.6, 0.7], layers=["fc1"], sensitivity=np.array([1e-7, 3e-7, float("nan")]))
    data = tmp_path / "s.csv"
    assert cli("plot", "sensitivity", p, "--out", tmp_path / "s.png", "--csv", data)[0] == 0
    rows = _data(data)
    assert [(r["statistic"], float(r["x"]), float(r["y"])) for r in rows] == [("s1", 0, 1e-7), ("s1", 1, 3e-7)]


# --------------------------------------------------------------------------- alpha-tradeoff


def _closed_form(a, alpha, floor):
    a = np.clip(a, floor, 1.0)
    b = 1.0 / alpha
    return (a ** b).sum() / (a ** (b - 1)).sum(), (a ** b).sum() ** 2 / (a.size * (a ** (2 * b)).sum())


@pytest.mark.parametrize("floor", [None, 0.1])
def test_alpha_tradeoff_uses_the_runs_floor(make_run, cli, tmp_path, floor):
    acc = np.array([0.0, 0.05, 0.6, 0.8, 0.9])
    cfg = "" if floor is None else f"[alpha_fedavg]\naccuracy_floor = {floor}\nweighted = false\n"
    p = make_run("a.h5", acc, algorithm="alpha_fedavg", alpha=2.29, config_sections=cfg,
                 alpha_records={"search_round": np.int64(1), "efficiency_target": 0.7})
    data = tmp_path / "a.csv"
    assert cli("plot", "alpha-tradeoff", p, "--out", tmp_path / "a.png", "--csv", data)[0] == 0
    rows = _data(data)
    used = 1e-6 if floor is None else floor  # fedsilo's default floor when the file does not say
    alphas, es = _series(rows, "alpha_fedavg", "E")
    _, js = _series(rows, "alpha_fedavg", "J")
    for alpha, e, j in zip(alphas[::20], es[::20], js[::20]):
        assert (e, j) == pytest.approx(_closed_form(acc, alpha, used))
    (chosen,) = [r for r in rows if r["statistic"] == "chosen_E"]
    assert float(chosen["x"]) == pytest.approx(2.29)
    e_star, _ = _closed_form(acc, 2.29, used)
    assert float(chosen["y"]) == pytest.approx(e_star)
    if floor is not None:  # the floor changes the numbers: with 1e-6 the client at 0 takes nearly all weight
        assert e_star > 0.3 > _closed_form(acc, 2.29, 1e-6)[0]


def test_alpha_tradeoff_is_weighted_as_the_run_was(make_run, cli, tmp_path):
    acc, n = np.array([0.3, 0.6, 0.9]), np.array([10.0, 20.0, 70.0])
    p = make_run("w.h5", acc, num_train=n.astype(int), algorithm="alpha_fedavg",
                 config_sections="[alpha_fedavg]\nweighted = true\n")
    data = tmp_path / "w.csv"
    assert cli("plot", "alpha-tradeoff", p, "--alphas", "1,3", "--out", tmp_path / "w.png", "--csv", data)[0] == 0
    _, es = _series(_data(data), "alpha_fedavg", "E")
    w = n / n.sum()
    assert es[0] == pytest.approx(np.sum(w * acc))  # α = 1: the sample-weighted mean
    p3 = w ** (1 / 3) * acc ** (1 / 3 - 1)
    assert es[1] == pytest.approx(np.sum(p3 / p3.sum() * acc))


# --------------------------------------------------------------------------- gems-finetune, scaling


def test_gems_finetune_numbers(make_run, cli, tmp_path):
    g1 = make_run("g1.h5", [0.5], algorithm="gems", seed=1, gems=([0, 100], [0.6, 0.8]))
    g2 = make_run("g2.h5", [0.5], algorithm="gems", seed=2, gems=([0, 100], [0.64, 0.78]))
    data = tmp_path / "g.csv"
    assert cli("plot", "gems-finetune", g1, g2, "--out", tmp_path / "g.png", "--csv", data)[0] == 0
    rows = _data(data)
    xs, ys = _series(rows, "gems", "mean")
    np.testing.assert_allclose(xs, [0, 100])
    np.testing.assert_allclose(ys, [0.62, 0.79])
    np.testing.assert_allclose(_series(rows, "gems", "mean_plus_sd")[1], [0.64, 0.80])


def test_scaling_labels_the_range_of_the_data(tmp_path, cli):
    from analysis.plots.common import new_figure
    from analysis.plots.scaling import _time_axis

    fig, (ax,) = new_figure((4, 3))
    _time_axis(ax, np.array([1.12, 1.25, 1.38, 1.1, 1.21, 1.35]))
    lo, hi = ax.get_ylim()
    inside = [t for t in ax.get_yticks() if lo <= t <= hi]
    assert len(inside) >= 3 and min(inside) <= 1.2 and max(inside) >= 1.3  # the data's range is labelled
    csv_in = tmp_path / "s.csv"
    csv_in.write_text("mode,ranks,clients,seconds_per_round\nstrong,1,10,1.38\nstrong,2,10,1.25\nstrong,2,10,1.27\n")
    data = tmp_path / "d.csv"
    assert cli("plot", "scaling", csv_in, "--out", tmp_path / "s.png", "--csv", data)[0] == 0
    rows = _data(data)
    np.testing.assert_allclose(_series(rows, "strong", "seconds_per_round")[1], [1.38, 1.26])
    np.testing.assert_allclose(_series(rows, "strong", "efficiency")[1], [1.0, 1.38 / (2 * 1.26)])


# --------------------------------------------------------------------------- compare wording


@pytest.mark.parametrize("seeds,kind", [(2, "min-max"), (5, "95% CI")])
def test_compare_interval_wording_follows_n(make_run, cli, seeds, kind):
    paths = [make_run(f"f{s}.h5", [0.5 + 0.01 * s, 0.6], algorithm="fedavg", seed=s) for s in range(seeds)]
    md = cli("compare", *paths)[1]
    (row,) = [l for l in md.splitlines() if l.startswith("| fedavg |") and "baseline" in l]
    assert row.count(kind) == 1
    assert ("95% CI" in row) == (kind == "95% CI")
    (csv_row,) = csv.DictReader(io.StringIO(cli("compare", "--format", "csv", *paths)[1]))
    assert csv_row["interval"] == kind
    means = [np.mean([0.5 + 0.01 * s, 0.6]) for s in range(seeds)]
    if kind == "min-max":
        assert (float(csv_row["interval_low"]), float(csv_row["interval_high"])) == pytest.approx((min(means),
                                                                                                   max(means)))
    assert not math.isnan(float(csv_row["interval_low"]))


def test_alpha_tradeoff_leaves_out_clients_the_run_excluded(make_run, cli, tmp_path):
    acc = np.array([0.2, 0.6, 0.8, 0.9])
    p = make_run("x.h5", acc, algorithm="alpha_fedavg", alpha=2.0,
                 alpha_records={"excluded": np.array([1, 0, 0, 0], dtype=np.int64)})
    data = tmp_path / "x.csv"
    assert cli("plot", "alpha-tradeoff", p, "--alphas", "2", "--out", tmp_path / "x.png", "--csv", data)[0] == 0
    rows = _data(data)
    (e,) = _series(rows, "alpha_fedavg", "E")[1]
    assert e == pytest.approx(_closed_form(acc[1:], 2.0, 1e-6)[0])  # client 0 had weight 0 in the run
    (eff,) = [float(r["y"]) for r in rows if r["statistic"] == "summary_efficiency"]
    n = np.array([10, 20, 30, 40])  # fakes.py's num_train; the summary's efficiency keeps every client
    assert eff == pytest.approx(np.sum(n * acc) / n.sum())
