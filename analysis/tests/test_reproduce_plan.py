"""jobs/reproduce.sh: every planned run parses (fedsilo --dry-run), so no run of the plan fails on its
configuration; the one-shot algorithms get no --rounds (each runs its own count, the GEMS configs leave
rounds unset), and the GEMS baselines are planned on both GEMS configs."""

import os
import subprocess

import pytest

EXE = os.environ.get("FEDSILO_EXE", "")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "jobs", "reproduce.sh")
ONE_SHOT = {"gems", "average", "ensemble", "oneshot_local", "global", "public_only"}


def _run(*args):
    env = dict(os.environ, FEDSILO_EXE=EXE, OPENBLAS_NUM_THREADS="1")
    return subprocess.run(["bash", SCRIPT, *args], cwd=REPO, capture_output=True, text=True, env=env, timeout=600)


def test_manifest_lines():
    p = _run("--manifest")
    assert p.returncode == 0, p.stderr
    lines = [l.split() for l in p.stdout.splitlines()]
    assert lines and all(len(l) >= 3 and os.path.isfile(os.path.join(REPO, l[0])) for l in lines)
    for cfg, alg, _seed, *extra in lines:
        if alg in ONE_SHOT:
            assert "gems_" in cfg
            assert "--rounds" not in extra, (cfg, alg, extra)
    for gems_cfg in ("gems_fmnist_logreg.ini", "gems_fmnist_mlp.ini"):
        planned = {alg for cfg, alg, *_ in lines if cfg.endswith(gems_cfg)}
        assert planned == ONE_SHOT, (gems_cfg, planned)
        with open(os.path.join(REPO, "configs", gems_cfg)) as f:
            assert not any(line.startswith("rounds") for line in f), gems_cfg
    assert _run("--full", "--manifest").stdout.count("--rounds 5") == 0
    assert len(_run("--seeds", "7", "--manifest").stdout.splitlines()) < len(lines)


@pytest.mark.fedsilo_exe
@pytest.mark.skipif(not (EXE and os.path.isfile(EXE) and os.access(EXE, os.X_OK)),
                    reason="set FEDSILO_EXE to the fedsilo executable to run this test")
def test_every_planned_run_parses():
    # --full drops only the reduced overrides (the configs' own values), so the default plan covers it
    p = _run("--check")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "planned runs parse" in p.stdout
