"""`compare`: medians, CI, fairness, IPR, ranks and the Friedman test against hand-computed values."""

import csv
import io
import math

import pytest
from scipy.stats import chi2

SEEDS = (1, 2, 3)


def _design(make_run):
    """Dataset A and B, algorithms local, fedavg, playerfl, ditto; K = 4, three seeds."""
    paths = []
    for s in SEEDS:
        d = 0.01 * s
        a = {
            "local": [0.5, 0.5, 0.5, 0.5],
            "fedavg": [0.6, 0.6, 0.4, 0.4],
            "playerfl": [0.7 + d, 0.55 + d, 0.45 + d, 0.6 + d],
            "ditto": [0.65] * 4,
        }
        b = {"local": [0.8] * 4, "fedavg": [0.7] * 4, "playerfl": [0.75] * 4, "ditto": [0.6] * 4}
        for ds, table in (("A", a), ("B", b)):
            for algo, acc in table.items():
                paths.append(make_run(f"{ds}/{algo}_{s}.h5", acc, algorithm=algo, dataset=ds, seed=s))
    return paths


def _rows(text):
    """{(dataset, algorithm): row}; the designs below have one setting per dataset."""
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len({r["setting"] for r in rows}) == len({r["dataset"] for r in rows})
    return {(r["dataset"], r["algorithm"]): r for r in rows}


def _setting_rows(text):
    return {(r["setting"], r["algorithm"]): r for r in csv.DictReader(io.StringIO(text))}


def test_compare_table_values(make_run, cli):
    code, out, err = cli("compare", "--by", "algorithm", "--format", "csv", *_design(make_run))
    assert code == 0, err
    rows = _rows(out)
    assert len(rows) == 8
    pfl = rows[("A", "playerfl")]
    # per-seed mean accuracies 0.585, 0.595, 0.605 -> median 0.595
    assert float(pfl["median"]) == pytest.approx(0.595)
    assert pfl["seeds"] == "1;2;3" and pfl["runs"] == "3"
    # per-client medians over seeds = seed-2 values; population variance by hand
    assert float(pfl["fairness_variance"]) == pytest.approx((0.125 ** 2 * 2 + 0.025 ** 2 * 2) / 4)
    # clients 0 and 3 beat max(local, fedavg) in every seed
    assert float(pfl["ipr_percent"]) == pytest.approx(50.0)
    assert float(rows[("A", "ditto")]["ipr_percent"]) == pytest.approx(100.0)
    assert float(rows[("B", "ditto")]["ipr_percent"]) == pytest.approx(0.0)
    assert math.isnan(float(rows[("A", "local")]["ipr_percent"]))
    assert "baseline" in rows[("A", "fedavg")]["note"]
    assert float(rows[("A", "ditto")]["fairness_variance"]) == pytest.approx(0.0)
    # spread of the median over 3 seeds: brackets the median, inside the data range; below 5 seeds it is
    # the range [min, max] itself, and says so (no "95% CI" from 3 values)
    lo, hi = float(pfl["interval_low"]), float(pfl["interval_high"])
    assert 0.585 - 1e-12 <= lo <= 0.595 <= hi <= 0.605 + 1e-12
    assert (lo, hi) == pytest.approx((0.585, 0.605)) and pfl["interval"] == "min-max"
    # ranks: A = ditto .65, playerfl .595, fedavg .5 = local .5 (tie 3.5); B = local, playerfl, fedavg, ditto
    expected_rank = {("A", "ditto"): 1, ("A", "playerfl"): 2, ("A", "fedavg"): 3.5, ("A", "local"): 3.5,
                     ("B", "local"): 1, ("B", "playerfl"): 2, ("B", "fedavg"): 3, ("B", "ditto"): 4}
    for key, rank in expected_rank.items():
        assert float(rows[key]["rank"]) == pytest.approx(rank), key
    expected_avg = {"ditto": 2.5, "playerfl": 2.0, "fedavg": 3.25, "local": 2.25}
    for algo, avg in expected_avg.items():
        assert float(rows[("A", algo)]["average_rank"]) == pytest.approx(avg)
    # Friedman by hand: k = 4 algorithms, n = 2 datasets, rank sums 5, 4, 6.5, 4.5, one tie pair
    k, n = 4, 2
    raw = 12 / (n * k * (k + 1)) * (5 ** 2 + 4 ** 2 + 6.5 ** 2 + 4.5 ** 2) - 3 * n * (k + 1)
    stat = raw / (1 - 6 / (n * k * (k * k - 1)))
    assert float(pfl["friedman_statistic"]) == pytest.approx(stat)
    assert float(pfl["friedman_p"]) == pytest.approx(chi2.sf(stat, k - 1))


