// `public_only`, a baseline of the GEMS paper (Guha & Smith, arXiv 1805.07782, Sec. 4); the one-shot protocol
// and the public-data fine-tuning it shares with GEMS are in fl/algorithms/one_shot.hpp.
#pragma once
#include "fl/algorithms/one_shot.hpp"

namespace fedsilo {

// A model trained on the public sample alone, all layers from the shared initial model, with the
// fine-tuning recipe (gems.finetune_lr, gems.public_epochs, default gems.finetune_epochs): the paper's
// "raw" baseline. finetune/accuracy[s] is the model trained on size s.
class OneShotPublicOnly : public OneShot {
 public:
  explicit OneShotPublicOnly(const ExperimentConfig& cfg) : OneShot(cfg, "public_only") {}
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
};

std::unique_ptr<Algorithm> makeOneShotPublicOnly(const ExperimentConfig& cfg);

}  // namespace fedsilo
