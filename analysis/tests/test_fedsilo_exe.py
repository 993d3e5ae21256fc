"""End-to-end with the real executable; runs only when $FEDSILO_EXE names an existing executable."""

import os
import subprocess

import pytest

EXE = os.environ.get("FEDSILO_EXE", "")

pytestmark = [
    pytest.mark.fedsilo_exe,
    pytest.mark.skipif(not (EXE and os.path.isfile(EXE) and os.access(EXE, os.X_OK)),
                       reason="set FEDSILO_EXE to the fedsilo executable to run this test"),
]


def test_fedsilo_outputs_go_through_every_command(tmp_path, subproc):
    outputs = {}
    for algo in ("fedavg", "local"):
        out = tmp_path / f"{algo}.h5"
        cmd = [EXE, "--algorithm", algo, "--dataset", "synthetic", "--model", "logreg", "--clients", "4",
               "--rounds", "2", "--output", str(out), "--data.users", "4"]
        p = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout}\n{p.stderr}"
        assert out.exists() and not (tmp_path / f"{algo}.h5.partial").exists()
        outputs[algo] = out

    p = subproc("summary", "--format", "csv", *outputs.values())
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.strip().splitlines()) == 3
    p = subproc("compare", *outputs.values())
    assert p.returncode == 0, p.stderr
    assert "fedavg" in p.stdout and "local" in p.stdout
    report = tmp_path / "report.md"
    p = subproc("report", tmp_path, "--out", report)
    assert p.returncode == 0, p.stderr
    assert report.exists() and "## Summary" in report.read_text()
