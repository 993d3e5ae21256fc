"""One-shot runs (GEMS and its baselines) on fake files: the client score of every algorithm is
/summary/client_accuracy (for the ensemble: the vote's per-client accuracy), and the tables and the
`oneshot` figure say which scores were measured after fine-tuning."""

import csv
import io

import numpy as np
import pytest

from analysis.tests.images import DOUBLE, check_png

# the vote scores poorly on every client, each client's own local model well (as seen in fedsilo runs)
VOTE = [0.17, 0.20, 0.18, 0.19, 0.18]
LOCAL = [0.99, 1.0, 0.98, 1.0, 0.99]
GEMS = [0.60, 0.65, 0.70, 0.55, 0.62]
SWEEP = [0, 10, 100]
CONFIG = "[gems]\npublic_samples = 100\nfinetune_epochs = 40\nfinetune_sizes = 0,10,100\n"


def _rows(text):
    return {r["algorithm"]: r for r in csv.DictReader(io.StringIO(text))}


def _oneshot_runs(make_run, seeds=(0, 1), vote=VOTE):
    """ensemble (vote scores in /summary and /gems/client_accuracy, members' own accuracies in
    /gems/finetune/member_accuracy), oneshot_local and gems, as fedsilo records them."""
    paths = []
    for s in seeds:
        d = 0.01 * s
        common = dict(seed=s, rounds=1, model="logreg", config_sections=CONFIG)
        paths.append(make_run(f"ensemble_{s}.h5", np.add(vote, d), algorithm="ensemble",
                              gems=(SWEEP, [0.197, 0.36, 0.62]),
                              gems_records={"accuracy_before": 0.197 + d, "accuracy_after": 0.62 + d,
                                            "client_accuracy": np.add(vote, d),
                                            "finetune/member_accuracy": np.tile([0.2, 0.37, 0.62], (5, 1))},
                              **common))
        paths.append(make_run(f"oneshot_local_{s}.h5", np.add(LOCAL, -d), algorithm="oneshot_local",
                              gems=(SWEEP, [0.196, 0.37, 0.61]),
                              gems_records={"accuracy_before": 0.196, "accuracy_after": 0.61,
                                            "client_accuracy": np.add(LOCAL, -d)}, **common))
        paths.append(make_run(f"gems_{s}.h5", np.add(GEMS, d), algorithm="gems", gems=(SWEEP, [0.44, 0.41, 0.63]),
                              gems_records={"accuracy_before": 0.44, "accuracy_after": 0.63 + d,
                                            "client_accuracy": np.add(GEMS, d)}, **common))
    return paths


def test_ensemble_is_scored_by_its_vote(make_run, cli):
    code, out, err = cli("compare", "--format", "csv", *_oneshot_runs(make_run))
    assert code == 0, err
    assert "warning" not in err  # /summary/client_accuracy and /gems/client_accuracy agree
    rows = _rows(out)
    vote_means = [np.mean(np.add(VOTE, 0.01 * s)) for s in (0, 1)]
    assert float(rows["ensemble"]["median"]) == pytest.approx(np.median(vote_means))
    # ranked by the client scores: the local models first, the vote last
    assert float(rows["oneshot_local"]["rank"]) == 1
    assert float(rows["gems"]["rank"]) == 2
    assert float(rows["ensemble"]["rank"]) == 3
    assert float(rows["ensemble"]["worst10"]) == pytest.approx(np.median([min(VOTE) + 0.01 * s for s in (0, 1)]))


def test_one_shot_table_says_what_was_fine_tuned(make_run, cli):
    paths = _oneshot_runs(make_run)
    rows = _rows(cli("compare", "--format", "csv", *paths)[1])
    assert rows["ensemble"]["client_model"] == "vote of the local models, not fine-tuned"
    assert rows["oneshot_local"]["client_model"] == "each client's local model, not fine-tuned"
    assert rows["gems"]["client_model"] == "GEMS model, fine-tuned on 100 public samples"
    assert (rows["gems"]["client_finetune_samples"], rows["ensemble"]["client_finetune_samples"]) == ("100", "0")
    # the test-set records: median over seeds of /gems/accuracy_before and /gems/accuracy_after
    assert float(rows["ensemble"]["test_accuracy_no_finetune"]) == pytest.approx(0.202)
    assert float(rows["gems"]["test_accuracy_finetuned"]) == pytest.approx(0.635)
    assert rows["gems"]["public_samples"] == "100"
    code, md, _ = cli("compare", *paths)
    assert code == 0
    # the comparison table's row and the one-shot table's row both name the model
    tuned = "| GEMS model, fine-tuned on 100 public samples |"
    assert any(l.startswith("| gems ") and "| 0, 1 |" in l and l.endswith(tuned) for l in md.splitlines())
    assert "| gems | GEMS model, fine-tuned on 100 public samples | 0.4400 | 0.6350 (100) |" in md
    assert "| ensemble " in md and "vote of the local models, not fine-tuned" in md
    assert "test acc., fine-tuned on gems.public_samples" in md and "test acc., fine-tuned on 10 |" in md