def test_compare_markdown(make_run, cli):
    code, out, _ = cli("compare", *_design(make_run))
    assert code == 0
    assert "### Setting: A / logreg / 4 clients / 3 rounds" in out and "### Setting: B / logreg" in out
    assert "### Average rank across settings" in out
    assert "Friedman test on the accuracy ranks over 4 algorithms" in out
    assert "Friedman test on the fairness ranks over 4 algorithms" in out
    line = next(l for l in out.splitlines() if l.startswith("| playerfl |") and "0.5950" in l)
    assert "| 50.0 |" in line
    assert any(l.startswith("| fedavg |") and "baseline" in l for l in out.splitlines())


def test_compare_bootstrap_is_reproducible(make_run, cli):
    paths = _design(make_run)
    first = cli("compare", "--format", "csv", *paths)[1]
    assert first == cli("compare", "--format", "csv", *paths)[1]
    other = cli("compare", "--format", "csv", "--bootstrap-seed", "5", *paths)[1]
    assert _rows(other)[("A", "playerfl")]["median"] == _rows(first)[("A", "playerfl")]["median"]


def test_compare_without_baselines_or_enough_algorithms(make_run, cli):
    p1 = make_run("x1.h5", [0.6, 0.7], algorithm="playerfl", dataset="A", seed=1)
    p2 = make_run("x2.h5", [0.5, 0.7], algorithm="fedavg", dataset="A", seed=1)
    code, out, _ = cli("compare", "--format", "csv", p1, p2)
    assert code == 0
    rows = _rows(out)
    assert math.isnan(float(rows[("A", "playerfl")]["ipr_percent"]))
    assert "no local run" in rows[("A", "playerfl")]["note"]
    assert "at least 2 settings" in rows[("A", "playerfl")]["note"]
    code, md, _ = cli("compare", p1, p2)
    assert "Friedman test on the accuracy ranks not run" in md and "IPR not computed" in md


def test_compare_friedman_needs_three_algorithms(make_run, cli):
    paths = [make_run(f"{d}_{a}.h5", [0.5 + 0.1 * i, 0.6], algorithm=a, dataset=d)
             for d in ("A", "B") for i, a in enumerate(("fedavg", "local"))]
    code, md, _ = cli("compare", *paths)
    assert code == 0 and "needs at least 3 algorithms" in md


def test_compare_ipr_pairs_by_seed_and_median_mode(make_run, cli):
    # seed 1: client 0 wins; seed 2: both clients win -> paired = median(50, 100) = 75
    paths = [
        make_run("l1.h5", [0.5, 0.5], algorithm="local", seed=1),
        make_run("f1.h5", [0.5, 0.5], algorithm="fedavg", seed=1),
        make_run("p1.h5", [0.6, 0.4], algorithm="playerfl", seed=1),
        make_run("l2.h5", [0.5, 0.5], algorithm="local", seed=2),
        make_run("f2.h5", [0.5, 0.5], algorithm="fedavg", seed=2),
        make_run("p2.h5", [0.6, 0.6], algorithm="playerfl", seed=2),
        make_run("p3.h5", [0.9, 0.9], algorithm="playerfl", seed=3),  # no baselines for seed 3
    ]
    rows = _rows(cli("compare", "--format", "csv", *paths)[1])
    assert float(rows[("synthetic", "playerfl")]["ipr_percent"]) == pytest.approx(75.0)
    assert "2 of 3 seeds" in rows[("synthetic", "playerfl")]["note"]
    # median mode: per-client medians over seeds 0.6 and 0.6 vs 0.5 / 0.5 -> both clients win
    rows = _rows(cli("compare", "--format", "csv", "--ipr", "median", *paths)[1])
    assert float(rows[("synthetic", "playerfl")]["ipr_percent"]) == pytest.approx(100.0)


