"""Every `plot` figure: a non-empty PNG of the documented pixel size (figure size × 150 dpi)."""

import numpy as np
import pytest

from analysis.tests.images import DOUBLE, SINGLE, TRIPLE, WIDE, check_png


def test_accuracy_hist_with_pdf(make_run, cli, tmp_path):
    a = make_run("a.h5", [0.2, 0.5, 0.55, 0.6, 0.9], algorithm="alpha_fedavg", alpha=2.0)
    b = make_run("b.h5", [0.1, 0.5, 0.7, 0.7, 0.95], algorithm="fedavg")
    out = tmp_path / "hist.png"
    code, stdout, err = cli("plot", "accuracy-hist", a, b, "--out", out, "--pdf")
    assert code == 0, err
    check_png(out, DOUBLE)
    pdf = tmp_path / "hist.pdf"
    assert pdf.exists() and pdf.read_bytes().startswith(b"%PDF")


def test_accuracy_hist_degenerate_runs(make_run, cli, tmp_path):
    a = make_run("a.h5", [0.5, 0.5, 0.5], algorithm="fedavg")  # no spread: no KDE, still a figure
    b = make_run("b.h5", [0.7], algorithm="local")
    out = tmp_path / "h.png"
    assert cli("plot", "accuracy-hist", a, b, "--out", out)[0] == 0
    check_png(out, DOUBLE)


@pytest.mark.parametrize("stage", ["round0", "final"])
def test_sensitivity_with_split(make_run, cli, tmp_path, stage):
    sens = [[1.0, 3.0, 100.0, 2.0], [2.0, 5.0, 300.0, 1.0], [0.0, 1.0, 1.0, 1.0]]  # client 2 cannot be normalised
    p = make_run("p.h5", [0.5, 0.6, 0.7], algorithm="playerfl", layers=["conv1", "conv2", "fc1", "fc2"],
                 sensitivity=sens, split_layer=(2, "conv2"))
    out = tmp_path / f"s_{stage}.png"
    code, _, err = cli("plot", "sensitivity", p, "--stage", stage, "--out", out)
    assert code == 0, err
    check_png(out, SINGLE)


def test_normalised_cumulative_sensitivity_values():
    from analysis.plots import normalised_cumulative_sensitivity

    np.testing.assert_allclose(normalised_cumulative_sensitivity([2.0, 4.0, 10.0]), [1.0, 3.0, 8.0])
    assert normalised_cumulative_sensitivity([0.0, 1.0]) is None


def test_convergence(make_run, cli, tmp_path):
    files = [make_run(f"{a}{s}.h5", [0.3 + 0.1 * i + 0.02 * s for i in range(5)], algorithm=a, seed=s, rounds=6)
             for a in ("fedavg", "playerfl", "ditto") for s in (1, 2)]
    out = tmp_path / "c.png"
    assert cli("plot", "convergence", *files, "--out", out)[0] == 0
    check_png(out, WIDE)


@pytest.mark.parametrize("as_attribute", [False, True])
def test_alpha_tradeoff(make_run, cli, tmp_path, as_attribute):
    p = make_run("a.h5", [0.3, 0.6, 0.8, 0.9], algorithm="alpha_fedavg", alpha=3.0, alpha_as_attribute=as_attribute)
    out = tmp_path / "a.png"
    assert cli("plot", "alpha-tradeoff", p, "--alphas", "1..20", "--out", out)[0] == 0
    check_png(out, TRIPLE)
    out2 = tmp_path / "a2.png"
    assert cli("plot", "alpha-tradeoff", p, "--alphas", "0.5,1,2,4,8", "--sample-weighted", "--out", out2)[0] == 0
    check_png(out2, TRIPLE)


def test_alpha_parse():
    from analysis.plots import parse_alphas

    assert len(parse_alphas("1..20")) == 200
    np.testing.assert_allclose(parse_alphas("1..3:0.5"), [1, 1.5, 2, 2.5, 3])
    np.testing.assert_allclose(parse_alphas("4,1,2"), [1, 2, 4])


def test_gems_finetune(make_run, cli, tmp_path):
    files = [make_run("g1.h5", [0.5, 0.6], algorithm="gems", seed=1, gems=([0, 100, 1000], [0.6, 0.8, 0.88])),
             make_run("g2.h5", [0.5, 0.6], algorithm="gems", seed=2, gems=([0, 100, 1000], [0.62, 0.78, 0.87])),
             make_run("f1.h5", [0.5, 0.6], algorithm="fedavg", seed=1, gems=([0, 100, 1000], [0.55, 0.7, 0.86]))]
    out = tmp_path / "g.png"
    assert cli("plot", "gems-finetune", *files, "--out", out)[0] == 0
    check_png(out, SINGLE)


