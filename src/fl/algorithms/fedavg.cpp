#include "fl/algorithms/fedavg.hpp"

#include "fl/aggregation.hpp"

namespace fedsilo {

void FedAvg::trainAndSend(ClientContext& c, ClientUpdate& out, const GradientHook* hook) {
  Rng rng = c.shuffleRng();
  const TrainStats st = c.trainer.train(c.model, c.client.train, c.trainOptions(), rng, c.client.id, c.round, hook);
  out.trainLoss = st.meanLoss;
  out.blockWeight.assign(c.fl.blocks.size(), static_cast<double>(c.client.numTrain()));
  out.vector = c.model.params();
}

void FedAvg::clientUpdate(ClientContext& c, ClientUpdate& out) { trainAndSend(c, out); }

void FedAvg::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  applyWeightedMean(in, ctx.blocks, global);
}

std::unique_ptr<Algorithm> makeFedAvg(const ExperimentConfig&) { return std::make_unique<FedAvg>(); }

}  // namespace fedsilo
