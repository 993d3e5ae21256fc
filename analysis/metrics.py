"""The statistics behind the tables and figures, each with its source.

Per-client statistics ignore clients whose value is NaN (docs/results.md: a metric that cannot be
computed, e.g. for an empty test split, is NaN); K below is the number of finite values.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Tuple

import numpy as np

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
# fedsilo's default alpha_fedavg.accuracy_floor: a_k is clamped to [floor, 1] so that a_k^(1/α-1) stays
# finite; a run's own floor (Run.float_option("alpha_fedavg.accuracy_floor", ...)) replaces it
ALPHA_ACCURACY_FLOOR = 1e-6
# from this many runs on, a spread over seeds is a bootstrap 95% interval; below it, the range min..max
# (a percentile bootstrap of 2 to 4 values is their range, or nearly, and says nothing about 95%)
MIN_RUNS_FOR_CI = 5


def finite(values) -> np.ndarray:
    a = np.asarray(values, dtype=float).reshape(-1)
    return a[np.isfinite(a)]


def _empty_nan(fn):
    def wrapper(values, *args, **kwargs):
        a = finite(values)
        if a.size == 0:
            return float("nan")
        return fn(a, *args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def tail_count(k: int) -> int:
    """docs/results.md: worst/best 10% = the lowest/highest ceil(K/10) values."""
    return max(1, math.ceil(k / 10))


@_empty_nan
def mean(a):
    return float(np.mean(a))


@_empty_nan
def median(a):
    return float(np.median(a))


@_empty_nan
def worst10(a):
    """Mean of the ceil(K/10) lowest values."""
    return float(np.mean(np.sort(a)[: tail_count(a.size)]))


@_empty_nan
def best10(a):
    """Mean of the ceil(K/10) highest values."""
    return float(np.mean(np.sort(a)[-tail_count(a.size):]))


@_empty_nan
def variance(a):
    """Population variance (1/K), as np.var in PLayer-FL's fairness analysis (Elhussein et al., arXiv 2502.08829)."""
    return float(np.var(a))


@_empty_nan
def jain(a):
    """Jain's index (Σa)² / (K Σa²) ∈ [1/K, 1] (Jain, Chiu, Hawe 1984; α-FedAvg eq 2)."""
    ss = float(np.sum(a * a))
    if ss == 0.0:
        return float("nan")
    return float(np.sum(a) ** 2 / (a.size * ss))


def efficiency(accuracy, num_train) -> float:
    """Σ p_k a_k with p_k = n_k / Σ n (sample-weighted mean accuracy, docs/results.md; n_k = num_train).

    Clients with a NaN accuracy are left out and the weights renormalised over the others.
    """
    if num_train is None:
        return float("nan")
    a = np.asarray(accuracy, dtype=float).reshape(-1)
    n = np.asarray(num_train, dtype=float).reshape(-1)
    ok = np.isfinite(a) & np.isfinite(n)
    if not ok.any() or n[ok].sum() <= 0:
        return float("nan")
    return float(np.sum(n[ok] * a[ok]) / np.sum(n[ok]))


def client_stats(values) -> Dict[str, float]:
    return {
        "mean": mean(values),
        "median": median(values),
        "worst10": worst10(values),
        "best10": best10(values),
    }


# --------------------------------------------------------------------------- across seeds


