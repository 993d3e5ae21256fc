"""Every `plot` figure: a non-empty PNG of the documented pixel size (figure size × 150 dpi)."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

SINGLE = (1200, 750)  # 8 x 5 in
DOUBLE = (1950, 750)  # 13 x 5 in
WIDE = (1650, 750)    # 11 x 5 in


def check_png(path, size):
    assert os.path.getsize(path) > 1000
    img = mpimg.imread(str(path))
    assert (img.shape[1], img.shape[0]) == size
    assert img.ndim == 3 and float(np.std(img[..., :3])) > 0.01  # not a blank canvas


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
    check_png(out, DOUBLE)
    out2 = tmp_path / "a2.png"
    assert cli("plot", "alpha-tradeoff", p, "--alphas", "0.5,1,2,4,8", "--sample-weighted", "--out", out2)[0] == 0
    check_png(out2, DOUBLE)


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
