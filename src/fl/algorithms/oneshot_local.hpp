// `oneshot_local`, a baseline of the GEMS paper (Guha & Smith, arXiv 1805.07782, Sec. 4); the one-shot protocol
// and the public-data fine-tuning it shares with GEMS are in fl/algorithms/one_shot.hpp.
#pragma once
#include <string>

#include "fl/algorithms/one_shot.hpp"

namespace fedsilo {

// Each client's local model alone; the figures are means over the K models on the test set.
class OneShotLocal : public OneShot {
 public:
  explicit OneShotLocal(const ExperimentConfig& cfg, const std::string& name = "oneshot_local");
  bool hasGlobalModel() const override { return false; }
  int payloadSize() const override { return static_cast<int>(numParams_); }
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;

 protected:
  double clientAccuracy(ClientContext& c) override;
  void packExtra(StatePacker& p) const override { p.doubles(memberAcc_); }
  void unpackExtra(StateReader& r) override { memberAcc_ = r.doubles(); }
  void recordExtra(const FlContext& ctx, RecordSink& sink) const override;
  Index numParams_ = 0;
  std::vector<double> memberAcc_;  // K x S: member k fine-tuned on size s
};

std::unique_ptr<Algorithm> makeOneShotLocal(const ExperimentConfig& cfg);

}  // namespace fedsilo