def test_compare_f1_metric(make_run, cli):
    p = make_run("a.h5", [0.9, 0.9], f1=[0.2, 0.4], algorithm="ditto")
    rows = _rows(cli("compare", "--metric", "f1", "--format", "csv", p)[1])
    assert float(rows[("synthetic", "ditto")]["median"]) == pytest.approx(0.3)
    assert rows[("synthetic", "ditto")]["metric"] == "f1"


def test_compare_fairness_rank_and_friedman(make_run, cli):
    rows = _rows(cli("compare", "--format", "csv", *_design(make_run))[1])
    # A: variance of the per-client medians: local 0, ditto 0, playerfl 0.008125, fedavg 0.01; B: all 0
    expected = {("A", "local"): 1.5, ("A", "ditto"): 1.5, ("A", "playerfl"): 3, ("A", "fedavg"): 4,
                ("B", "local"): 2.5, ("B", "ditto"): 2.5, ("B", "playerfl"): 2.5, ("B", "fedavg"): 2.5}
    for key, rank in expected.items():
        assert float(rows[key]["fairness_rank"]) == pytest.approx(rank), key
    for algo, avg in {"local": 2.0, "ditto": 2.0, "playerfl": 2.75, "fedavg": 3.25}.items():
        assert float(rows[("B", algo)]["average_fairness_rank"]) == pytest.approx(avg), algo
    # Friedman by hand on the fairness ranks: rank sums 4, 4, 5.5, 6.5; ties: a pair in A, all four in B
    k, n = 4, 2
    raw = 12 / (n * k * (k + 1)) * (4 ** 2 + 4 ** 2 + 5.5 ** 2 + 6.5 ** 2) - 3 * n * (k + 1)
    stat = raw / (1 - ((2 ** 3 - 2) + (4 ** 3 - 4)) / (n * k * (k * k - 1)))
    assert float(rows[("A", "ditto")]["fairness_friedman_statistic"]) == pytest.approx(stat)
    assert float(rows[("A", "ditto")]["fairness_friedman_p"]) == pytest.approx(chi2.sf(stat, k - 1))


PART = "[partition]\nscheme = dirichlet\nalpha = {alpha}\n[train]\nlr = 0.05\n"


