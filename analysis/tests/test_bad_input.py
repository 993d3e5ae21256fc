"""Bad input: one line on stderr naming the file and the problem, exit code 2, no traceback."""

import shutil

import h5py
import pytest


def check_error(proc, name, words):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert str(name) in lines[0]
    for w in words:
        assert w in lines[0], lines[0]


@pytest.fixture
def good(make_run):
    return make_run("good.h5", [0.5, 0.6, 0.7], algorithm="fedavg")


@pytest.mark.parametrize("command", [["summary"], ["compare"], ["plot", "convergence"]])
def test_missing_file(subproc, tmp_path, good, command):
    missing = tmp_path / "nope.h5"
    extra = ["--out", str(tmp_path / "x.png")] if command[0] == "plot" else []
    check_error(subproc(*command, good, missing, *extra), missing, ["no such file"])


def test_foreign_hdf5(subproc, tmp_path):
    p = tmp_path / "foreign.h5"
    with h5py.File(p, "w") as f:
        f.attrs["format"] = "other-format-1"
    check_error(subproc("summary", p), p, ["not a fedsilo results file", "other-format-1"])
    q = tmp_path / "noattr.h5"
    h5py.File(q, "w").close()
    check_error(subproc("compare", q), q, ["not a fedsilo results file", "format"])


def test_not_hdf5(subproc, tmp_path):
    p = tmp_path / "text.h5"
    p.write_text("hello\n")
    check_error(subproc("summary", p), p, ["not a fedsilo results file", "not an HDF5 file"])


def test_partial(subproc, tmp_path, good):
    p = tmp_path / "run.h5.partial"
    shutil.copy(good, p)
    check_error(subproc("summary", p), p, ["interrupted run"])
    check_error(subproc("plot", "sensitivity", p, "--out", tmp_path / "s.png"), p, ["interrupted run"])


def test_missing_group_and_bad_options(subproc, tmp_path, good):
    check_error(subproc("plot", "gems-finetune", good, "--out", tmp_path / "g.png"), good, ["/gems/finetune"])
    check_error(subproc("plot", "alpha-tradeoff", good, "--alphas", "0..2", "--out", tmp_path / "a.png"),
                "--alphas", ["> 0"])
    out = tmp_path / "no" / "dir" / "x.png"
    check_error(subproc("plot", "convergence", good, "--out", out), out, ["cannot write"])
    data = tmp_path / "missing" / "x.csv"
    check_error(subproc("plot", "convergence", good, "--out", tmp_path / "c.png", "--csv", data), data,
                ["cannot write"])
    assert not (tmp_path / "c.png").exists()  # nothing half-written
    csv_path = tmp_path / "s.csv"
    csv_path.write_text("mode,ranks\nstrong,1\n")
    check_error(subproc("plot", "scaling", csv_path, "--out", tmp_path / "s.png"), csv_path, ["missing"])


def test_report_missing_dir(subproc, tmp_path):
    d = tmp_path / "nodir"
    check_error(subproc("report", d), d, ["no such directory"])


def test_help_for_every_command(subproc):
    for args in (["--help"], ["summary", "--help"], ["compare", "--help"], ["report", "--help"],
                 ["plot", "--help"], ["plot", "accuracy-hist", "--help"], ["plot", "sensitivity", "--help"],
                 ["plot", "convergence", "--help"], ["plot", "alpha-tradeoff", "--help"],
                 ["plot", "gems-finetune", "--help"], ["plot", "scaling", "--help"], ["plot", "oneshot", "--help"],
                 ["plot", "privacy-utility", "--help"]):
        p = subproc(*args)
        assert p.returncode == 0 and "usage:" in p.stdout, args
