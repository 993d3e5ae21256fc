// trimmed_mean: per coordinate, the mean of the values left after cutting the b = floor(beta K)
// largest and b smallest (Yin et al., ICML 2018), unweighted as in the paper. Every column sorted by a
// sorting network over a tile of columns at once (robust/sorted_columns.hpp); the kept values are the
// sorted positions [b, K - b), summed in that order.
//
// A row's weight is the share of the kept (coordinate, position) cells it holds: 1 in a coordinate
// where its value lies strictly inside the kept range; where values tie at a cut, the tied rows share
// the kept positions holding that value equally, so that the weights sum to 1 whatever the ties.
#include <algorithm>

#include "robust/aggregator.hpp"
#include "robust/sorted_columns.hpp"

namespace fedsilo {

int trimmedCount(double beta, int rows) { return std::min(static_cast<int>(beta * rows), (rows - 1) / 2); }

namespace {

// Of the sorted column (stride kSortedLanes), the positions in [from, to) that hold `value`.
int countEqual(const float* sorted, int from, int to, float value) {
  int n = 0;
  for (int p = from; p < to; ++p) n += sorted[static_cast<std::size_t>(p) * kSortedLanes] == value ? 1 : 0;
  return n;
}

// A lane's kept range [lo, hi] and the kept share of a row whose value is lo or hi.
struct KeptRange {
  float lo = 0.0f, hi = 0.0f;
  double atLo = 1.0, atHi = 1.0;  // lo == hi: atLo is the share
};

KeptRange keptRange(const float* sorted, int K, int b) {
  KeptRange r;
  r.lo = sorted[static_cast<std::size_t>(b) * kSortedLanes];
  r.hi = sorted[static_cast<std::size_t>(K - b - 1) * kSortedLanes];
  const bool tieAtACut = b > 0 && (sorted[static_cast<std::size_t>(b - 1) * kSortedLanes] == r.lo ||
                                   sorted[static_cast<std::size_t>(K - b) * kSortedLanes] == r.hi);
  if (!tieAtACut) return r;  // every row with lo <= x <= hi holds one kept position
  r.atLo = static_cast<double>(countEqual(sorted, b, K - b, r.lo)) / countEqual(sorted, 0, K, r.lo);
  r.atHi = static_cast<double>(countEqual(sorted, b, K - b, r.hi)) / countEqual(sorted, 0, K, r.hi);
  return r;
}

}  // namespace

AggregateResult trimmedMeanAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const int K = in.updates.rows;
  const int b = trimmedCount(cfg.trimFraction, K);
  const auto kept = static_cast<double>(K - 2 * b);
  AggregateResult r;
  r.aggregate.resize(in.updates.cols);
  std::vector<double> keptCells(static_cast<std::size_t>(K), 0.0);
  std::vector<KeptRange> ranges(kSortedLanes);
  std::vector<double> sums(kSortedLanes);
  std::vector<float> lo(kSortedLanes), hi(kSortedLanes);
  forEachSortedTile(in.updates, [&](std::size_t c0, std::size_t width, const float* sorted) {
    std::fill(sums.begin(), sums.end(), 0.0);
    for (int p = b; p < K - b; ++p) {
      const float* row = sorted + static_cast<std::size_t>(p) * kSortedLanes;
      for (std::size_t l = 0; l < kSortedLanes; ++l) sums[l] += static_cast<double>(row[l]);
    }
    bool tie = false;
    for (std::size_t l = 0; l < width; ++l) {
      r.aggregate[c0 + l] = sums[l] / kept;
      ranges[l] = keptRange(sorted + l, K, b);
      lo[l] = ranges[l].lo;
      hi[l] = ranges[l].hi;
      tie = tie || ranges[l].atLo != 1.0 || ranges[l].atHi != 1.0;
    }
    for (int k = 0; k < K; ++k) {
      const float* x = in.updates.row(k) + c0;
      double cells = 0.0;
      if (!tie) {  // the common case: a row is kept where lo <= x <= hi
        int inside = 0;
        for (std::size_t l = 0; l < width; ++l) inside += (x[l] >= lo[l]) & (x[l] <= hi[l]);
        cells = inside;
      } else {
        for (std::size_t l = 0; l < width; ++l) {
          const KeptRange& g = ranges[l];
          if (x[l] > g.lo && x[l] < g.hi)
            cells += 1.0;
          else if (x[l] == g.lo)
            cells += g.atLo;
          else if (x[l] == g.hi)
            cells += g.atHi;
        }
      }
      keptCells[static_cast<std::size_t>(k)] += cells;
    }
  });
  r.selected.resize(static_cast<std::size_t>(K));
  r.weight.resize(static_cast<std::size_t>(K));
  const double total = static_cast<double>(in.updates.cols) * kept;
  for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k) {
    r.selected[k] = keptCells[k] > 0.0 ? 1 : 0;
    r.weight[k] = total > 0.0 ? keptCells[k] / total : 0.0;
  }
  return r;
}

}  // namespace fedsilo