def test_scaling(cli, tmp_path):
    csv_path = tmp_path / "scaling.csv"
    csv_path.write_text("mode,ranks,clients,seconds_per_round\n"
                        "strong,1,64,8.0\nstrong,2,64,4.4\nstrong,4,64,2.5\nstrong,4,64,2.7\n"
                        "weak,1,16,2.0\nweak,2,32,2.2\nweak,4,64,2.6\n")
    out = tmp_path / "sc.png"
    assert cli("plot", "scaling", csv_path, "--out", out)[0] == 0
    check_png(out, DOUBLE)


def test_scaling_efficiency_values():
    from analysis.plots import scaling_series

    rows = [("strong", 1, 64, 8.0), ("strong", 4, 64, 2.5), ("strong", 4, 64, 2.7), ("strong", 4, 64, 2.6),
            ("weak", 2, 32, 2.0), ("weak", 8, 128, 2.5)]
    s = scaling_series(rows)
    np.testing.assert_allclose(s["strong"][2], [1.0, 8.0 / (4 * 2.6)])  # t1 / (p tp), median of repeats
    np.testing.assert_allclose(s["weak"][2], [1.0, 2.0 / 2.5])          # no 1-rank row: baseline p0 = 2
    assert s["weak"][3] == 2


def test_sensitivity_of_a_one_block_model(make_run, cli, tmp_path):
    """fedsilo writes /sensitivity/round0 as [K] when the model has one block (L = 1): read as [K, 1]."""
    from analysis.results import load_run

    p = make_run("lr.h5", [0.5, 0.6, 0.7], layers=["fc1"], sensitivity=np.array([1e-7, 2e-7, 3e-7]))
    run = load_run(p)
    assert run.sensitivity["round0"].shape == (3, 1) and run.sensitivity["final"].shape == (3, 1)
    out = tmp_path / "s1.png"
    code, _, err = cli("plot", "sensitivity", p, "--out", out)
    assert code == 0, err
    check_png(out, SINGLE)


def test_split_label():
    from analysis.plots import split_label

    assert split_label(1, "fc1", ["fc1", "fc2", "fc3"]) == "split after fc1 (fc1 federated)"
    assert split_label(3, "conv3", ["conv1", "conv2", "conv3", "fc1"]) == "split after conv3 (conv1..conv3 federated)"
    assert split_label(2, "", ["fc1", "fc2", "fc3"]) == "split after fc2 (fc1..fc2 federated)"


def test_accuracy_bins_fit_the_data():
    from analysis.plots import accuracy_bins

    edges, (lo, hi) = accuracy_bins(np.array([0.6, 0.7, 0.8]), 10)
    np.testing.assert_allclose([edges[0], edges[-1]], [0.6, 0.8])
    assert lo == pytest.approx(0.6 - 0.016) and hi == pytest.approx(0.8 + 0.016)
    edges, (lo, hi) = accuracy_bins(np.array([0.0, 1.0]), 10)
    assert (lo, hi) == pytest.approx((-0.08, 1.08))
    edges, _ = accuracy_bins(np.array([0.5, 0.5]), 4)  # no spread: ±0.05
    np.testing.assert_allclose([edges[0], edges[-1]], [0.45, 0.55])


def test_alpha_axis_includes_the_chosen_alpha(make_run, cli, tmp_path):
    from analysis.plots import default_alphas

    a = default_alphas(0.3)
    assert a[0] == pytest.approx(0.15) and a[-1] == pytest.approx(20.0) and len(a) == 200
    a = default_alphas(40.0)
    assert a[0] == pytest.approx(1.0) and a[-1] == pytest.approx(60.0)
    np.testing.assert_allclose(default_alphas(None)[[0, -1]], [1.0, 20.0])
    p = make_run("a.h5", [0.3, 0.6, 0.8, 0.9], algorithm="alpha_fedavg", alpha=0.3)
    for extra in ([], ["--alphas", "1..20"]):
        out = tmp_path / f"a{len(extra)}.png"
        code, _, err = cli("plot", "alpha-tradeoff", p, *extra, "--out", out)
        assert code == 0, err
        check_png(out, TRIPLE)


def test_convergence_of_a_one_shot_run_and_eval_gaps(make_run, cli, tmp_path):
    g = make_run("g.h5", [0.5, 0.6], algorithm="gems", rounds=1)
    f = make_run("f.h5", [0.5, 0.6], algorithm="fedavg", rounds=4)
    out = tmp_path / "c1.png"
    assert cli("plot", "convergence", g, f, "--out", out)[0] == 0
    check_png(out, WIDE)
