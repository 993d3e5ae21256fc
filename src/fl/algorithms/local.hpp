// Local: no communication; every client trains its own model alone, for the same number of epochs
// per round as the federated algorithms, starting from the shared initial model. A client that has
// not trained yet is evaluated with that initial model (the global model, which never changes).
#pragma once
#include "fl/algorithm.hpp"
#include "fl/personal_store.hpp"

namespace fedsilo {

class Local : public Algorithm {
 public:
  std::string name() const override { return "local"; }
  bool hasGlobalModel() const override { return false; }
  std::vector<char> reducedBlocks(const FlContext& ctx, int round) const override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override {}
  PersonalStore* personalStore() override { return &personal_; }

 private:
  PersonalStore personal_;  // each local client's model
};

std::unique_ptr<Algorithm> makeLocal(const ExperimentConfig& cfg);

}  // namespace fedsilo
