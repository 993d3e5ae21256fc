#include "robust/column_blocks.hpp"

#include <algorithm>
#include <cmath>

#include "core/config.hpp"
#include "core/error.hpp"

namespace fedsilo {

bool aggregatesByColumns(AggregatorKind aggregator) {
  return aggregator == AggregatorKind::Mean || aggregator == AggregatorKind::Median ||
         aggregator == AggregatorKind::TrimmedMean;
}

// gaussian draws noise of the whole row's norm, the only payload that reads other coordinates.
bool attacksByColumns(AttackKind attack) { return attack != AttackKind::Gaussian; }

AggregateResult attackAndAggregateBlock(const RobustConfig& cfg, const AttackRound& round, UpdateMatrix& block,
                                        const std::vector<double>& weights) {
  FEDSILO_ASSERT(aggregatesByColumns(cfg.aggregator.kind) && attacksByColumns(cfg.attack.kind),
                 "column blocks with fl.aggregator = ", cfg.aggregator.kind, ", attack.kind = ", cfg.attack.kind);
  applyAttack(cfg.attack, round, block);
  const std::vector<double> noCenter;  // only centered_clip reads it
  return aggregate(cfg.aggregator, AggregateInput{block, weights, noCenter});
}

AggregateResult combineColumnBlocks(const std::vector<AggregateResult>& blocks) {
  AggregateResult r;
  if (blocks.empty()) return r;
  const std::size_t K = blocks[0].selected.size();
  std::size_t cols = 0;
  for (const AggregateResult& b : blocks) cols += b.aggregate.size();
  r.aggregate.reserve(cols);
  r.selected.assign(K, 0);
  r.weight.assign(K, 0.0);
  for (const AggregateResult& b : blocks) {
    r.aggregate.insert(r.aggregate.end(), b.aggregate.begin(), b.aggregate.end());
    const double share = static_cast<double>(b.aggregate.size()) / static_cast<double>(cols);
    for (std::size_t k = 0; k < K; ++k) {
      r.selected[k] = r.selected[k] || b.selected[k];
      r.weight[k] += share * b.weight[k];
    }
  }
  // Weights the blocks agree on (the mean's, the median's NaN) are kept as they are, not re-averaged.
  for (std::size_t k = 0; k < K; ++k) {
    const double w0 = blocks[0].weight[k];
    const bool same = std::all_of(blocks.begin(), blocks.end(), [&](const AggregateResult& b) {
      return b.weight[k] == w0 || (std::isnan(b.weight[k]) && std::isnan(w0));
    });
    if (same) r.weight[k] = w0;
  }
  return r;
}

}  // namespace fedsilo
