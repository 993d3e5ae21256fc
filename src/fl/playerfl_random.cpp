#include "fl/playerfl_random.hpp"

#include "core/error.hpp"

namespace fedsilo {

int drawRandomSplit(std::uint64_t seed, int L, int avoid) {
  FEDSILO_ASSERT(L >= 3 || (L == 2 && avoid != 1), "no random split in [1, ", L - 1, "] differs from ", avoid);
  Rng rng(seed, -1, -1, Purpose::SplitLayer);
  int s = 0;
  do {
    s = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(L - 1)));
  } while (s == avoid);
  return s;
}

void PlayerFlRandom::setup(const FlContext& ctx, std::vector<float>& global) {
  const int L = ctx.numBlocks();
  // Admissible splits: 1..L-1 without PLayer-FL's split, which (in auto mode) may be any of 1..L-1.
  const std::string spec = opt_.split;
  const bool explicitFull = L >= 1 && resolveSplitOption(spec, ctx.blocks, nameOf(ctx.cfg.model.name)) == L;
  if (L < 3 && !(L == 2 && explicitFull)) {
    std::string names;
    for (const auto& b : ctx.blocks) names += (names.empty() ? "" : ", ") + b.name;
    throw ConfigError(fmt("algorithm = playerfl_random: model = ", ctx.cfg.model.name, " has ", L, " layer block(s) (",
                          names, "); a random split in 1..L-1 that differs from PLayer-FL's needs at least 3 blocks"));
  }
  PlayerFl::setup(ctx, global);
}

std::unique_ptr<Algorithm> makePlayerFlRandom(const ExperimentConfig& cfg) {
  return std::make_unique<PlayerFlRandom>(PlayerFlOptions::parse(cfg.algo));
}

}  // namespace fedsilo
