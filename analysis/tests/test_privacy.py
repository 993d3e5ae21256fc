"""Differential privacy in the tables and figures, on fake files: a run with /privacy/epsilon [T]
(float64, one value per round, the last one the run's ε; absent when privacy is off) shows ε in the
summary and compare tables, and `plot privacy-utility` draws accuracy against ε per algorithm."""

import csv
import io

import numpy as np
import pytest

from analysis.tests.images import DOUBLE, check_png

# every file holds every option (the writer resolves the configuration): off is level = none
PRIVACY = "[privacy]\nlevel = {level}\nnoise_multiplier = {z}\ndelta = 1e-05\n"
ACC = {0.5: [0.40, 0.50, 0.55, 0.45], 1.0: [0.55, 0.62, 0.66, 0.58], None: [0.70, 0.75, 0.80, 0.72]}
EPS = {0.5: 9.0, 1.0: 2.5}  # larger noise, smaller ε


def _run(make_run, name, z, seed, algorithm="fedavg", shift=0.0):
    acc = np.add(ACC[z], shift + 0.01 * seed)
    if z is None:
        return make_run(name, acc, algorithm=algorithm, seed=seed, rounds=3,
                        config_sections=PRIVACY.format(level="none", z=0))
    eps = np.array([EPS[z] / 3, EPS[z] * 2 / 3, EPS[z] + 0.1 * seed])  # grows every round; last = the run's ε
    return make_run(name, acc, algorithm=algorithm, seed=seed, rounds=3, epsilon=eps,
                    config_sections=PRIVACY.format(level="client", z=z))


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_summary_shows_each_runs_epsilon(make_run, cli):
    a = _run(make_run, "a.h5", 1.0, 0)
    b = _run(make_run, "b.h5", None, 0)
    rows = {r["file"]: r for r in _csv(cli("summary", "--format", "csv", a, b)[1])}
    assert float(rows[a]["epsilon"]) == pytest.approx(2.5)  # the last round's value
    assert rows[b]["epsilon"] == "nan"
    md = cli("summary", a, b)[1]
    assert "| ε |" in md.splitlines()[0] and "| 2.5 |" in md
    assert "| ε |" not in cli("summary", b)[1]  # no privacy anywhere: no ε column


def test_sample_level_epsilon_is_the_largest_clients(make_run, cli):
    eps = np.array([[0.5, 0.7, 0.6, 0.4], [1.1, 1.9, 1.3, float("nan")]])  # [T, K]
    p = make_run("s.h5", ACC[None], rounds=2, epsilon=eps)
    (row,) = _csv(cli("summary", "--format", "csv", p)[1])
    assert float(row["epsilon"]) == pytest.approx(1.9)


def test_compare_shows_the_median_epsilon_of_each_variant(make_run, cli):
    paths = [_run(make_run, f"f{z}_{s}.h5", z, s) for z in (0.5, 1.0, None) for s in (0, 1, 2)]
    rows = {r["algorithm"]: r for r in _csv(cli("compare", "--format", "csv", *paths)[1])}
    assert float(rows["fedavg (level=client, noise_multiplier=0.5)"]["epsilon"]) == pytest.approx(9.1)  # 9.0..9.2
    assert float(rows["fedavg (level=client, noise_multiplier=1.0)"]["epsilon"]) == pytest.approx(2.6)
    assert rows["fedavg (level=none, noise_multiplier=0)"]["epsilon"] == "nan"
    md = cli("compare", *paths)[1]
    header = next(l for l in md.splitlines() if l.startswith("| algorithm | seeds |"))
    assert header.endswith("| ε |")


def test_privacy_utility_figure(make_run, cli, tmp_path):
    paths = [_run(make_run, f"f{z}_{s}.h5", z, s) for z in (0.5, 1.0, None) for s in (0, 1)]
    paths += [_run(make_run, f"q{z}_{s}.h5", z, s, algorithm="qffl", shift=-0.05) for z in (0.5, 1.0) for s in (0, 1)]
    out, data = tmp_path / "p.png", tmp_path / "p.csv"
    code, _, err = cli("plot", "privacy-utility", *paths, "--out", out, "--csv", data)
    assert code == 0, err
    check_png(out, DOUBLE)
    rows = list(csv.DictReader(data.open()))
    # every private run is a point (its ε, its mean client accuracy)
    runs = [r for r in rows if r["statistic"] == "run_mean"]
    assert len(runs) == 8
    for r in runs:
        z = 0.5 if "noise_multiplier=0.5" in r["algorithm"] else 1.0
        seed = int(r["seed"])
        assert float(r["x"]) == pytest.approx(EPS[z] + 0.1 * seed)
        shift = -0.05 if r["algorithm"].startswith("qffl") else 0.0
        assert float(r["y"]) == pytest.approx(np.mean(ACC[z]) + shift + 0.01 * seed)
    # the line: per privacy configuration, mean ε and mean accuracy over seeds, min-max over 2 seeds
    line = {r["algorithm"]: r for r in rows if r["statistic"] == "mean"}
    fz = line["fedavg (level=client, noise_multiplier=0.5)"]
    assert float(fz["x"]) == pytest.approx(9.05) and float(fz["y"]) == pytest.approx(np.mean(ACC[0.5]) + 0.005)
    low = next(r for r in rows if r["statistic"] == "mean_low" and r["algorithm"] == fz["algorithm"])
    assert float(low["y"]) == pytest.approx(np.mean(ACC[0.5]))
    # FedAvg without privacy: a reference line at ε = inf; q-FFL has none
    (ref,) = [r for r in rows if r["statistic"] == "mean_no_dp"]
    assert ref["algorithm"] == "fedavg" and ref["x"] == "inf"
    assert float(ref["y"]) == pytest.approx(np.mean(ACC[None]) + 0.005)
    assert {r["algorithm"].split(" ")[0] for r in rows if r["statistic"] == "worst10"} == {"fedavg", "qffl"}


def test_privacy_utility_needs_a_private_run(make_run, subproc, tmp_path):
    p = _run(make_run, "plain.h5", None, 0)
    r = subproc("plot", "privacy-utility", p, "--out", tmp_path / "p.png")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert str(p) in r.stderr and "/privacy/epsilon" in r.stderr


def test_report_draws_privacy_utility_and_shows_epsilon(make_run, cli, tmp_path):
    for z in (0.5, 1.0, None):
        for s in (0, 1):
            _run(make_run, f"runs/f{z}_{s}.h5", z, s)
    out = tmp_path / "rep" / "report.md"
    out.parent.mkdir()
    code, _, err = cli("report", tmp_path / "runs", "--out", out)
    assert code == 0, err
    text = out.read_text()
    links = [l.split("](", 1)[1].rstrip(")") for l in text.splitlines() if l.startswith("![")]
    (privacy,) = [l for l in links if "-privacy-utility-" in l]
    check_png(out.parent / privacy, DOUBLE)
    assert (out.parent / privacy).with_suffix(".csv").exists()
    header = next(l for l in text.splitlines() if l.startswith("| algorithm | seeds |"))
    assert "| ε |" in header
