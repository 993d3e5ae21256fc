"""analysis without its Python dependencies: one line naming the Debian package, no traceback."""

import os
import subprocess
import sys

import pytest

from analysis.tests.conftest import REPO


@pytest.mark.parametrize("package,debian", [("h5py", "python3-h5py"), ("numpy", "python3-numpy"),
                                            ("matplotlib", "python3-matplotlib")])
def test_missing_package_is_named(tmp_path, make_run, package, debian):
    # a package of that name that cannot be imported stands for one that is not installed
    fake = tmp_path / "site" / package
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"raise ModuleNotFoundError(\"No module named '{package}'\", name='{package}')\n")
    run = make_run("r.h5", [0.5, 0.6])
    env = dict(os.environ, PYTHONPATH=f"{tmp_path / 'site'}{os.pathsep}{REPO}", MPLBACKEND="Agg")
    args = ["plot", "convergence", run, "--out", tmp_path / "c.png"]
    p = subprocess.run([sys.executable, "-m", "analysis", *map(str, args)], cwd=tmp_path, capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 1, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("analysis: error: the Python package " + package) and debian in line
    assert "Traceback" not in p.stderr
    # --help needs none of them
    p = subprocess.run([sys.executable, "-m", "analysis", "--help"], cwd=tmp_path, capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0 and "usage:" in p.stdout
