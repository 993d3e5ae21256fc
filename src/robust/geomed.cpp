// geomed: the weighted geometric median argmin_z sum_k w_k ||z - x_k|| by the smoothed Weiszfeld
// iteration of RFA (Pillutla, Kakade, Harchaoui, IEEE TSP 2022): from the weighted mean, repeat
// beta_k = w_k / max(nu, ||z - x_k||), z = sum_k beta_k x_k / sum_k beta_k, at most
// fl.geomed_iterations times, stopping once the objective improves by less than nu times itself
// (nu = fl.geomed_eps, also the least distance, which keeps the step finite when z meets an update).
// A row's weight is its final Weiszfeld share beta_k / sum beta.
//
// Each iteration combines z and measures the distances the next step and the stopping test need; the
// first pass gives the mean and its distances, so the objective is never a pass of its own. By column
// blocks (robust/block_sums.hpp): each block combines its columns of z and gives its partial squared
// distances (squaredDistanceWide: many partial sums in a fixed order, so wide vectors and
// deterministic); the distances are the partials summed in block order, the same in every process, so
// every process takes the same step and stops at the same iteration.
#include <algorithm>
#include <cmath>

#include "robust/block_sums.hpp"
#include "robust/column_blocks.hpp"

namespace fedsilo {

namespace {

double objective(const std::vector<double>& weights, const std::vector<double>& dist) {
  double f = 0.0;
  for (std::size_t k = 0; k < dist.size(); ++k) f += weights[k] * dist[k];
  return f;
}

// z = sum_k coeff_k x_k over this process's columns, then every row's distance to z.
std::vector<double> combineAndMeasure(const LocalBlocks& mine, const std::vector<double>& coeff, std::vector<double>& z,
                                      const JoinPartials& join) {
  combineLocalRows(mine, coeff, z);
  std::vector<double> dist = squaredDistancesToPoint(mine, z, join);
  for (double& d : dist) d = std::sqrt(d);
  return dist;
}

}  // namespace

AggregateResult geomedOnBlocks(const AggregatorConfig& cfg, const LocalBlocks& mine, const std::vector<double>& weights,
                               const JoinPartials& join, BlockSumsWorkspace& ws) {
  const auto K = static_cast<std::size_t>(mine.rows);
  AggregateResult r;
  r.selected.assign(K, 1);
  double weightSum = 0.0;
  for (std::size_t k = 0; k < K; ++k) weightSum += weights[k];
  r.weight.resize(K);  // the mean's shares, should no iteration run
  for (std::size_t k = 0; k < K; ++k) r.weight[k] = weights[k] / weightSum;
  std::vector<double> dist = combineAndMeasure(mine, r.weight, ws.aggregate, join);  // z^0: the weighted mean
  double f = objective(weights, dist);
  const double nu = cfg.geomedEps;
  std::vector<double> beta(K);
  for (int t = 0; t < cfg.geomedIterations; ++t) {
    double total = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      beta[k] = weights[k] / std::max(nu, dist[k]);
      total += beta[k];
    }
    for (std::size_t k = 0; k < K; ++k) beta[k] /= total;
    dist = combineAndMeasure(mine, beta, ws.aggregate, join);
    r.weight = beta;
    const double previous = f;
    f = objective(weights, dist);
    if (previous - f <= nu * f) break;
  }
  return r;
}

AggregateResult geomedAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  return aggregateBySummedBlocks(cfg, in, kColumnBlockWidth);
}

}  // namespace fedsilo
