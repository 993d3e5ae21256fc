// `average`, a baseline of the GEMS paper (Guha & Smith, arXiv 1805.07782, Sec. 4); the one-shot protocol
// and the public-data fine-tuning it shares with GEMS are in fl/algorithms/one_shot.hpp.
#pragma once
#include "fl/algorithms/one_shot.hpp"

namespace fedsilo {

// Naive average: w = (1/K) sum_k w_k (unweighted, as in the paper), through the driver's exact mean.
class OneShotAverage : public OneShot {
 public:
  explicit OneShotAverage(const ExperimentConfig& cfg) : OneShot(cfg, "average") {}
  std::vector<char> reducedBlocks(const FlContext& ctx, int round) const override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
};

std::unique_ptr<Algorithm> makeOneShotAverage(const ExperimentConfig& cfg);

}  // namespace fedsilo
