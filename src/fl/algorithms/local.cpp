#include "fl/algorithms/local.hpp"

#include <cstring>

namespace fedsilo {

std::vector<char> Local::reducedBlocks(const FlContext& ctx, int) const {
  return std::vector<char>(ctx.blocks.size(), 0);
}

void Local::clientUpdate(ClientContext& c, ClientUpdate& out) {
  // c.global is the shared initial model in every round: nothing is ever aggregated into it.
  std::vector<float>& mine = personal_.get(c.client.id, c.global);
  c.model.setParams(mine);
  Rng rng = c.shuffleRng();
  const TrainStats st = c.trainer.train(c.model, c.client.train, c.trainOptions(), rng, c.client.id, c.round);
  out.trainLoss = st.meanLoss;
  std::memcpy(mine.data(), c.model.params(), mine.size() * sizeof(float));
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
  out.vector = c.model.params();
}

std::unique_ptr<Algorithm> makeLocal(const ExperimentConfig&) { return std::make_unique<Local>(); }

}  // namespace fedsilo
