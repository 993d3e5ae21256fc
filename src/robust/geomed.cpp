// geomed: the weighted geometric median argmin_z sum_k w_k ||z - x_k|| by the smoothed Weiszfeld
// iteration of RFA (Pillutla, Kakade, Harchaoui, IEEE TSP 2022): from the weighted mean, repeat
// beta_k = w_k / max(nu, ||z - x_k||), z = sum_k beta_k x_k / sum_k beta_k, at most
// fl.geomed_iterations times, stopping once the objective improves by less than nu times itself
// (nu = fl.geomed_eps, also the least distance, which keeps the step finite when z meets an update).
// A row's weight is its final Weiszfeld share beta_k / sum beta.
//
// Each iteration combines z and measures the distances the next step and the stopping test need
// (squaredDistanceWide: many partial sums in a fixed order, so wide vectors and deterministic); the
// first pass gives the mean and its distances, so the objective is never a pass of its own.
#include <algorithm>
#include <cmath>

#include "robust/aggregator.hpp"

namespace fedsilo {

namespace {

// z = sum_k coeff_k x_k, then dist_k = ||z - x_k||: two sequential passes over the rows.
void combineAndMeasure(const UpdateMatrix& u, const std::vector<double>& coeff, std::vector<double>& z,
                       std::vector<double>& dist) {
  combineRows(u, coeff, z);
  for (int k = 0; k < u.rows; ++k)
    dist[static_cast<std::size_t>(k)] = std::sqrt(squaredDistanceWide(u.row(k), z.data(), u.cols));
}

double objective(const std::vector<double>& weights, const std::vector<double>& dist) {
  double f = 0.0;
  for (std::size_t k = 0; k < dist.size(); ++k) f += weights[k] * dist[k];
  return f;
}

}  // namespace

AggregateResult geomedAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const auto K = static_cast<std::size_t>(in.updates.rows);
  AggregateResult r;
  r.selected.assign(K, 1);
  double weightSum = 0.0;
  for (std::size_t k = 0; k < K; ++k) weightSum += in.weights[k];
  r.weight.resize(K);  // the mean's shares, should no iteration run
  for (std::size_t k = 0; k < K; ++k) r.weight[k] = in.weights[k] / weightSum;
  std::vector<double> dist(K), beta(K);
  combineAndMeasure(in.updates, r.weight, r.aggregate, dist);  // z^0: the weighted mean
  double f = objective(in.weights, dist);
  const double nu = cfg.geomedEps;
  for (int t = 0; t < cfg.geomedIterations; ++t) {
    double total = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      beta[k] = in.weights[k] / std::max(nu, dist[k]);
      total += beta[k];
    }
    for (std::size_t k = 0; k < K; ++k) beta[k] /= total;
    combineAndMeasure(in.updates, beta, r.aggregate, dist);
    r.weight = beta;
    const double previous = f;
    f = objective(in.weights, dist);
    if (previous - f <= nu * f) break;
  }
  return r;
}

}  // namespace fedsilo
