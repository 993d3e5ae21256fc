// centered_clip (Karimireddy, He, Jaggi, ICML 2021): from the centre v (the previous round's
// aggregate, which plays the part of the paper's server momentum; zeros in the first round), repeat
// fl.clip_iterations times v <- v + sum_k w_k (x_k - v) min(1, tau / ||x_k - v||) with the weights
// normalised to sum 1 (the paper's 1/n when the clients are equally weighted). A row's weight is its
// clip factor min(1, tau / ||x_k - v||) in the last iteration.
//
// By column blocks (robust/block_sums.hpp): the norms ||x_k - v|| are the blocks' partial squared
// distances summed in block order; each block then moves its own columns of v.
#include <algorithm>
#include <cmath>

#include "robust/block_sums.hpp"
#include "robust/column_blocks.hpp"

namespace fedsilo {

namespace {

// v_i += sum_k coeff_k (x_ki - v_i) over this process's columns, rows in order.
void stepTowardsRows(const LocalBlocks& mine, const std::vector<double>& coeff, std::vector<double>& v) {
  std::vector<double> step;
  double* at = v.data();
  for (const BlockRef& b : mine.blocks) {
    step.assign(b.width, 0.0);
    for (int k = 0; k < mine.rows; ++k) {
      const double c = coeff[static_cast<std::size_t>(k)];
      const float* x = b.row(k);
      for (std::size_t i = 0; i < b.width; ++i) step[i] += c * (static_cast<double>(x[i]) - at[i]);
    }
    for (std::size_t i = 0; i < b.width; ++i) at[i] += step[i];
    at += b.width;
  }
}

}  // namespace

AggregateResult centeredClipOnBlocks(const AggregatorConfig& cfg, const LocalBlocks& mine,
                                     const std::vector<double>& weights, const std::vector<double>& center,
                                     const JoinPartials& join, BlockSumsWorkspace& ws) {
  const auto K = static_cast<std::size_t>(mine.rows);
  double total = 0.0;
  for (std::size_t k = 0; k < K; ++k) total += weights[k];
  AggregateResult r;
  r.selected.assign(K, 1);
  r.weight.assign(K, 1.0);
  std::vector<double>& v = ws.aggregate;
  if (center.empty())
    v.assign(mine.localCols(), 0.0);
  else
    v.assign(center.begin(), center.end());
  std::vector<double> coeff(K);
  for (int l = 0; l < cfg.clipIterations; ++l) {
    const std::vector<double> squared = squaredDistancesToPoint(mine, v, join);
    for (std::size_t k = 0; k < K; ++k) {
      const double norm = std::sqrt(squared[k]);
      r.weight[k] = norm > cfg.clipTau ? cfg.clipTau / norm : 1.0;
      coeff[k] = weights[k] / total * r.weight[k];
    }
    stepTowardsRows(mine, coeff, v);
  }
  return r;
}

AggregateResult centeredClipAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  return aggregateBySummedBlocks(cfg, in, kColumnBlockWidth);
}

}  // namespace fedsilo
