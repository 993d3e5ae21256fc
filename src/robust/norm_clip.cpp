// norm_clip: each update scaled to L2 norm at most fl.clip_norm, then the weighted mean (the norm
// bounding of Sun et al. 2019, "Can you really backdoor federated learning?"). A row's weight is its
// clip factor min(1, C / ||x_k||).
//
// By column blocks (robust/block_sums.hpp): the norms are the blocks' partial sums of squares added in
// block order; each block then combines its own columns.
#include <cmath>

#include "robust/block_sums.hpp"
#include "robust/column_blocks.hpp"

namespace fedsilo {

AggregateResult normClipOnBlocks(const AggregatorConfig& cfg, const LocalBlocks& mine,
                                 const std::vector<double>& weights, const JoinPartials& join, BlockSumsWorkspace& ws) {
  const auto K = static_cast<std::size_t>(mine.rows);
  double total = 0.0;
  for (std::size_t k = 0; k < K; ++k) total += weights[k];
  std::vector<double> partials;
  partials.reserve(mine.blocks.size() * K);
  for (const BlockRef& b : mine.blocks)
    for (int k = 0; k < mine.rows; ++k) partials.push_back(squaredNorm(b.row(k), b.width));
  const std::vector<double> squared = join(partials, K);
  AggregateResult r;
  r.selected.assign(K, 1);
  r.weight.resize(K);
  std::vector<double> coeff(K);
  for (std::size_t k = 0; k < K; ++k) {
    const double norm = std::sqrt(squared[k]);
    r.weight[k] = norm > cfg.clipNorm ? cfg.clipNorm / norm : 1.0;
    coeff[k] = weights[k] / total * r.weight[k];  // x 1.0 is exact: an unclipped row is the mean's term
  }
  combineLocalRows(mine, coeff, ws.aggregate);
  return r;
}

AggregateResult normClipAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  return aggregateBySummedBlocks(cfg, in, kColumnBlockWidth);
}

}  // namespace fedsilo
