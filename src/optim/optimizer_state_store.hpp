// Per-client optimizer state that persists across rounds (train.optimizer_state = keep): one
// OptimizerState per (client id, model role), for the clients of this rank. The round driver owns
// the store, hands each training client its entries (ClientContext::trainOptions) and saves it in
// checkpoints by client id, so that it restores at any rank count. Algorithms that train one model
// per client never see it; those that train a second, personal model (Ditto) ask for that model's
// role, so that each model keeps its own moments, as each keeps its own optimizer in PyTorch code.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/state_archive.hpp"
#include "optim/optimizer.hpp"

namespace fedsilo {

enum class ModelRole : int {
  Shared = 0,    // the model a client trains from the global one and sends (every algorithm)
  Personal = 1,  // a second model the client trains for itself (Ditto's personal model)
};
constexpr int kModelRoles = 2;

class OptimizerStateStore {
 public:
  // The client's state for `role`, created empty on first use.
  OptimizerState& get(int client, ModelRole role) { return states_[{client, static_cast<int>(role)}]; }
  const OptimizerState* find(int client, ModelRole role) const;
  std::size_t size() const { return states_.size(); }

  // Copies of the client's states (nullopt: none), and putting them back (an absent one is removed):
  // how the driver undoes a dropped update (fl.skip_diverged).
  using Snapshot = std::vector<std::optional<OptimizerState>>;
  Snapshot snapshot(int client) const;
  void restore(int client, Snapshot saved);

  // Saves or restores every entry under `prefix`/<role>/{moments,layout} (collective, by client id).
  void checkpoint(StateArchive& ar, const std::string& prefix);

 private:
  std::map<std::pair<int, int>, OptimizerState> states_;
};

}  // namespace fedsilo
