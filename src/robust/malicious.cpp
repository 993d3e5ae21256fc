// Which silos are malicious: fixed for the whole run.
#include "core/rng.hpp"
#include "robust/attack.hpp"

namespace fedsilo {

std::vector<char> chooseMalicious(const AttackConfig& cfg, int numClients, std::uint64_t seed) {
  std::vector<char> flags(static_cast<std::size_t>(numClients), 0);
  if (!cfg.any()) return flags;
  if (!cfg.clientIds.empty()) {
    for (int k : cfg.clientIds) flags[static_cast<std::size_t>(k)] = 1;
    return flags;
  }
  std::vector<int> ids(static_cast<std::size_t>(numClients));
  for (int k = 0; k < numClients; ++k) ids[static_cast<std::size_t>(k)] = k;
  Rng rng(seed, -1, -1, Purpose::AttackClients);
  rng.shuffle(ids);
  for (int i = 0; i < cfg.clients && i < numClients; ++i)
    flags[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)])] = 1;
  return flags;
}

}  // namespace fedsilo
