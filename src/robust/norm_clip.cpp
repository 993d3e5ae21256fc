// norm_clip: each update scaled to L2 norm at most fl.clip_norm, then the weighted mean (the norm
// bounding of Sun et al. 2019, "Can you really backdoor federated learning?"). A row's weight is its
// clip factor min(1, C / ||x_k||).
#include <cmath>

#include "robust/aggregator.hpp"

namespace fedsilo {

AggregateResult normClipAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const auto K = static_cast<std::size_t>(in.updates.rows);
  double total = 0.0;
  for (std::size_t k = 0; k < K; ++k) total += in.weights[k];
  AggregateResult r;
  r.selected.assign(K, 1);
  r.weight.resize(K);
  std::vector<double> coeff(K);
  for (std::size_t k = 0; k < K; ++k) {
    const double norm = std::sqrt(squaredNorm(in.updates.row(static_cast<int>(k)), in.updates.cols));
    r.weight[k] = norm > cfg.clipNorm ? cfg.clipNorm / norm : 1.0;
    coeff[k] = in.weights[k] / total * r.weight[k];  // x 1.0 is exact: an unclipped row is the mean's term
  }
  combineRows(in.updates, coeff, r.aggregate);
  return r;
}

}  // namespace fedsilo
