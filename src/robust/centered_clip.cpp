// centered_clip (Karimireddy, He, Jaggi, ICML 2021): from the centre v (the previous round's
// aggregate, which plays the part of the paper's server momentum; zeros in the first round), repeat
// fl.clip_iterations times v <- v + sum_k w_k (x_k - v) min(1, tau / ||x_k - v||) with the weights
// normalised to sum 1 (the paper's 1/n when the clients are equally weighted). A row's weight is its
// clip factor min(1, tau / ||x_k - v||) in the last iteration.
#include <algorithm>
#include <cmath>

#include "robust/aggregator.hpp"

namespace fedsilo {

AggregateResult centeredClipAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const auto K = static_cast<std::size_t>(in.updates.rows);
  const std::size_t n = in.updates.cols;
  double total = 0.0;
  for (std::size_t k = 0; k < K; ++k) total += in.weights[k];
  AggregateResult r;
  r.selected.assign(K, 1);
  r.weight.assign(K, 1.0);
  std::vector<double> v = in.center.empty() ? std::vector<double>(n, 0.0) : in.center;
  std::vector<double> step(n);
  for (int l = 0; l < cfg.clipIterations; ++l) {
    std::fill(step.begin(), step.end(), 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      const float* x = in.updates.row(static_cast<int>(k));
      const double norm = std::sqrt(squaredDistanceWide(x, v.data(), n));
      const double factor = norm > cfg.clipTau ? cfg.clipTau / norm : 1.0;
      r.weight[k] = factor;
      const double c = in.weights[k] / total * factor;
      for (std::size_t i = 0; i < n; ++i) step[i] += c * (static_cast<double>(x[i]) - v[i]);
    }
    for (std::size_t i = 0; i < n; ++i) v[i] += step[i];
  }
  r.aggregate = std::move(v);
  return r;
}

}  // namespace fedsilo
