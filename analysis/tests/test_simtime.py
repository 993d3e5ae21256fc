"""analysis simtime (analysis/simtime.py) on small generated files with known clocks and accuracies."""

import csv
import io
import math

import h5py
import numpy as np
import pytest

from analysis import cli
from analysis.simtime import read_run, time_to_target


def write_run(path, algorithm, seed, sim_time, client_acc, upload, download=100.0, clock=True):
    with h5py.File(path, "w") as f:
        f.attrs["algorithm"] = np.bytes_(algorithm.encode())
        f.attrs["seed"] = np.int64(seed)
        acc = np.array(client_acc, dtype=float)
        f["rounds/client_accuracy"] = acc
        f["rounds/global_accuracy"] = acc.mean(axis=1)
        f["rounds/client_upload_bytes"] = np.full(acc.shape, float(upload))
        f["rounds/client_download_bytes"] = np.full(acc.shape, float(download))
        if clock:
            f["rounds/sim_time"] = np.array(sim_time, dtype=float)


def test_time_to_target_is_the_first_evaluated_round_that_reaches_it(tmp_path):
    p = tmp_path / "a.h5"
    nan = math.nan
    write_run(p, "fedavg", 1, [2.0, 4.5, 7.0, 9.0], [[0.5, 0.7], [nan, nan], [0.8, 0.9], [0.9, 0.9]], upload=10)
    row = time_to_target(read_run(str(p)), 0.85)
    assert row["rounds_to_target"] == 3 and row["time_to_target"] == 7.0
    assert row["upload_bytes_per_silo"] == 30.0 and row["download_bytes_per_silo"] == 300.0
    never = time_to_target(read_run(str(p)), 0.95)
    assert math.isnan(never["rounds_to_target"]) and math.isnan(never["time_to_target"])
    assert never["upload_bytes_per_silo"] == 40.0  # the whole run


def test_cli_table_csv_and_curves(tmp_path, capsys):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_run(a, "fedavg", 1, [1.0, 2.0], [[0.9, 0.9], [0.9, 0.9]], upload=5)
    write_run(b, "fedavg", 2, [1.5, 3.0], [[0.5, 0.5], [0.7, 0.7]], upload=5)
    assert cli.main(["simtime", str(a), str(b), "--target", "0.8", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["time_to_target"] for r in rows] == ["1.0", "nan"]
    assert cli.main(["simtime", str(a), str(b), "--curves", "--plot", str(tmp_path / "t.png")]) == 0
    out = capsys.readouterr().out
    curve = [r for r in csv.DictReader(io.StringIO(out.split("wrote")[0]))]
    # grid = every round end of both runs; at t = 1.5 run a has 0.9, run b 0.5
    at = {float(r["sim_time"]): r for r in curve}
    assert sorted(at) == [1.0, 1.5, 2.0, 3.0]
    assert float(at[1.5]["accuracy_min"]) == 0.5 and float(at[1.5]["accuracy_max"]) == 0.9
    assert float(at[3.0]["accuracy_mean"]) == pytest.approx(0.8)
    assert (tmp_path / "t.png").stat().st_size > 0


def test_a_run_without_the_clock_is_one_line_exit_2(tmp_path, capsys):
    p = tmp_path / "off.h5"
    write_run(p, "fedavg", 1, [], [[0.5]], upload=1, clock=False)
    assert cli.main(["simtime", str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sim_time" in err[0]
