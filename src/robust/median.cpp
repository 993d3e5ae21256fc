// median: the coordinate-wise median (Yin et al., ICML 2018), unweighted as in the paper; for an even
// count the mean of the two middle values. The middle values of every column come from a selection
// network over a tile of columns at once (robust/sorted_columns.hpp): no sort, and no selection loop
// per coordinate.
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
  const std::vector<int> middle = K % 2 ? std::vector<int>{static_cast<int>(mid)}
                                        : std::vector<int>{static_cast<int>(mid) - 1, static_cast<int>(mid)};
  forEachSelectedTile(in.updates, middle, [&](std::size_t c0, std::size_t width, const float* sorted) {
    for (std::size_t l = 0; l < width; ++l) {
      const double upper = static_cast<double>(sorted[mid * kLanes + l]);
      r.aggregate[c0 + l] = K % 2 ? upper : 0.5 * (static_cast<double>(sorted[(mid - 1) * kLanes + l]) + upper);
    }
  });
  return r;
}

}  // namespace fedsilo
