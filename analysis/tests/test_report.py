"""`report DIR`: tables and figures for a directory tree of runs."""

import os
import re

from analysis.tests.images import SIZE_OF_KIND, check_png


def test_report(make_run, cli, tmp_path):
    root = tmp_path / "runs"
    for s in (1, 2):
        make_run(f"runs/syn/fedavg_{s}.h5", [0.5, 0.6, 0.7, 0.8], algorithm="fedavg", seed=s)
        make_run(f"runs/syn/local_{s}.h5", [0.55, 0.5, 0.6, 0.7], algorithm="local", seed=s)
        make_run(f"runs/syn/pfl_{s}.h5", [0.6, 0.65, 0.7, 0.75], algorithm="playerfl", seed=s,
                 split_layer=(1, "fc1"))
        make_run(f"runs/syn/alpha_{s}.h5", [0.6, 0.62, 0.66, 0.7], algorithm="alpha_fedavg", seed=s, alpha=2.5)
        make_run(f"runs/deep/mnist/gems_{s}.h5", [0.8, 0.9], algorithm="gems", dataset="mnist", seed=s,
                 gems=([0, 100, 1000], [0.7, 0.8, 0.9]))
    # interrupted run and checkpoint: skipped without a warning
    make_run("runs/syn/broken.h5.partial", [0.1, 0.1], algorithm="broken")
    make_run("runs/syn/state.ckpt.h5", [0.1, 0.1], algorithm="ckpt")
    make_run("runs/syn/fedavg_1.h5.ckpt", [0.1, 0.1], algorithm="ckpt2")
    # a foreign HDF5 file: skipped with a warning
    make_run("runs/other.h5", [0.1], fmt="something-else")
    # a scaling CSV (jobs/local/scaling.sh) adds the scaling figure; another CSV is ignored
    (root / "bench").mkdir()
    (root / "bench" / "scaling.csv").write_text("mode,ranks,clients,seconds_per_round\n"
                                                "strong,1,16,4.0\nstrong,2,16,2.2\n")
    (root / "other.csv").write_text("a,b\n1,2\n")

    out = tmp_path / "out" / "report.md"
    out.parent.mkdir()
    code, stdout, err = cli("report", root, "--out", out)
    assert code == 0, err
    assert "other.h5" in err and "Traceback" not in err
    text = out.read_text()
    assert "## Summary" in text and "## Comparison by algorithm (client accuracy)" in text
    assert "broken" not in text and "ckpt" not in text
    assert text.count("| playerfl |") >= 2
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    kinds = {os.path.basename(l).split("-")[1] for l in links}
    assert {"convergence", "oneshot", "sensitivity", "accuracy", "alpha", "gems", "scaling"} <= kinds, links
    for link in links:
        check_png(out.parent / link, SIZE_OF_KIND[os.path.basename(link).split("-")[1]])
    # per setting (here: per dataset) one convergence figure, or for the one-shot GEMS runs the one-shot
    # point chart (one-shot methods are never drawn as convergence lines); one scaling figure
    assert sum("convergence" in l for l in links) == 1
    assert sum("-oneshot-" in l for l in links) == 1
    assert sum("scaling" in l for l in links) == 1


def test_report_default_out_and_empty_dir(make_run, cli, tmp_path, subproc):
    make_run("r/a.h5", [0.5, 0.6], algorithm="fedavg")
    code, _, err = cli("report", tmp_path / "r")
    assert code == 0, err
    assert (tmp_path / "r" / "report.md").exists()
    (tmp_path / "empty").mkdir()
    p = subproc("report", tmp_path / "empty")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "empty" in p.stderr
