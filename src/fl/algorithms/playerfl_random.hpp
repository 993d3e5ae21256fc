// PLayer-FL-Random (the PLayer-FL paper's ablation; gaiters-aerials/player_fl helper.py [V]): the same
// partial federation as PLayer-FL, but the number of federated blocks is drawn once, uniformly from
// 1..L-1 with Rng(seed, -1, -1, SplitLayer), redrawn while it equals PLayer-FL's own split (computed
// exactly as `playerfl` would, from the round-0 sensitivity or playerfl.split). Options: playerfl.*.
#pragma once
#include "fl/algorithms/playerfl.hpp"

namespace fedsilo {

// The draw itself (pure): uniform in [1, L-1], redrawn while equal to `avoid`. Needs at least one
// admissible value (ConfigError is raised at setup before this is reached).
int drawRandomSplit(std::uint64_t seed, int L, int avoid);

class PlayerFlRandom : public PlayerFl {
 public:
  using PlayerFl::PlayerFl;
  std::string name() const override { return "playerfl_random"; }
  void setup(const FlContext& ctx, std::vector<float>& global) override;

 protected:
  int chooseSplit(int playerSplit) const override { return drawRandomSplit(seed_, L_, playerSplit); }
  const char* splitSource() const override { return "random"; }
};

std::unique_ptr<Algorithm> makePlayerFlRandom(const ExperimentConfig& cfg);

}  // namespace fedsilo
