"""jobs/reproduce.sh: every planned run parses (fedsilo --dry-run), so no run of the plan fails on its
configuration; the one-shot algorithms get no --rounds (each runs its own count, the GEMS configs leave
rounds unset), and the GEMS baselines are planned on both GEMS configs; a config with a grid
(configs/playerfl_fmnist.ini) plans the grid's runs, and its final runs take the values `analysis select`
chooses from the grid's results once they exist."""

import os
import subprocess

import h5py
import numpy as np
import pytest

from analysis.tests import fakes

EXE = os.environ.get("FEDSILO_EXE", "")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "jobs", "reproduce.sh")
ONE_SHOT = {"gems", "average", "ensemble", "oneshot_local", "global", "public_only"}


GRID_ALGORITHMS = ["playerfl", "playerfl_random", "fedavg", "local", "fedbabu", "fedprox", "ditto", "pfedme", "fedlp"]
GRID_LRS = ["5e-3", "1e-3", "5e-4", "1e-4"]
PFEDME_LRS = ["5e-1", "1e-1", "5e-2", "1e-2"]  # the grid's "train.lr @ pfedme": 100 times the others'


def grid_lrs(algorithm):
    return PFEDME_LRS if algorithm == "pfedme" else GRID_LRS


def _run(*args):
    env = dict(os.environ, FEDSILO_EXE=EXE, OPENBLAS_NUM_THREADS="1")
    return subprocess.run(["bash", SCRIPT, *args], cwd=REPO, capture_output=True, text=True, env=env, timeout=600)


def _runs(stdout):
    """The manifest's run lines (comments and blank lines skipped, as jobs/local/sweep.sh does)."""
    return [l.split() for l in stdout.splitlines() if l.strip() and not l.lstrip().startswith("#")]


def test_manifest_lines():
    p = _run("--manifest")
    assert p.returncode == 0, p.stderr
    lines = _runs(p.stdout)
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
    assert len(_runs(_run("--seeds", "7", "--manifest").stdout)) < len(lines)


def test_the_grid_runs_every_algorithm_at_every_lr_and_its_final_runs_wait_for_it(tmp_path):
    p = _run("--manifest", "--out", str(tmp_path / "out"))
    grid = [l for l in _runs(p.stdout) if l[0] == "configs/playerfl_fmnist.ini"]
    assert sorted((l[1], l[l.index("--train.lr") + 1]) for l in grid) == \
        sorted((a, lr) for a in GRID_ALGORITHMS for lr in grid_lrs(a))
    assert all(l[-2:] == ["--rounds", "3"] for l in grid)  # the grid's own reduction, then reproduce.sh's
    assert "# configs/playerfl_fmnist.ini: the final runs" in p.stdout
    full = _runs(_run("--full", "--manifest", "--out", str(tmp_path / "out")).stdout)
    assert all(l[-2:] == ["--rounds", "20"] for l in full if l[0] == "configs/playerfl_fmnist.ini")


def test_final_runs_use_the_lr_with_the_lowest_validation_loss(tmp_path):
    out = tmp_path / "out"
    grid = [l for l in _runs(_run("--manifest", "--out", str(out)).stdout) if l[0] == "configs/playerfl_fmnist.ini"]
    best = {a: grid_lrs(a)[i % 4] for i, a in enumerate(GRID_ALGORITHMS)}
    for words in grid:
        path = subprocess.run(["bash", "-c", 'FEDSILO_ROOT=$1; source "$1/jobs/local/common.sh"; shift; '
                               'FEDSILO_OUT=$0 fedsilo_sweep_output "$@"', str(out) + "_grid", REPO, *words],
                              capture_output=True, text=True, check=True).stdout.strip()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        alg, lr = words[1], words[words.index("--train.lr") + 1]
        fakes.write_run(path, [0.5, 0.6], algorithm=alg, config_sections=f"[train]\nlr = {lr}\n")
        with h5py.File(path, "a") as f:  # the best lr has the lowest validation loss
            f["summary/client_val_loss"] = np.array([1.0, 2.0]) if lr == best[alg] else np.array([1.5, 2.5])
    p = _run("--manifest", "--out", str(out), "--seeds", "3 4")
    assert p.returncode == 0, p.stderr
    final = [l for l in _runs(p.stdout) if l[0] == "configs/playerfl_fmnist.ini" and "--rounds" in l
             and l[-2:] == ["--rounds", "10"]]
    assert sorted((l[1], l[2], l[l.index("--train.lr") + 1]) for l in final) == \
        sorted((a, s, best[a]) for a in GRID_ALGORITHMS for s in ("3", "4"))
    assert "# configs/playerfl_fmnist.ini" not in p.stdout


@pytest.mark.fedsilo_exe
@pytest.mark.long
@pytest.mark.skipif(not (EXE and os.path.isfile(EXE) and os.access(EXE, os.X_OK)),
                    reason="set FEDSILO_EXE to the fedsilo executable to run this test")
def test_every_planned_run_parses():
    # --full drops only the reduced overrides (the configs' own values), so the default plan covers it
    p = _run("--check")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "planned runs parse" in p.stdout


def test_check_names_every_rejected_command_and_gives_each_dry_run_its_own_output(tmp_path):
    # A stand-in for fedsilo that rejects one algorithm and logs the outputs it was given: the parallel
    # check must fail, name each rejected planned command, and never hand two dry runs the same output
    # or the same TMPDIR.
    log = tmp_path / "outputs.log"
    fake = tmp_path / "fedsilo"
    fake.write_text(
        "#!/bin/bash\n"
        "args=\"$*\"\n"
        "out=${args##*--output }; out=${out%% *}\n"
        f"echo \"$out $TMPDIR\" >> '{log}'\n"
        "case \" $* \" in *' --algorithm fedlp '*) echo 'fedsilo: error: fake rejection' >&2; exit 2 ;; esac\n"
        "exit 0\n")
    fake.chmod(0o755)
    env = dict(os.environ, FEDSILO_EXE=str(fake), FEDSILO_CHECK_JOBS="3")
    p = subprocess.run(["bash", SCRIPT, "--check"], cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode != 0, p.stdout + p.stderr
    assert "planned runs parse" not in p.stdout
    rejected = [l for l in p.stderr.splitlines() if l.startswith("reproduce.sh: rejected: ")]
    assert rejected and all(" fedlp " in l and l.endswith("fedsilo: error: fake rejection") for l in rejected), p.stderr
    assert "configs/playerfl_heart.ini fedlp 0" in p.stderr
    runs = [l.split() for l in log.read_text().splitlines()]
    outputs, tmpdirs = [r[0] for r in runs], [r[1] for r in runs]
    assert len(outputs) == len(set(outputs)) > len(rejected)
    # Concurrent isolated singletons race on Open MPI's session folder unless each has its own TMPDIR.
    assert len(tmpdirs) == len(set(tmpdirs)), tmpdirs
