// krum and multi_krum (Blanchard, El Mhamdi, Guerraoui, Stainer, NeurIPS 2017). Each update's score
// is the sum of its squared distances to its K - f - 2 nearest other updates; Krum returns the update
// of least score, Multi-Krum the unweighted mean of the m updates of least scores (ties: lower row).
// Needs K >= 2f + 3 (the paper's condition n > 2f + 2).
//
// Speed with the direct computation's selection: every distance comes from one Gram matrix
// (robust/pairwise_distances.hpp) with a bound on its error, which gives each score an interval. Rows
// whose interval settles whether they are among the m least are decided by it; the others (those near
// the cut) get their scores recomputed from direct double distances (squaredDistance), exactly as the
// reference computation does, and the cut is made among them. So the selection is the one the direct
// O(K^2 n) double computation makes, at the cost of one float GEMM plus a few rows.
#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "robust/aggregator.hpp"
#include "robust/pairwise_distances.hpp"

namespace fedsilo {

namespace {

// The sum of the `neighbours` least of `others` (reordered).
double sumOfLeast(std::vector<double>& others, std::size_t neighbours) {
  std::nth_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(neighbours), others.end());
  return std::accumulate(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(neighbours), 0.0);
}

// Row i's score from direct double distances (the reference computation); `exact` caches them by pair.
double directScore(const UpdateMatrix& u, int i, std::size_t neighbours, std::map<std::pair<int, int>, double>& exact) {
  std::vector<double> others;
  for (int j = 0; j < u.rows; ++j) {
    if (j == i) continue;
    const std::pair<int, int> key{std::min(i, j), std::max(i, j)};
    auto it = exact.find(key);
    if (it == exact.end()) it = exact.emplace(key, squaredDistance(u.row(key.first), u.row(key.second), u.cols)).first;
    others.push_back(it->second);
  }
  return sumOfLeast(others, neighbours);
}

// Each row's score interval [lo, hi] from the Gram distances: the k-th least of perturbed values is
// within the largest perturbation of the k-th least of the exact ones, so the score is within
// neighbours x (row's largest error), plus the rounding of the two sums.
struct ScoreInterval {
  double lo, hi;
};

std::vector<ScoreInterval> scoreIntervals(const PairwiseDistances& d, std::size_t neighbours) {
  const int K = d.rows;
  std::vector<ScoreInterval> out(static_cast<std::size_t>(K));
  std::vector<double> others;
  for (int i = 0; i < K; ++i) {
    others.clear();
    double worst = 0.0;
    for (int j = 0; j < K; ++j) {
      if (j == i) continue;
      others.push_back(d.at(i, j));
      worst = std::max(worst, d.errorAt(i, j));
    }
    const double score = sumOfLeast(others, neighbours);
    const auto q = static_cast<double>(neighbours);
    const double margin = q * worst * (1.0 + 1e-12) + 4.0 * q * std::ldexp(1.0, -53) * (score + q * worst);
    out[static_cast<std::size_t>(i)] = {score - margin, score + margin};
  }
  return out;
}

// The m rows of least score (ties: lower row), as the direct computation chooses them.
std::vector<char> leastScores(const UpdateMatrix& u, int f, int m) {
  const int K = u.rows;
  std::vector<char> chosen(static_cast<std::size_t>(K), 0);
  if (m >= K) {
    std::fill(chosen.begin(), chosen.end(), 1);
    return chosen;
  }
  const auto neighbours = static_cast<std::size_t>(K - f - 2);
  const std::vector<ScoreInterval> s = scoreIntervals(pairwiseSquaredDistances(u), neighbours);
  // Row i is surely among the m if fewer than m others may precede it, surely not if m others surely do.
  std::vector<int> undecided;
  int in = 0;
  for (int i = 0; i < K; ++i) {
    int mayPrecede = 0, surelyPrecede = 0;
    for (int j = 0; j < K; ++j) {
      if (j == i) continue;
      const ScoreInterval &a = s[static_cast<std::size_t>(i)], &b = s[static_cast<std::size_t>(j)];
      mayPrecede += a.hi < b.lo ? 0 : 1;  // also when a bound is NaN: then nothing is settled
      surelyPrecede += b.hi < a.lo ? 1 : 0;
    }
    if (mayPrecede < m) {
      chosen[static_cast<std::size_t>(i)] = 1;
      ++in;
    } else if (surelyPrecede < m) {
      undecided.push_back(i);
    }
  }
  // The chosen rows are a prefix of the order (score, row), so the rest of the m are the first of the
  // undecided rows in that order, by their direct scores.
  std::map<std::pair<int, int>, double> exact;
  std::vector<std::pair<double, int>> ranked;
  for (int i : undecided) ranked.emplace_back(directScore(u, i, neighbours, exact), i);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const std::pair<double, int>& a, const std::pair<double, int>& b) { return a.first < b.first; });
  for (int r = 0; r < m - in && r < static_cast<int>(ranked.size()); ++r)
    chosen[static_cast<std::size_t>(ranked[static_cast<std::size_t>(r)].second)] = 1;
  return chosen;
}

// The m rows of least score, the unweighted mean of their updates.
AggregateResult bestScores(const AggregateInput& in, int f, int m) {
  AggregateResult r;
  r.selected = leastScores(in.updates, f, m);
  r.weight.assign(r.selected.size(), 0.0);
  for (std::size_t k = 0; k < r.selected.size(); ++k)
    if (r.selected[k]) r.weight[k] = 1.0 / m;
  combineRows(in.updates, r.weight, r.aggregate);
  return r;
}

}  // namespace

int multiKrumCount(const AggregatorConfig& cfg, int rows) {
  return cfg.krumM > 0 ? std::min(cfg.krumM, rows) : rows - cfg.byzantine;
}

AggregateResult krumAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  return bestScores(in, cfg.byzantine, 1);
}

AggregateResult multiKrumAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  return bestScores(in, cfg.byzantine, multiKrumCount(cfg, in.updates.rows));
}

}  // namespace fedsilo
