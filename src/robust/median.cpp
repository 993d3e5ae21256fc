// median: the coordinate-wise median (Yin et al., ICML 2018), unweighted as in the paper; for an even
// count the mean of the two middle values. Found by selection (std::nth_element, O(K) per coordinate),
// not by sorting.
#include <algorithm>

#include "core/types.hpp"
#include "robust/aggregator.hpp"
#include "robust/column_tiles.hpp"

namespace fedsilo {

AggregateResult medianAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  (void)cfg;
  const auto K = static_cast<std::size_t>(in.updates.rows);
  AggregateResult r;
  r.selected.assign(K, 1);
  r.weight.assign(K, kNaN);
  r.aggregate.resize(in.updates.cols);
  const std::size_t mid = K / 2;
  forEachColumn(in.updates, [&](std::size_t c, double* v) {
    std::nth_element(v, v + mid, v + K);
    double m = v[mid];
    // Even K: the lower middle is the largest of the values left of mid.
    if (K % 2 == 0) m = 0.5 * (m + *std::max_element(v, v + mid));
    r.aggregate[c] = m;
  });
  return r;
}

}  // namespace fedsilo
