// mean: the weighted mean sum_k w_k x_k / sum_k w_k (FedAvg's server step on the updates).
#include <cmath>

#include "robust/aggregator.hpp"

namespace fedsilo {

AggregateResult meanAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  (void)cfg;
  const int K = in.updates.rows;
  double total = 0.0;
  for (int k = 0; k < K; ++k) total += in.weights[static_cast<std::size_t>(k)];
  AggregateResult r;
  r.selected.assign(static_cast<std::size_t>(K), 1);
  r.weight.resize(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) r.weight[static_cast<std::size_t>(k)] = in.weights[static_cast<std::size_t>(k)] / total;
  combineRows(in.updates, r.weight, r.aggregate);
  return r;
}

}  // namespace fedsilo
