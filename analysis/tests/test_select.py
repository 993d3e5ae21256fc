"""`python3 -m analysis select` and jobs/grid.py.

On real fedsilo runs ($FEDSILO_EXE): a tiny grid (fedavg and local x train.lr in {0.5, 0.05, 0.005} x
seeds 0 and 1; FashionMNIST, MLP 784-16-10, 4 clients, 3 rounds, eval.select = best_val) expanded by
jobs/grid.py; the expected choice is computed here from the HDF5 datasets with h5py and numpy (mean
over clients of /summary/client_val_accuracy or _loss, mean over seeds, best value), not through the
analysis package. Without the executable: jobs/grid.py's expansion and errors, the committed grid
manifests against their specs, and select's bad input on fake files.
"""

import csv
import io
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
import pytest

EXE = os.environ.get("FEDSILO_EXE", "")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRID = os.path.join(REPO, "jobs", "grid.py")
requires_exe = pytest.mark.skipif(not (EXE and os.path.isfile(EXE) and os.access(EXE, os.X_OK)),
                                  reason="set FEDSILO_EXE to the fedsilo executable to run this test")

LRS = ["0.5", "0.05", "0.005"]
SPEC = f"""# a tiny grid for the tests
config = tiny.ini
algorithms = fedavg local
seeds = 0 1
train.lr = {' '.join(LRS)}
options = --rounds 3   # the reduction
"""
TINY_INI = """dataset = fashion_mnist
model = mlp
clients = 4
rounds = 8
[model]
hidden = 16
[partition]
samples_per_client = 150
[data]
split = 0.6,0.2,0.2
[eval]
select = best_val
batch = 1000
"""


def grid(*args, cwd=REPO):
    return subprocess.run([sys.executable, GRID, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


# --------------------------------------------------------------------------- jobs/grid.py


def test_grid_expands_algorithms_values_and_seeds(tmp_path):
    (tmp_path / "g.grid").write_text(SPEC)
    p = grid(str(tmp_path / "g.grid"))
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.splitlines() if l and not l.startswith("#")]
    assert len(lines) == 2 * 3 * 2
    assert lines[0] == "tiny.ini fedavg 0 --train.lr 0.5 --rounds 3"
    assert lines[1] == "tiny.ini fedavg 1 --train.lr 0.5 --rounds 3"
    assert lines[-1] == "tiny.ini local 1 --train.lr 0.005 --rounds 3"
    assert {tuple(l.split()[1:3]) for l in lines} == {(a, s) for a in ("fedavg", "local") for s in ("0", "1")}


def test_grid_sweeps_several_keys_as_a_product(tmp_path):
    (tmp_path / "g.grid").write_text("config = c.ini\nalgorithms = fedprox\nseeds = 3\ntrain.lr = 1 2\n"
                                     "fedprox.mu = 0.1 0.01\n")
    lines = grid(str(tmp_path / "g.grid")).stdout.splitlines()[1:]
    assert lines == ["c.ini fedprox 3 --train.lr 1 --fedprox.mu 0.1", "c.ini fedprox 3 --train.lr 1 --fedprox.mu 0.01",
                     "c.ini fedprox 3 --train.lr 2 --fedprox.mu 0.1", "c.ini fedprox 3 --train.lr 2 --fedprox.mu 0.01"]


def test_grid_gives_an_algorithm_its_own_values(tmp_path):
    (tmp_path / "g.grid").write_text("config = c.ini\nalgorithms = fedavg pfedme\nseeds = 0\ntrain.lr = 1 2\n"
                                     "train.lr@pfedme = 100 200 300\nfedprox.mu = 0.1\noptions = --rounds 2\n")
    lines = grid(str(tmp_path / "g.grid")).stdout.splitlines()[1:]
    assert lines == ["c.ini fedavg 0 --train.lr 1 --fedprox.mu 0.1 --rounds 2",
                     "c.ini fedavg 0 --train.lr 2 --fedprox.mu 0.1 --rounds 2",
                     "c.ini pfedme 0 --train.lr 100 --fedprox.mu 0.1 --rounds 2",
                     "c.ini pfedme 0 --train.lr 200 --fedprox.mu 0.1 --rounds 2",
                     "c.ini pfedme 0 --train.lr 300 --fedprox.mu 0.1 --rounds 2"]


GRID_HEAD = "config = c.ini\nalgorithms = fedavg\nseeds = 0\n"


@pytest.mark.parametrize("text,message", [
    (GRID_HEAD + "train.lr @ fedavg = 1\n", "train.lr is not swept for every algorithm"),
    (GRID_HEAD + "train.lr = 1\ntrain.lr @ ditto = 1\n", "ditto is not in algorithms = fedavg"),
    (GRID_HEAD + "train.lr = 1\ntrain.lr @ = 1\n", "expected 'section.key @ algorithm = values'"),
    (GRID_HEAD + "seeds @ fedavg = 1\n", "expected 'section.key @ algorithm = values'"),
    (GRID_HEAD + "train.lr = 1\ntrain.lr @ fedavg = 1\ntrain.lr@fedavg = 2\n", "train.lr @ fedavg given twice"),
    ("algorithms = fedavg\nseeds = 0\n", "missing config"),
    ("config = c.ini\nalgorithms = fedavg\nseeds = zero\n", "seeds = zero"),
    ("config = c.ini\nalgorithms = fedavg\nseeds = 0\nlr = 1\n", "unknown key 'lr'"),
    ("config = c.ini\nalgorithms = fedavg\nseeds = 0\ntrain.lr\n", "expected 'key = value'"),
    ("config = c.ini\nconfig = d.ini\nalgorithms = fedavg\nseeds = 0\n", "config given twice"),
])
def test_grid_bad_spec(tmp_path, text, message):
    (tmp_path / "g.grid").write_text(text)
    p = grid(str(tmp_path / "g.grid"))
    assert p.returncode == 2 and message in p.stderr and p.stderr.startswith("grid: error:"), p.stderr
    assert grid(str(tmp_path / "missing.grid")).returncode == 2


def test_committed_grid_manifests_are_their_specs_expanded():
    specs = sorted(f for f in os.listdir(os.path.join(REPO, "jobs", "grids")) if f.endswith(".grid"))
    assert specs
    for spec in specs:
        path = os.path.join("jobs", "grids", spec)
        manifest = os.path.join(REPO, path[:-len(".grid")] + ".manifest")
        with open(manifest, encoding="utf-8") as fh:
            assert fh.read() == grid(path).stdout, f"{manifest} is out of date: jobs/grid.py {path} --out {manifest}"


# --------------------------------------------------------------------------- select: bad input


def test_select_without_validation_scores_or_with_an_unknown_param(make_run, subproc):
    a = make_run("a.h5", [0.5, 0.6], config_sections="[train]\nlr = 0.1\n")
    p = subproc("select", a)
    assert p.returncode == 2 and "none of the 1 run(s) has a validation accuracy" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    p = subproc("select", a, "--param", "train.nothing")
    assert p.returncode == 2 and "train.nothing is not an option" in p.stderr, p.stderr


# --------------------------------------------------------------------------- select on fedsilo runs


@pytest.fixture(scope="module")
def grid_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("grid")
    (d / "tiny.ini").write_text(TINY_INI)
    (d / "g.grid").write_text(SPEC)
    lines = [l.split() for l in grid(str(d / "g.grid")).stdout.splitlines() if l and not l.startswith("#")]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def one(words):
        cfg, alg, seed, *extra = words
        out = d / f"{alg}_s{seed}_lr{extra[1]}.h5"
        cmd = [EXE, "--config", cfg, "--algorithm", alg, "--seed", seed, *extra, "--output", str(out)]
        p = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=300, env=env)
        assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout}\n{p.stderr}"
        return str(out)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, lines))


