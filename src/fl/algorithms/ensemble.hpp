// `ensemble`, a baseline of the GEMS paper (Guha & Smith, arXiv 1805.07782, Sec. 4); the one-shot protocol
// and the public-data fine-tuning it shares with GEMS are in fl/algorithms/one_shot.hpp.
#pragma once
#include "fl/algorithms/oneshot_local.hpp"

namespace fedsilo {

// Majority vote of the K local models (random tie-break, Purpose::Tie). Every evaluating rank needs
// all K models: they reach rank 0 as payload and every rank through serverState (K x P doubles).
class OneShotEnsemble : public OneShotLocal {
 public:
  explicit OneShotEnsemble(const ExperimentConfig& cfg);
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
  // A client's score is the vote's on its test split (not its own local model's).
  std::optional<EvalStats> evaluateClient(ClientContext& c) override;

 protected:
  double clientAccuracy(ClientContext& c) override;
  void packExtra(StatePacker& p) const override;
  void unpackExtra(StateReader& r) override;
  std::vector<double> members_;  // K x P
};

std::unique_ptr<Algorithm> makeOneShotEnsemble(const ExperimentConfig& cfg);

}  // namespace fedsilo