def bootstrap_median_ci(values, resamples: int = BOOTSTRAP_RESAMPLES, confidence: float = 0.95,
                        seed: int = BOOTSTRAP_SEED) -> Tuple[float, float]:
    """Percentile bootstrap CI of the median, as ``bootstrap_ci`` in PLayer-FL's evaluation code
    (Elhussein et al., arXiv 2502.08829).

    ``resamples`` resamples of size n drawn with replacement through
    ``numpy.random.default_rng(seed).integers(0, n, (resamples, n))``; the CI is the
    (1-confidence)/2 and (1+confidence)/2 percentiles (numpy's linear interpolation) of the resample
    medians. With one value the interval is that value.
    """
    a = finite(values)
    if a.size == 0:
        return (float("nan"), float("nan"))
    if a.size == 1:
        return (float(a[0]), float(a[0]))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.size, size=(resamples, a.size))
    medians = np.median(a[idx], axis=1)
    lo, hi = np.percentile(medians, [(1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100])
    return (float(lo), float(hi))


def interval_kind(n: int) -> str:
    """How a spread over n runs is shown: "95% CI" (bootstrap, n >= MIN_RUNS_FOR_CI), "min-max"
    (2 <= n < MIN_RUNS_FOR_CI) or "single run"."""
    if n >= MIN_RUNS_FOR_CI:
        return "95% CI"
    return "min-max" if n >= 2 else "single run"


def median_interval(values, resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = BOOTSTRAP_SEED) -> Tuple[float, float, str]:
    """(low, high, kind) of the spread of the median over runs: the percentile bootstrap CI of the
    median (bootstrap_median_ci) from MIN_RUNS_FOR_CI runs on, else the range [min, max]; one run
    gives (value, value, "single run")."""
    a = finite(values)
    kind = interval_kind(a.size)
    if a.size == 0:
        return float("nan"), float("nan"), kind
    if kind == "95% CI":
        lo, hi = bootstrap_median_ci(a, resamples=resamples, seed=seed)
        return lo, hi, kind
    return float(a.min()), float(a.max()), kind


def seed_band(values, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED):
    """(mean, low, high, kind) of one quantity over runs (seeds), for the bands of the figures: the
    mean with the percentile bootstrap 95% CI of the mean from MIN_RUNS_FOR_CI runs on, the range
    [min, max] below; low and high are NaN for a single run."""
    a = finite(values)
    kind = interval_kind(a.size)
    nan = float("nan")
    if a.size == 0:
        return nan, nan, nan, kind
    centre = float(np.mean(a))
    if a.size == 1:
        return centre, nan, nan, kind
    if kind == "min-max":
        return centre, float(a.min()), float(a.max()), kind
    rng = np.random.default_rng(seed)
    means = np.mean(a[rng.integers(0, a.size, size=(resamples, a.size))], axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return centre, float(lo), float(hi), kind


def improved_share(scores, local, fedavg) -> Tuple[float, int]:
    """IPR (PLayer-FL, arXiv 2502.08829): share of clients with P_c > max(S_c, G_c), higher-is-better scores.

    Returns (share in [0, 1], number of clients compared); clients with any NaN are not compared.
    """
    p = np.asarray(scores, dtype=float).reshape(-1)
    s = np.asarray(local, dtype=float).reshape(-1)
    g = np.asarray(fedavg, dtype=float).reshape(-1)
    if not (p.size == s.size == g.size):
        return (float("nan"), 0)
    ok = np.isfinite(p) & np.isfinite(s) & np.isfinite(g)
    n = int(ok.sum())
    if n == 0:
        return (float("nan"), 0)
    return (float(np.mean(p[ok] > np.maximum(s[ok], g[ok]))), n)


def ranks_per_block(table: Dict[str, Dict[str, float]], higher_is_better: bool = True) -> Dict[str, Dict[str, float]]:
    """Rank algorithms within each block (setting), 1 = best, ties get the average rank.

    ``table[block][algorithm] = value``; best = highest value, or lowest with ``higher_is_better=False``
    (fairness: variance). NaN values are not ranked.
    """
    from scipy.stats import rankdata

    sign = -1.0 if higher_is_better else 1.0
    out: Dict[str, Dict[str, float]] = {}
    for block, row in table.items():
        names = [n for n, v in row.items() if np.isfinite(v)]
        if not names:
            out[block] = {}
            continue
        r = rankdata([sign * row[n] for n in names], method="average")
        out[block] = {n: float(x) for n, x in zip(names, r)}
    return out


def average_ranks(table: Dict[str, Dict[str, float]], higher_is_better: bool = True) -> Dict[str, Tuple[float, int]]:
    """Average of each algorithm's per-block rank over the blocks it was ranked in -> (avg, n)."""
    per = ranks_per_block(table, higher_is_better)
    acc: Dict[str, List[float]] = {}
    for ranks in per.values():
        for name, r in ranks.items():
            acc.setdefault(name, []).append(r)
    return {n: (float(np.mean(v)), len(v)) for n, v in acc.items()}


def friedman(table: Dict[str, Dict[str, float]]):
    """Friedman test with algorithms as treatments and settings (datasets) as blocks.

    Uses the algorithms that have a finite value in every block. The statistic depends only on the
    ranks within each block, so it is the same whether higher or lower values are better. Returns
    (statistic, p, algorithms used, blocks used, reason) where reason is None when the test ran,
    otherwise a sentence saying why not (statistic and p are then NaN).
    """
    from scipy.stats import friedmanchisquare

    blocks = sorted(table)
    algos = sorted({a for row in table.values() for a in row})
    complete = [a for a in algos if all(np.isfinite(table[b].get(a, np.nan)) for b in blocks)]
    nan = float("nan")
    if len(blocks) < 2:
        return nan, nan, complete, blocks, (
            f"the Friedman test needs at least 2 settings (blocks); there is {len(blocks)}")
    if len(complete) < 3:
        return nan, nan, complete, blocks, (
            f"the Friedman test needs at least 3 algorithms with a result in every setting; "
            f"there are {len(complete)}" + (f" ({', '.join(complete)})" if complete else ""))
    samples = [[table[b][a] for b in blocks] for a in complete]
    stat, p = friedmanchisquare(*samples)
    stat, p = float(stat), float(p)
    reason = None
    if not np.isfinite(stat):
        reason = "the Friedman statistic is undefined (every setting ranks all algorithms as ties)"
    return stat, p, complete, blocks, reason


# --------------------------------------------------------------------------- α-FedAvg


def floored(accuracy, floor: float = ALPHA_ACCURACY_FLOOR) -> np.ndarray:
    """Accuracies clamped to [floor, 1], as α-FedAvg clamps the reports (alpha_fedavg.accuracy_floor)."""
    return np.clip(np.asarray(accuracy, dtype=float), floor, 1.0)


def alpha_weights(accuracy, alpha: float, sample_weights=None, floor: float = ALPHA_ACCURACY_FLOOR) -> np.ndarray:
    """α-FedAvg aggregation weights p_k ∝ a_k^(1/α-1) (docs/algorithms.md, α-FedAvg, eq 6).

    With ``sample_weights`` w_k (n_k/n): p_k ∝ w_k^(1/α) a_k^(1/α-1), the weighted α-fair variant
    (Mo & Walrand), an unconfirmed alternative. Accuracies are clamped to [floor, 1] (the run's
    alpha_fedavg.accuracy_floor). Computed in log space so large exponents do not overflow.
    """
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha}")
    a = floored(accuracy, floor)
    logw = (1.0 / alpha - 1.0) * np.log(a)
    if sample_weights is not None:
        w = np.asarray(sample_weights, dtype=float)
        logw = logw + (1.0 / alpha) * np.log(np.clip(w, 1e-300, None))
    logw -= logw.max()
    p = np.exp(logw)
    return p / p.sum()


def alpha_tradeoff(accuracy, alphas: Iterable[float], sample_weights=None, floor: float = ALPHA_ACCURACY_FLOOR):
    """E(α) = Σ p_k a_k and J(α) = (Σ R_k)² / (K Σ R_k²), R_k = p_k a_k (eqs 4, 5, 7), with a_k clamped
    to [floor, 1] in the weights and in R_k, as fedsilo's α-FedAvg uses its floored reports.

    ``accuracy`` should hold the finite final client accuracies. Returns (E, J) arrays.
    """
    a_used = floored(accuracy, floor)
    es, js = [], []
    for alpha in alphas:
        p = alpha_weights(a_used, float(alpha), sample_weights, floor)
        r = p * a_used
        es.append(float(r.sum()))
        js.append(float(r.sum() ** 2 / (r.size * np.sum(r * r))))
    return np.array(es), np.array(js)
