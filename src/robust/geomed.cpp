// geomed: the weighted geometric median argmin_z sum_k w_k ||z - x_k|| by the smoothed Weiszfeld
// iteration of RFA (Pillutla, Kakade, Harchaoui, IEEE TSP 2022): from the weighted mean, repeat
// beta_k = w_k / max(nu, ||z - x_k||), z = sum_k beta_k x_k / sum_k beta_k, at most
// fl.geomed_iterations times, stopping once the objective improves by less than nu times itself
// (nu = fl.geomed_eps, also the least distance, which keeps the step finite when z meets an update).
// A row's weight is its final Weiszfeld share beta_k / sum beta.
#include <algorithm>
#include <cmath>

#include "robust/aggregator.hpp"

namespace fedsilo {

namespace {

// sum_k w_k ||z - x_k||, and the distances into `dist`.
double objective(const AggregateInput& in, const std::vector<double>& z, std::vector<double>& dist) {
  double f = 0.0;
  for (int k = 0; k < in.updates.rows; ++k) {
    dist[static_cast<std::size_t>(k)] = std::sqrt(squaredDistance(in.updates.row(k), z.data(), in.updates.cols));
    f += in.weights[static_cast<std::size_t>(k)] * dist[static_cast<std::size_t>(k)];
  }
  return f;
}

}  // namespace

AggregateResult geomedAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const auto K = static_cast<std::size_t>(in.updates.rows);
  AggregateResult r = meanAggregate(cfg, in);  // z^0, and the mean's shares should no iteration run
  std::vector<double> dist(K), beta(K);
  double f = objective(in, r.aggregate, dist);
  const double nu = cfg.geomedEps;
  for (int t = 0; t < cfg.geomedIterations; ++t) {
    double total = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      beta[k] = in.weights[k] / std::max(nu, dist[k]);
      total += beta[k];
    }
    for (std::size_t k = 0; k < K; ++k) beta[k] /= total;
    combineRows(in.updates, beta, r.aggregate);
    r.weight = beta;
    const double previous = f;
    f = objective(in, r.aggregate, dist);
    if (previous - f <= nu * f) break;
  }
  return r;
}

}  // namespace fedsilo
