"""Formulas checked against independent closed forms (α-FedAvg eq 7, docs/algorithms.md) and hand-made data."""


import numpy as np
import pytest

from analysis import metrics as M


def test_alpha_tradeoff_matches_closed_form():
    a = np.array([0.2, 0.5, 0.9, 0.95])
    alphas = [1.0, 1.5, 2.0, 5.0, 20.0]
    E, J = M.alpha_tradeoff(a, alphas)
    for alpha, e, j in zip(alphas, E, J):
        b = 1.0 / alpha
        e_ref = sum(x ** b for x in a) / sum(x ** (b - 1) for x in a)
        j_ref = sum(x ** b for x in a) ** 2 / (len(a) * sum(x ** (2 * b) for x in a))
        assert e == pytest.approx(e_ref)
        assert j == pytest.approx(j_ref)
    # α = 1: uniform weights -> E is the plain mean and J is Jain's index of the accuracies
    assert E[0] == pytest.approx(a.mean())
    assert J[0] == pytest.approx(a.sum() ** 2 / (len(a) * (a ** 2).sum()))
    # Theorems 1 and 2: E decreases and J increases with α > 1
    assert np.all(np.diff(E) < 0) and np.all(np.diff(J) > 0)


def test_alpha_weights_favour_weak_clients_and_survive_zero_accuracy():
    p = M.alpha_weights([0.0, 0.5, 1.0], 3.0)
    assert p.sum() == pytest.approx(1.0)
    assert p[0] > p[1] > p[2] and np.all(np.isfinite(p))


def test_bootstrap_ci_reproducible_and_brackets_median():
    vals = [0.61, 0.64, 0.66, 0.70, 0.72]
    lo, hi = M.bootstrap_median_ci(vals, seed=0)
    assert (lo, hi) == M.bootstrap_median_ci(vals, seed=0)
    assert min(vals) <= lo <= float(np.median(vals)) <= hi <= max(vals)
    # independent re-statement of the documented procedure
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 5, size=(1000, 5))
    med = np.median(np.array(vals)[idx], axis=1)
    assert (lo, hi) == pytest.approx(tuple(np.percentile(med, [2.5, 97.5])))
    assert M.bootstrap_median_ci([0.5]) == (0.5, 0.5)


def test_worst_best_tail_sizes():
    assert M.tail_count(1) == 1 and M.tail_count(10) == 1 and M.tail_count(11) == 2 and M.tail_count(100) == 10
    assert M.worst10(list(range(11))) == pytest.approx(0.5)
    assert M.best10(list(range(11))) == pytest.approx(9.5)


def test_improved_share():
    share, n = M.improved_share([0.7, 0.55, 0.45, float("nan")], [0.5] * 4, [0.6, 0.6, 0.4, 0.4])
    assert n == 3 and share == pytest.approx(1 / 3)
