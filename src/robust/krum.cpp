// krum and multi_krum (Blanchard, El Mhamdi, Guerraoui, Stainer, NeurIPS 2017). Each update's score
// is the sum of its squared distances to its K - f - 2 nearest other updates; Krum returns the update
// of least score, Multi-Krum the unweighted mean of the m updates of least scores (ties: lower row).
// Needs K >= 2f + 3 (the paper's condition n > 2f + 2).
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core/types.hpp"
#include "robust/aggregator.hpp"

namespace fedsilo {

namespace {

// The Krum scores of every row.
std::vector<double> krumScores(const UpdateMatrix& u, int f) {
  const auto K = static_cast<std::size_t>(u.rows);
  std::vector<double> d2(K * K, 0.0);
  for (std::size_t i = 0; i < K; ++i)
    for (std::size_t j = i + 1; j < K; ++j)
      d2[i * K + j] = d2[j * K + i] = squaredDistance(u.row(static_cast<int>(i)), u.row(static_cast<int>(j)), u.cols);
  const auto neighbours = static_cast<std::size_t>(u.rows - f - 2);
  std::vector<double> scores(K), others;
  for (std::size_t i = 0; i < K; ++i) {
    others.clear();
    for (std::size_t j = 0; j < K; ++j)
      if (j != i) others.push_back(d2[i * K + j]);
    std::nth_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(neighbours), others.end());
    scores[i] = std::accumulate(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(neighbours), 0.0);
  }
  return scores;
}

// The m rows of least score, the unweighted mean of their updates.
AggregateResult bestScores(const AggregateInput& in, int f, int m) {
  const int K = in.updates.rows;
  const std::vector<double> scores = krumScores(in.updates, f);
  std::vector<int> order(static_cast<std::size_t>(K));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return scores[static_cast<std::size_t>(a)] < scores[static_cast<std::size_t>(b)];
  });
  AggregateResult r;
  r.selected.assign(static_cast<std::size_t>(K), 0);
  r.weight.assign(static_cast<std::size_t>(K), 0.0);
  for (int i = 0; i < m; ++i) {
    r.selected[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = 1;
    r.weight[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = 1.0 / m;
  }
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
