// median: the coordinate-wise median (Yin et al., ICML 2018), unweighted as in the paper; for an even
// count the mean of the two middle values. Every column sorted by a sorting network over a tile of
// columns at once (robust/sorted_columns.hpp), not one std::sort per coordinate.
#include "core/types.hpp"
#include "robust/aggregator.hpp"
#include "robust/sorted_columns.hpp"

namespace fedsilo {

AggregateResult medianAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  (void)cfg;
  const auto K = static_cast<std::size_t>(in.updates.rows);
  constexpr std::size_t kLanes = kSortedLanes;
  AggregateResult r;
  r.selected.assign(K, 1);
  r.weight.assign(K, kNaN);
  r.aggregate.resize(in.updates.cols);
  const std::size_t mid = K / 2;
  forEachSortedTile(in.updates, [&](std::size_t c0, std::size_t width, const float* sorted) {
    for (std::size_t l = 0; l < width; ++l) {
      const double upper = static_cast<double>(sorted[mid * kLanes + l]);
      r.aggregate[c0 + l] = K % 2 ? upper : 0.5 * (static_cast<double>(sorted[(mid - 1) * kLanes + l]) + upper);
    }
  });
  return r;
}

}  // namespace fedsilo
