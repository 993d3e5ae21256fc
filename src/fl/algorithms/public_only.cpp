#include "fl/algorithms/public_only.hpp"

#include "core/types.hpp"

#include <cstring>

namespace fedsilo {

void OneShotPublicOnly::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
}

void OneShotPublicOnly::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  (void)in;
  Workbench& b = bench(ctx);
  Model& m = *b.model;
  // A model trained from the shared initial model on the first S public samples alone, all layers,
  // with the fine-tuning recipe.
  TrainOptions t = TrainOptions::from(ctx.cfg.train);
  t.epochs = opt_.publicEpochs > 0 ? opt_.publicEpochs : opt_.finetuneEpochs;
  if (opt_.finetuneLr > 0.0) t.optimizer.lr = opt_.finetuneLr;
  auto trainOn = [&](int S) {
    std::memcpy(m.params(), init_.data(), init_.size() * sizeof(float));
    const IndexList sample = publicSample(S);
    if (sample.empty()) return;
    Rng rng(ctx.cfg.seed, -1, 0, Purpose::Shuffle, static_cast<std::uint64_t>(S));
    m.setRandomContext(ctx.cfg.seed, -1, 0);
    b.trainer->train(m, sample, t, rng, -1, 0);
  };
  sweepAcc_.clear();
  for (int S : opt_.finetuneSizes) {
    trainOn(S);
    sweepAcc_.push_back(testAccuracy(ctx, m, *b.trainer));
  }
  trainOn(0);
  accBefore_ = testAccuracy(ctx, m, *b.trainer);
  trainOn(opt_.publicSamples);
  accAfter_ = opt_.publicSamples > 0 ? testAccuracy(ctx, m, *b.trainer) : kNaN;
  global.assign(m.params(), m.params() + m.numParams());
}

std::unique_ptr<Algorithm> makeOneShotPublicOnly(const ExperimentConfig& cfg) {
  return std::make_unique<OneShotPublicOnly>(cfg);
}

}  // namespace fedsilo
