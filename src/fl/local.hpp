// Local: no communication; every client trains its own model alone, for the same number of epochs
// per round as the federated algorithms, starting from the shared initial model.
#pragma once
#include "fl/algorithm.hpp"
#include "fl/personal_store.hpp"

namespace fedsilo {

class Local : public Algorithm {
 public:
  std::string name() const override { return "local"; }
  bool hasGlobalModel() const override { return false; }
  std::vector<char> reducedBlocks(const FlContext& ctx, int round) const override;
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override {}
  bool evalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const override;
  void checkpoint(StateArchive& ar) override {
    Algorithm::checkpoint(ar);
    ar.clientFloats("personal", personal_.all());
  }
  PersonalStore* personalStore() override { return &personal_; }

 private:
  std::vector<float> init_;
  PersonalStore personal_;
};

std::unique_ptr<Algorithm> makeLocal(const ExperimentConfig& cfg);

}  // namespace fedsilo
