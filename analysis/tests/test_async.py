"""analysis async (analysis/asyncruns.py) on small generated files with known clocks, accuracies and
staleness."""

import csv
import io
import math

import h5py
import numpy as np
import pytest

from analysis import cli

nan = math.nan


def write_run(path, algorithm, seed, sim_time, client_acc, staleness=None, deadline=None):
    with h5py.File(path, "w") as f:
        f.attrs["algorithm"] = np.bytes_(algorithm.encode())
        f.attrs["seed"] = np.int64(seed)
        config = f"seed = {seed}\n[fl]\nalgorithm = {algorithm}\n"
        if deadline is not None:
            config += f"deadline_seconds = {deadline}\n"
        f.attrs["config"] = np.bytes_(config.encode())
        acc = np.array(client_acc, dtype=float)
        f["rounds/client_accuracy"] = acc
        f["rounds/global_accuracy"] = acc[:, 0] if acc.size else acc
        f["rounds/sim_time"] = np.array(sim_time, dtype=float)
        if staleness is not None:
            f["rounds/staleness"] = np.array(staleness, dtype=float)


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_curves_band_is_mean_and_sd_over_seeds_of_the_accuracy_reached(tmp_path, capsys):
    a, b, s = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "s.h5"
    write_run(a, "fedasync", 1, [1.0, 2.0, 4.0], [[0.2, 0.4], [nan, nan], [0.6, 0.6]], [[0, nan]] * 3)
    write_run(b, "fedasync", 2, [1.5, 3.0], [[0.5, 0.5], [0.7, 0.9]], [[nan, 1]] * 2)
    write_run(s, "fedavg", 1, [5.0], [[0.8, 0.8]])
    assert cli.main(["async", "curves", str(a), str(b), str(s), "--csv", "--plot", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    got = {(r["label"], float(r["sim_time"])): r for r in rows(out.split("wrote")[0])}
    assert sorted(t for (lbl, t) in got if lbl == "fedasync") == [1.0, 1.5, 2.0, 3.0, 4.0]
    # t = 2.0: run a carries 0.3 forward (row 2 not evaluated), run b has 0.5 -> mean 0.4, sd 0.1414
    r = got[("fedasync", 2.0)]
    assert float(r["accuracy_mean"]) == pytest.approx(0.4)
    assert float(r["accuracy_sd"]) == pytest.approx(np.std([0.3, 0.5], ddof=1), rel=1e-5)
    # t = 1.0: only run a has been evaluated: its accuracy, sd 0
    assert float(got[("fedasync", 1.0)]["accuracy_mean"]) == pytest.approx(0.3)
    assert float(got[("fedasync", 1.0)]["accuracy_sd"]) == 0.0
    assert float(got[("fedasync", 4.0)]["accuracy_mean"]) == pytest.approx(0.7)
    assert got[("fedavg", 5.0)]["runs"] == "1"
    assert (tmp_path / "c.png").stat().st_size > 0


def test_a_deadline_run_is_its_own_group(tmp_path, capsys):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_run(a, "fedavg", 1, [1.0], [[0.5, 0.5]])
    write_run(b, "fedavg", 1, [1.0], [[0.7, 0.7]], deadline=60)
    assert cli.main(["async", "curves", str(a), str(b), "--csv"]) == 0
    labels = {r["label"]: float(r["accuracy_mean"]) for r in rows(capsys.readouterr().out)}
    assert labels == {"fedavg": 0.5, "fedavg (deadline)": 0.7}


def test_staleness_histogram_counts_the_applied_updates(tmp_path, capsys):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_run(a, "fedbuff", 1, [1.0, 2.0], [[0.1, 0.1]] * 2, [[0, nan, 2], [1, 0, nan]])
    write_run(b, "fedbuff", 2, [1.0], [[0.1, 0.1]], [[nan, 2, nan]])
    assert cli.main(["async", "staleness", str(a), str(b), "--csv", "--plot", str(tmp_path / "h.png")]) == 0
    out = rows(capsys.readouterr().out.split("wrote")[0])
    assert [(r["staleness"], r["updates"]) for r in out] == [("0", "2"), ("1", "1"), ("2", "2")]
    assert float(out[0]["fraction"]) == pytest.approx(0.4)
    assert (tmp_path / "h.png").stat().st_size > 0


def test_staleness_of_a_synchronous_run_is_one_line_exit_2(tmp_path, capsys):
    s = tmp_path / "sync.h5"
    write_run(s, "fedavg", 1, [1.0], [[0.5, 0.5]])
    assert cli.main(["async", "staleness", str(s)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "staleness" in err[0]


def test_targets_table_has_seed_bands_over_the_runs_that_reached_it(tmp_path, capsys):
    paths = []
    for seed, times in enumerate([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 2.0, 9.0]]):
        p = tmp_path / f"c{seed}.h5"
        acc = [[0.5, 0.5], [0.6, 0.6], [0.9, 0.9]] if seed < 2 else [[0.5, 0.5], [0.6, 0.6], [0.7, 0.7]]
        write_run(p, "fedcompass", seed, times, acc)
        paths.append(str(p))
    never = tmp_path / "never.h5"
    write_run(never, "fedasync", 1, [1.0], [[0.1, 0.1]])
    assert cli.main(["async", "targets", *paths, str(never), "--target", "0.85", "--csv"]) == 0
    got = {r["label"]: r for r in rows(capsys.readouterr().out)}
    c = got["fedcompass"]
    assert (c["runs"], c["reached"]) == ("3", "2")
    assert float(c["time_mean"]) == pytest.approx(4.5)
    assert float(c["time_sd"]) == pytest.approx(np.std([3.0, 6.0], ddof=1))
    assert (float(c["time_min"]), float(c["time_max"])) == (3.0, 6.0)
    assert got["fedasync"]["reached"] == "0" and got["fedasync"]["time_mean"] == "nan"
    assert cli.main(["async", "targets", *paths, "--target", "0.85"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("| label |") and "| fedcompass | 3 | 2 | 4.5 |" in md


def test_a_run_without_the_clock_is_one_line_exit_2(tmp_path, capsys):
    p = tmp_path / "off.h5"
    with h5py.File(p, "w") as f:
        f.attrs["algorithm"] = np.bytes_(b"fedavg")
        f.attrs["seed"] = np.int64(1)
        f["rounds/client_accuracy"] = np.zeros((1, 2))
    assert cli.main(["async", "targets", str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sim_time" in err[0]