def expected_choice(files, metric):
    """{algorithm: (lr, {lr: mean over seeds of the clients' mean validation score})} from h5py."""
    scores = {}
    for path in files:
        with h5py.File(path, "r") as f:
            alg = f.attrs["algorithm"].decode()
            lr = next(l.split("=")[1].strip() for l in f.attrs["config"].decode().split("[train]")[1].splitlines()
                      if l.startswith("lr ="))
            assert int(f.attrs["num_rounds"]) == 3
            scores.setdefault(alg, {}).setdefault(lr, []).append(float(np.mean(f[f"summary/client_val_{metric}"][:])))
    out = {}
    for alg, by_lr in scores.items():
        means = {lr: float(np.mean(v)) for lr, v in by_lr.items()}
        assert all(len(v) == 2 for v in by_lr.values())
        pick = max if metric == "accuracy" else min
        out[alg] = (pick(sorted(means, key=float), key=lambda lr: means[lr]), means)
    return out


@pytest.mark.fedsilo_exe
@requires_exe
@pytest.mark.parametrize("metric", ["accuracy", "loss"])
def test_select_picks_the_best_mean_validation_score(grid_runs, cli, metric):
    want = expected_choice(grid_runs, metric)
    code, out, err = cli("select", *grid_runs, "--metric", metric, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 * 3
    for r in rows:
        lr, means = want[r["algorithm"]]
        assert r["param"] == "train.lr" and r["runs"] == "2" and r["seeds"] == "0 1"
        assert float(r[f"val_{metric}"]) == pytest.approx(means[r["value"]], abs=1e-12)
        assert (r["chosen"] == "True") == (r["value"] == lr), r
    # the final runs: the chosen lr per algorithm at the requested seeds, on the final configuration
    code, out, err = cli("select", *grid_runs, "--metric", metric, "--format", "manifest", "--config",
                         "configs/final.ini", "--seeds", "4", "5")
    assert code == 0, err
    assert out.splitlines() == [f"configs/final.ini {alg} {seed} --train.lr {want[alg][0]}"
                                for alg in sorted(want) for seed in (4, 5)]
    code, out, err = cli("select", *grid_runs, "--metric", metric, "--config", "configs/final.ini")
    assert code == 0 and "fedsilo --config configs/final.ini --algorithm local --seed 0 --train.lr" in out, out



# --------------------------------------------------------------------------- select across fedsilo versions


def test_select_pools_runs_written_before_an_option_existed(make_run, cli):
    """A grid resumed with a newer fedsilo mixes files without and with an option added since (here
    train.precision): the runs still form one setting, so every value of the grid competes."""
    old = make_run("old.h5", [0.8, 0.9], config_sections="[train]\nlr = 1e-3\n")
    new = make_run("new.h5", [0.8, 0.9], config_sections="[train]\nlr = 5e-4\nprecision = fp32\n")
    for path, loss in ((old, [0.40, 0.42]), (new, [0.30, 0.36])):
        with h5py.File(path, "a") as f:
            f["summary/client_val_loss"] = np.asarray(loss)
    code, out, err = cli("select", old, new, "--metric", "loss", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["setting"] for r in rows} == {rows[0]["setting"]}, out
    assert "precision" not in rows[0]["setting"], out
    assert sorted(r["value"] for r in rows) == ["1e-3", "5e-4"], out
    assert [r["value"] for r in rows if r["chosen"] == "True"] == ["5e-4"], out