def test_compare_groups_by_setting_not_dataset(make_run, cli):
    """One dataset, four settings: model, clients, partition and rounds split; algorithm options,
    [eval] and the one-shot algorithms' own round counts do not."""
    def run(name, acc, algo, **kw):
        kw.setdefault("config_sections", PART.format(alpha=0.5))
        return make_run(name, acc, algorithm=algo, seed=kw.pop("seed", 1), **kw)

    paths = [
        # setting X: mlp, 2 clients, Dirichlet(0.5), 3 rounds; playerfl beats both baselines on client 0
        run("x_local.h5", [0.5, 0.5], "local", model="mlp"),
        run("x_fedavg.h5", [0.5, 0.5], "fedavg", model="mlp"),
        run("x_playerfl.h5", [0.6, 0.4], "playerfl", model="mlp",
            config_sections=PART.format(alpha=0.5) + "[playerfl]\nthreshold = 2\n[eval]\nevery = 5\n"),
        # setting Y: logreg; its baselines sort first by file name and must not be used for X
        run("a_local.h5", [0.9, 0.9], "local", model="logreg"),
        run("a_fedavg.h5", [0.9, 0.9], "fedavg", model="logreg"),
        # setting Z: mlp with Dirichlet(0.1)
        run("z_fedavg.h5", [0.3, 0.3], "fedavg", model="mlp", config_sections=PART.format(alpha=0.1)),
        # setting W: mlp, 20 rounds
        run("w_fedavg.h5", [0.7, 0.7], "fedavg", model="mlp", rounds=20),
        # one-shot: gems (2 rounds) and average (1 round) are one setting
        run("g_gems.h5", [0.8, 0.8], "gems", model="mlp", rounds=2),
        run("g_average.h5", [0.8, 0.7], "average", model="mlp", rounds=1),
    ]
    code, out, err = cli("compare", "--format", "csv", *paths)
    assert code == 0, err
    rows = _setting_rows(out)
    x = "synthetic / mlp / 2 clients / dirichlet / 3 rounds (partition.alpha = 0.5)"
    z = "synthetic / mlp / 2 clients / dirichlet / 3 rounds (partition.alpha = 0.1)"
    y = "synthetic / logreg / 2 clients / dirichlet / 3 rounds"
    w = "synthetic / mlp / 2 clients / dirichlet / 20 rounds"
    g = "synthetic / mlp / 2 clients / dirichlet / one-shot"
    assert set(rows) == {(x, "local"), (x, "fedavg"), (x, "playerfl"), (y, "local"), (y, "fedavg"),
                         (z, "fedavg"), (w, "fedavg"), (g, "gems"), (g, "average")}
    assert float(rows[(x, "playerfl")]["ipr_percent"]) == pytest.approx(50.0)
    assert float(rows[(x, "fedavg")]["median"]) == pytest.approx(0.5)
    assert float(rows[(g, "gems")]["rank"]) == 1 and float(rows[(g, "average")]["rank"]) == 2
    code, md, _ = cli("compare", *paths)
    assert f"### Setting: {x}" in md and f"### Setting: {g}" in md


def test_compare_paired_ipr_uses_same_setting_and_seed(make_run, cli):
    paths = [make_run(f"{a}{s}.h5", acc, algorithm=a, seed=s, config_sections=PART.format(alpha=0.5))
             for s, table in ((1, {"local": [0.5, 0.5], "fedavg": [0.5, 0.5], "ditto": [0.6, 0.4]}),
                              (2, {"local": [0.7, 0.3], "fedavg": [0.3, 0.7], "ditto": [0.6, 0.6]}))
             for a, acc in table.items()]
    rows = _rows(cli("compare", "--format", "csv", *paths)[1])
    # seed 1: client 0 wins (50 %); seed 2: no client beats max(local, fedavg) = 0.7 (0 %)
    assert float(rows[("synthetic", "ditto")]["ipr_percent"]) == pytest.approx(25.0)


def test_compare_weights_clients_as_the_runs_own_mean(make_run, cli):
    """eval.client_weighting = samples (the PLayer-FL protocol): the per-run value is the sample-weighted
    client mean, as the run's /summary/mean; other runs keep the plain mean."""
    paths = []
    for s in SEEDS:
        acc, n = [0.9, 0.5 + 0.01 * s], [30, 10]
        paths.append(make_run(f"W/fedavg_{s}.h5", acc, dataset="W", seed=s, num_train=n,
                              config_sections="[eval]\nclient_weighting = samples\n"))
        paths.append(make_run(f"U/fedavg_{s}.h5", acc, dataset="U", seed=s, num_train=n))
    code, out, err = cli("compare", "--format", "csv", *paths)
    assert code == 0, err
    rows = _rows(out)
    # seed 2's values are the medians: weighted (30 * 0.9 + 10 * 0.52) / 40, plain (0.9 + 0.52) / 2
    assert float(rows[("W", "fedavg")]["median"]) == pytest.approx((30 * 0.9 + 10 * 0.52) / 40)
    assert float(rows[("U", "fedavg")]["median"]) == pytest.approx((0.9 + 0.52) / 2)
    assert float(rows[("W", "fedavg")]["interval_low"]) == pytest.approx((30 * 0.9 + 10 * 0.51) / 40)
    # the fairness table's mean stays the plain mean; its efficiency is the weighted one in both
    assert float(rows[("W", "fedavg")]["mean"]) == pytest.approx((0.9 + 0.52) / 2)
    assert float(rows[("U", "fedavg")]["efficiency"]) == pytest.approx((30 * 0.9 + 10 * 0.52) / 40)
