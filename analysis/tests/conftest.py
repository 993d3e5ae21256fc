"""Shared fixtures: fake results files (fakes.py) and two ways to run the command line."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

from analysis.tests import fakes  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "fedsilo_exe: needs the fedsilo executable in $FEDSILO_EXE")
    config.addinivalue_line("markers", "long: slow end to end (ctest's analysis_pytest_long, label long)")


@pytest.fixture
def make_run(tmp_path):
    """make_run(name, accuracy, **kw) -> path of a fake results file in tmp_path."""

    def make(name, accuracy, **kw):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return fakes.write_run(path, accuracy, **kw)

    return make


@pytest.fixture
def cli(capsys):
    """Run the command line in-process: cli(*args) -> (exit code, stdout, stderr)."""
    from analysis.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def run_subprocess(*args, cwd=REPO):
    """Run `python -m analysis ...` as a separate process (for exit codes and stderr)."""
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "analysis", *[str(a) for a in args]], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def subproc():
    return run_subprocess


@pytest.fixture
def inproc(capsys):
    """inproc(*args) -> a CompletedProcess like subproc's, from the command line run in-process: for tests
    of what a command computes from the files, the same main() without a second interpreter's start-up
    and imports (about a second of CPU each); exit codes and messages of the module entry point are
    subproc's tests (test_bad_input.py)."""
    from analysis.cli import main

    def run(*args):
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run
