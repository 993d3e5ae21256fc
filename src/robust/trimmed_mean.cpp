// trimmed_mean: per coordinate, the mean of the values left after cutting the b = floor(beta K)
// largest and b smallest (Yin et al., ICML 2018), unweighted as in the paper. A selection network over
// a tile of columns at once (robust/sorted_columns.hpp) gives each column's cuts, lo = the (b+1)-th
// smallest and hi = the (b+1)-th largest value; the kept sum is then the values strictly between them,
// added in row (client) order, plus the kept copies of lo and hi. No sort: the order of the kept
// values is never needed.
//
// A row's weight is the share of the kept (coordinate, position) cells it holds: 1 in a coordinate
// where its value lies strictly inside the kept range; where values tie at a cut, the tied rows share
// the kept positions holding that value equally, so that the weights sum to 1 whatever the ties.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "robust/aggregator.hpp"
#include "robust/sorted_columns.hpp"

namespace fedsilo {

int trimmedCount(double beta, int rows) { return std::min(static_cast<int>(beta * rows), (rows - 1) / 2); }

namespace {

// One tile's lanes: the cuts, and how many rows lie below, at or above them.
struct TileCuts {
  std::vector<float> lo, hi;
  std::vector<std::int32_t> belowLo, atLo, belowHi, atHi;
  explicit TileCuts(std::size_t lanes)
      : lo(lanes), hi(lanes), belowLo(lanes), atLo(lanes), belowHi(lanes), atHi(lanes) {}
};

void countAroundCuts(const UpdateMatrix& u, std::size_t c0, std::size_t width, TileCuts& t) {
  std::fill(t.belowLo.begin(), t.belowLo.end(), 0);
  std::fill(t.atLo.begin(), t.atLo.end(), 0);
  std::fill(t.belowHi.begin(), t.belowHi.end(), 0);
  std::fill(t.atHi.begin(), t.atHi.end(), 0);
  for (int k = 0; k < u.rows; ++k) {
    const float* x = u.row(k) + c0;
    for (std::size_t l = 0; l < width; ++l) {
      t.belowLo[l] += x[l] < t.lo[l];
      t.atLo[l] += x[l] == t.lo[l];
      t.belowHi[l] += x[l] < t.hi[l];
      t.atHi[l] += x[l] == t.hi[l];
    }
  }
}

// sums[l] += x[l] where lo[l] < x[l] < hi[l], and the rows at lo and hi counted; returns how many x[l]
// lie in [lo[l], hi[l]]. Branch-free:
// a value outside is masked to +0 bit by bit (a select the compiler would not if-convert), so that the
// loop vectorises.
int addInside(const float* __restrict x, const float* __restrict lo, const float* __restrict hi, std::size_t width,
              double* __restrict sums, std::int32_t* __restrict atLo, std::int32_t* __restrict atHi) {
  for (std::size_t l = 0; l < width; ++l) {
    const float v = x[l];
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= 0u - static_cast<std::uint32_t>((v > lo[l]) & (v < hi[l]));
    float inside;
    std::memcpy(&inside, &bits, sizeof inside);
    sums[l] += static_cast<double>(inside);
  }
  int cells = 0;
  for (std::size_t l = 0; l < width; ++l) {
    cells += (x[l] >= lo[l]) & (x[l] <= hi[l]);
    atLo[l] += x[l] == lo[l];
    atHi[l] += x[l] == hi[l];
  }
  return cells;
}

}  // namespace

AggregateResult trimmedMeanAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const int K = in.updates.rows;
  const int b = trimmedCount(cfg.trimFraction, K);
  const auto kept = static_cast<double>(K - 2 * b);
  AggregateResult r;
  r.aggregate.resize(in.updates.cols);
  std::vector<double> keptCells(static_cast<std::size_t>(K), 0.0);
  TileCuts t(kSortedLanes);
  std::vector<double> sums(kSortedLanes), shareLo(kSortedLanes), shareHi(kSortedLanes);
  std::vector<int> keptLo(kSortedLanes), keptHi(kSortedLanes);
  // The cuts, and (b > 0) the values just outside them: equal ones mean a tie at a cut.
  const std::vector<int> positions = b > 0 ? std::vector<int>{b - 1, b, K - b - 1, K - b} : std::vector<int>{0, K - 1};
  forEachSelectedTile(in.updates, positions, [&](std::size_t c0, std::size_t width, const float* selected) {
    const auto at = [&](int p, std::size_t l) { return selected[static_cast<std::size_t>(p) * kSortedLanes + l]; };
    bool tie = false;
    for (std::size_t l = 0; l < width; ++l) {
      t.lo[l] = at(b, l);
      t.hi[l] = at(K - b - 1, l);
      tie = tie || (b > 0 && (at(b - 1, l) == t.lo[l] || at(K - b, l) == t.hi[l]));
      sums[l] = 0.0;
    }
    if (!tie) {  // the common case: every row in [lo, hi] is kept, every copy of lo and hi with it
      std::fill(t.atLo.begin(), t.atLo.end(), 0);
      std::fill(t.atHi.begin(), t.atHi.end(), 0);
      for (int k = 0; k < K; ++k)
        keptCells[static_cast<std::size_t>(k)] += addInside(in.updates.row(k) + c0, t.lo.data(), t.hi.data(), width,
                                                            sums.data(), t.atLo.data(), t.atHi.data());
      for (std::size_t l = 0; l < width; ++l) {
        keptLo[l] = t.atLo[l];
        keptHi[l] = t.atHi[l];
      }
    } else {
      countAroundCuts(in.updates, c0, width, t);
      // Kept positions are [b, K - b); those holding lo are [belowLo, belowLo + atLo) within them.
      for (std::size_t l = 0; l < width; ++l) {
        keptLo[l] = std::min(t.belowLo[l] + t.atLo[l], K - b) - std::max(t.belowLo[l], b);
        keptHi[l] = std::min(t.belowHi[l] + t.atHi[l], K - b) - std::max(t.belowHi[l], b);
        shareLo[l] = static_cast<double>(keptLo[l]) / t.atLo[l];
        shareHi[l] = static_cast<double>(keptHi[l]) / t.atHi[l];
      }
      // The values strictly inside, in row order; the tied rows share the kept positions at a cut.
      for (int k = 0; k < K; ++k) {
        const float* x = in.updates.row(k) + c0;
        double cells = 0.0;
        for (std::size_t l = 0; l < width; ++l) {
          const bool inside = x[l] > t.lo[l] && x[l] < t.hi[l];
          sums[l] += inside ? static_cast<double>(x[l]) : 0.0;
          cells += inside ? 1.0 : x[l] == t.lo[l] ? shareLo[l] : x[l] == t.hi[l] ? shareHi[l] : 0.0;
        }
        keptCells[static_cast<std::size_t>(k)] += cells;
      }
    }
    for (std::size_t l = 0; l < width; ++l) {
      const double lo = t.lo[l], hi = t.hi[l];
      const double ends = t.lo[l] == t.hi[l] ? kept * lo : keptLo[l] * lo + keptHi[l] * hi;
      r.aggregate[c0 + l] = (sums[l] + ends) / kept;
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
