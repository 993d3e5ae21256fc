// geomed: the weighted geometric median argmin_z sum_k w_k ||z - x_k|| by the smoothed Weiszfeld
// iteration of RFA (Pillutla, Kakade, Harchaoui, IEEE TSP 2022): from the weighted mean, repeat
// beta_k = w_k / max(nu, ||z - x_k||), z = sum_k beta_k x_k / sum_k beta_k, at most
// fl.geomed_iterations times, stopping once the objective improves by less than nu times itself
// (nu = fl.geomed_eps, also the least distance, which keeps the step finite when z meets an update).
// A row's weight is its final Weiszfeld share beta_k / sum beta.
//
// Each iteration is one pass over the update matrix: a block of columns of z is combined from the rows
// and, while the block's rows are still in cache, every row's squared distance to it is accumulated
// (the distances the next step and the stopping test need). Fixed block and row order: deterministic.
#include <algorithm>
#include <cmath>

#include "robust/aggregator.hpp"

namespace fedsilo {

namespace {

// z = sum_k coeff_k x_k, and dist_k = ||z - x_k||, in one column-blocked pass.
void combineAndMeasure(const UpdateMatrix& u, const std::vector<double>& coeff, std::vector<double>& z,
                       std::vector<double>& dist) {
  const auto K = static_cast<std::size_t>(u.rows);
  z.assign(u.cols, 0.0);
  std::vector<double> squared(K, 0.0);
  for (std::size_t c0 = 0; c0 < u.cols; c0 += kColumnBlock) {
    const std::size_t c1 = std::min(u.cols, c0 + kColumnBlock);
    for (std::size_t k = 0; k < K; ++k) {
      const double c = coeff[k];
      if (c == 0.0) continue;
      const float* x = u.row(static_cast<int>(k));
      for (std::size_t i = c0; i < c1; ++i) z[i] += c * static_cast<double>(x[i]);
    }
    for (std::size_t k = 0; k < K; ++k)
      squared[k] += squaredDistanceWide(u.row(static_cast<int>(k)) + c0, z.data() + c0, c1 - c0);
  }
  for (std::size_t k = 0; k < K; ++k) dist[k] = std::sqrt(squared[k]);
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
