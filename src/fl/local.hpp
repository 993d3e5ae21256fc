// Local: no communication; every client trains its own model alone, for the same number of epochs
// per round as the federated algorithms, starting from the shared initial model.
#pragma once
#include <optional>
#include <unordered_map>

#include "fl/algorithm.hpp"

namespace fedsilo {

// Per-client parameter vectors for the clients of this rank (personal models, local layers).
class PersonalStore {
 public:
  bool has(int client) const { return models_.count(client) != 0; }
  std::vector<float>& get(int client, const std::vector<float>& init);  // creates from init on first use
  const std::vector<float>* find(int client) const;
  void put(int client, const float* params, std::size_t n);
  std::size_t size() const { return models_.size(); }
  const std::unordered_map<int, std::vector<float>>& all() const { return models_; }
  std::unordered_map<int, std::vector<float>>& all() { return models_; }
  // A copy of the client's entry (nullopt when it has none), and putting such a copy back (removing
  // the entry when there was none): how the driver undoes a dropped update (fl.skip_diverged).
  std::optional<std::vector<float>> snapshot(int client) const;
  void restore(int client, std::optional<std::vector<float>> saved);

 private:
  std::unordered_map<int, std::vector<float>> models_;
};

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
