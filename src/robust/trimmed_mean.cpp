// trimmed_mean: per coordinate, the mean of the values left after cutting the b = floor(beta K)
// largest and b smallest (Yin et al., ICML 2018), unweighted as in the paper. Selection, not sorting:
// two std::nth_element calls per coordinate on (value, row) pairs, ties broken by row so that which
// row is cut does not depend on the library. A row's weight is the share of coordinates where it was
// kept, divided by K - 2b (so the weights sum to 1).
#include <algorithm>
#include <utility>

#include "robust/aggregator.hpp"
#include "robust/column_tiles.hpp"

namespace fedsilo {

int trimmedCount(double beta, int rows) {
  return std::min(static_cast<int>(beta * rows), (rows - 1) / 2);
}

AggregateResult trimmedMeanAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const int K = in.updates.rows;
  const int b = trimmedCount(cfg.trimFraction, K);
  const auto kept = static_cast<std::size_t>(K - 2 * b);
  AggregateResult r;
  r.aggregate.resize(in.updates.cols);
  std::vector<double> keptCount(static_cast<std::size_t>(K), 0.0);
  std::vector<std::pair<double, int>> pairs(static_cast<std::size_t>(K));
  std::vector<char> keep(static_cast<std::size_t>(K));
  forEachColumn(in.updates, [&](std::size_t c, double* v) {
    for (int k = 0; k < K; ++k) pairs[static_cast<std::size_t>(k)] = {v[k], k};
    if (b > 0) {
      std::nth_element(pairs.begin(), pairs.begin() + b, pairs.end());
      std::nth_element(pairs.begin() + b, pairs.begin() + (K - b), pairs.end());
    }
    // The kept values, summed in row order (v is still in row order).
    std::fill(keep.begin(), keep.end(), 0);
    for (int i = b; i < K - b; ++i) keep[static_cast<std::size_t>(pairs[static_cast<std::size_t>(i)].second)] = 1;
    double sum = 0.0;
    for (std::size_t k = 0; k < keep.size(); ++k)
      if (keep[k]) {
        sum += v[k];
        keptCount[k] += 1.0;
      }
    r.aggregate[c] = sum / static_cast<double>(kept);
  });
  r.selected.resize(static_cast<std::size_t>(K));
  r.weight.resize(static_cast<std::size_t>(K));
  const double cells = static_cast<double>(in.updates.cols) * static_cast<double>(kept);
  for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k) {
    r.selected[k] = keptCount[k] > 0.0 ? 1 : 0;
    r.weight[k] = cells > 0.0 ? keptCount[k] / cells : 0.0;
  }
  return r;
}

}  // namespace fedsilo
