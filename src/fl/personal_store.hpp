// The per-client state personalised algorithms keep across rounds (Algorithm::personalStore()).
#pragma once
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

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

}  // namespace fedsilo
