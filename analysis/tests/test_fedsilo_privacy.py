"""The privacy records of files written by fedsilo itself ($FEDSILO_EXE; ctest sets it): ε in the
summary and compare tables and the privacy-utility figure read /privacy/epsilon as fedsilo writes it,
[T] at client level and [T, K] at sample level (expected values straight from the files with h5py)."""

import csv
import io

import h5py
import numpy as np
import pytest

from analysis.tests.images import DOUBLE, check_png
from analysis.tests.test_fedsilo_runs import SETTING_A, pytestmark, run_all  # noqa: F401 (pytestmark: the skip)

PRIVATE = {
    **{f"client_z{z}_s{s}": SETTING_A + ["--fl.clients_per_round", "2", "--privacy.level", "client",
                                         "--privacy.noise_multiplier", z, "--seed", str(s)]
       for z in ("0.8", "1.5") for s in (0, 1)},
    "none_s0": SETTING_A + ["--fl.clients_per_round", "2", "--seed", "0"],
    "sample_s0": SETTING_A + ["--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--seed", "0"],
}


@pytest.fixture(scope="module")
def private_runs(tmp_path_factory):
    return run_all(tmp_path_factory.mktemp("fedsilo_private"), PRIVATE)


def _epsilon(path):
    with h5py.File(path, "r") as f:
        if "privacy" not in f:
            return None
        return np.asarray(f["privacy/epsilon"], dtype=float)


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_the_records_have_the_documented_shapes(private_runs):
    eps = _epsilon(private_runs["client_z0.8_s0"])
    assert eps.shape == (2,) and np.all(np.diff(eps) > 0) and np.all(np.isfinite(eps))
    assert _epsilon(private_runs["client_z1.5_s0"])[-1] < eps[-1]  # more noise, smaller ε
    assert _epsilon(private_runs["sample_s0"]).shape == (2, 4)
    assert _epsilon(private_runs["none_s0"]) is None
    with h5py.File(private_runs["none_s0"], "r") as f:
        assert "level = none" in f.attrs["config"].decode()


def test_summary_shows_the_files_epsilon(private_runs, inproc):
    names = ["client_z0.8_s0", "sample_s0", "none_s0"]
    p = inproc("summary", "--format", "csv", *[private_runs[n] for n in names])
    assert p.returncode == 0, p.stderr
    rows = {r["file"]: r for r in _csv(p.stdout)}
    assert float(rows[private_runs["client_z0.8_s0"]]["epsilon"]) == pytest.approx(_epsilon(private_runs["client_z0.8_s0"])[-1])
    assert float(rows[private_runs["sample_s0"]]["epsilon"]) == pytest.approx(_epsilon(private_runs["sample_s0"])[-1].max())
    assert rows[private_runs["none_s0"]]["epsilon"] == "nan"


def test_privacy_utility_from_the_files(private_runs, inproc, tmp_path):
    paths = [p for n, p in private_runs.items() if n != "sample_s0"]
    out, data = tmp_path / "pu.png", tmp_path / "pu.csv"
    p = inproc("plot", "privacy-utility", *paths, "--out", out, "--csv", data)
    assert p.returncode == 0, p.stderr
    check_png(out, DOUBLE)
    with open(data, newline="") as fh:
        rows = list(csv.DictReader(fh))
    points = [r for r in rows if r["statistic"] == "run_mean"]
    assert len(points) == 4
    expected = sorted(float(_epsilon(private_runs[n])[-1]) for n in private_runs if n.startswith("client_"))
    assert sorted(float(r["x"]) for r in points) == pytest.approx(expected)
    assert {r["algorithm"] for r in points} == {"fedavg (level=client, noise_multiplier=0.8)",
                                                 "fedavg (level=client, noise_multiplier=1.5)"}
    assert any(r["statistic"] == "mean_no_dp" for r in rows)