def test_without_public_samples_nothing_is_fine_tuned(make_run, cli):
    p = make_run("g.h5", GEMS, algorithm="gems", rounds=1, config_sections="[gems]\npublic_samples = 0\n",
                 gems_records={"accuracy_before": 0.44, "accuracy_after": float("nan")})
    q = make_run("p.h5", GEMS, algorithm="public_only", rounds=1, config_sections="[gems]\npublic_samples = 0\n")
    rows = _rows(cli("compare", "--format", "csv", p, q)[1])
    assert rows["gems"]["client_model"] == "GEMS model, not fine-tuned"
    assert rows["public_only"]["client_model"] == "the untrained initial model"
    assert rows["gems"]["test_accuracy_finetuned"] == "nan"


def test_a_file_with_other_client_scores_is_flagged(make_run, subproc):
    """A file whose /summary/client_accuracy is not the algorithm's own per-client evaluation (fedsilo
    once stored each client's local model there for the ensemble): the tables still read /summary, and
    a warning names the file and both means."""
    p = make_run("old.h5", LOCAL, algorithm="ensemble", rounds=1, config_sections=CONFIG,
                 gems_records={"client_accuracy": VOTE})
    r = subproc("summary", "--format", "csv", p)
    assert r.returncode == 0, r.stderr
    (warning,) = r.stderr.strip().splitlines()
    assert warning.startswith("analysis: warning: ") and str(p) in warning
    assert f"{np.mean(LOCAL):.4f}" in warning and f"{np.mean(VOTE):.4f}" in warning
    (row,) = list(csv.DictReader(io.StringIO(r.stdout)))
    assert float(row["acc_mean"]) == pytest.approx(np.mean(LOCAL))
    assert row["client_model"] == "vote of the local models, not fine-tuned"


def test_oneshot_figure_and_its_numbers(make_run, cli, tmp_path):
    paths = _oneshot_runs(make_run)
    out, data = tmp_path / "o.png", tmp_path / "o.csv"
    code, _, err = cli("plot", "oneshot", *paths, "--out", out, "--csv", data)
    assert code == 0, err
    check_png(out, DOUBLE)
    rows = list(csv.DictReader(data.open()))
    got = {(r["algorithm"], r["statistic"]): r for r in rows}
    vote = [np.mean(np.add(VOTE, 0.01 * s)) for s in (0, 1)]
    assert float(got[("ensemble", "client_mean")]["y"]) == pytest.approx(np.mean(vote))
    assert float(got[("ensemble", "client_mean_low")]["y"]) == pytest.approx(min(vote))  # 2 seeds: min-max
    assert float(got[("ensemble", "client_mean_high")]["y"]) == pytest.approx(max(vote))
    assert got[("ensemble", "client_mean")]["x"] == "0" and got[("gems", "client_mean")]["x"] == "100"
    assert float(got[("gems", "test_finetuned")]["y"]) == pytest.approx(0.635)
    assert got[("gems", "test_finetuned")]["seed"] == "0;1"


def test_convergence_leaves_one_shot_runs_to_the_oneshot_figure(make_run, cli, subproc, tmp_path):
    g = make_run("g.h5", GEMS, algorithm="gems", rounds=1)
    f = make_run("f.h5", GEMS, algorithm="fedavg", rounds=4)
    data = tmp_path / "c.csv"
    assert cli("plot", "convergence", g, f, "--out", tmp_path / "c.png", "--csv", data)[0] == 0
    assert {r["algorithm"] for r in csv.DictReader(data.open())} == {"fedavg"}
    p = subproc("plot", "convergence", g, "--out", tmp_path / "c2.png")
    assert p.returncode == 2 and "plot oneshot" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = subproc("plot", "oneshot", f, "--out", tmp_path / "o.png")
    assert p.returncode == 2 and "plot convergence" in p.stderr
