"""`summary`: values checked against hand-computed numbers and fakes.py's plain-Python definitions."""

import csv
import io

import pytest

from analysis.tests import fakes

ACC = [0.5, 0.6, 0.7, 0.8]
N_TRAIN = [10, 20, 30, 40]


def _csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_summary_hand_computed_values(make_run, cli):
    path = make_run("a.h5", ACC, f1=[0.4, 0.5, 0.6, 0.9], num_train=N_TRAIN, algorithm="fedavg",
                    dataset="synthetic", seed=7, global_accuracy=0.66, seconds=[3.0, 1.0, 2.0, 10.0], rounds=4)
    code, out, err = cli("summary", "--format", "csv", path)
    assert code == 0, err
    (row,) = _csv_rows(out)
    assert row["file"] == path
    assert (row["algorithm"], row["dataset"], row["seed"], row["clients"]) == ("fedavg", "synthetic", "7", "4")
    expected = {
        "acc_mean": 0.65, "acc_median": 0.65,
        "acc_worst10": 0.5, "acc_best10": 0.8,              # ceil(4/10) = 1 client
        "f1_mean": 0.6, "f1_median": 0.55, "f1_worst10": 0.4, "f1_best10": 0.9,
        "variance": 0.0125,                                   # (.15²+.05²+.05²+.15²)/4
        "jain": 2.6 ** 2 / (4 * 1.74),                        # (Σa)²/(K Σa²)
        "efficiency": (5 + 12 + 21 + 32) / 100,               # Σ n_k a_k / Σ n
        "global_accuracy": 0.66,
        "seconds_per_round": 2.5,                             # median of 1, 2, 3, 10
    }
    for key, value in expected.items():
        assert float(row[key]) == pytest.approx(value, abs=1e-12), key


def test_summary_matches_plain_python_definitions_with_k_over_10(make_run, cli):
    acc = [0.1 * (i % 7) + 0.03 * i for i in range(23)]  # K = 23 -> ceil(2.3) = 3 clients in each tail
    n = [5 + 3 * i for i in range(23)]
    path = make_run("b.h5", acc, num_train=n)
    code, out, _ = cli("summary", "--format", "csv", path)
    assert code == 0
    (row,) = _csv_rows(out)
    srt = sorted(acc)
    assert float(row["acc_worst10"]) == pytest.approx(sum(srt[:3]) / 3)
    assert float(row["acc_best10"]) == pytest.approx(sum(srt[-3:]) / 3)
    ref = fakes.py_stats(acc, n)
    for key in ("mean", "median", "worst10", "best10"):
        assert float(row["acc_" + key]) == pytest.approx(ref[key])
    for key in ("variance", "jain", "efficiency"):
        assert float(row[key]) == pytest.approx(ref[key])


def test_summary_falls_back_to_last_rounds_row(make_run, cli):
    path = make_run("c.h5", ACC, num_train=N_TRAIN, write_summary=False, global_accuracy=0.4, rounds=5)
    code, out, _ = cli("summary", "--format", "csv", path)
    assert code == 0
    (row,) = _csv_rows(out)
    assert float(row["acc_mean"]) == pytest.approx(0.65)
    assert float(row["global_accuracy"]) == pytest.approx(0.4)  # last /rounds/global_accuracy
    assert float(row["seconds_per_round"]) == pytest.approx(1.5)  # median of /rounds/seconds 1..2


def test_summary_seconds_per_round_is_the_stored_value(make_run, cli):
    import h5py

    path = make_run("s.h5", ACC, seconds=[1.0, 2.0, 30.0], rounds=3)
    with h5py.File(path, "r+") as f:
        f["summary/seconds_per_round"][()] = 0.25  # fedsilo's own figure, not the rows' median (2.0)
    (row,) = _csv_rows(cli("summary", "--format", "csv", path)[1])
    assert float(row["seconds_per_round"]) == pytest.approx(0.25)


def test_summary_ignores_nan_clients(make_run, cli):
    path = make_run("d.h5", [0.5, float("nan"), 0.7], num_train=[10, 99, 30])
    code, out, _ = cli("summary", "--format", "csv", path)
    (row,) = _csv_rows(out)
    assert float(row["acc_mean"]) == pytest.approx(0.6)
    assert float(row["variance"]) == pytest.approx(0.01)
    assert float(row["efficiency"]) == pytest.approx((5 + 21) / 40)


def test_summary_markdown_rows_sorted_and_written_to_file(make_run, cli, tmp_path):
    b = make_run("b.h5", ACC, algorithm="local", seed=2)
    a = make_run("a.h5", ACC, algorithm="fedavg", seed=1)
    out_file = tmp_path / "s.md"
    code, out, _ = cli("summary", b, a, "--out", out_file)
    assert code == 0 and out == ""
    text = out_file.read_text()
    lines = [l for l in text.splitlines() if l.startswith("|")]
    assert lines[0].startswith("| file | algorithm | dataset | seed |")
    assert set(lines[1].replace("|", "").split()) <= {"---", "---:"}
    assert len(lines) == 4
    assert "| fedavg |" in lines[2] and "| local |" in lines[3]  # sorted by dataset, algorithm, seed
    assert "0.6500" in lines[2]
