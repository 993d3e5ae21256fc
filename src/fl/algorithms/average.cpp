#include "fl/algorithms/average.hpp"

#include "fl/aggregation.hpp"

namespace fedsilo {

std::vector<char> OneShotAverage::reducedBlocks(const FlContext& ctx, int) const {
  return std::vector<char>(ctx.blocks.size(), 1);
}

void OneShotAverage::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.trainLoss = trainLocal(c);
  out.blockWeight.assign(c.fl.blocks.size(), 1.0);  // unweighted: the paper's naive average
  out.vector = c.model.params();
}

void OneShotAverage::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  requireAllClients(static_cast<std::size_t>(in.blockWeightSum.empty() ? 0.0 : in.blockWeightSum[0]), ctx);
  applyWeightedMean(in, ctx.blocks, global);
  Workbench& b = bench(ctx);
  global = sweep(ctx, *b.model, *b.trainer, global);
}

std::unique_ptr<Algorithm> makeOneShotAverage(const ExperimentConfig& cfg) {
  return std::make_unique<OneShotAverage>(cfg);
}

}  // namespace fedsilo
