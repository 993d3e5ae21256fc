#include "fl/algorithm.hpp"

#include <algorithm>
#include <cstring>

namespace fedsilo {

void applyWeightedMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, std::vector<float>& global) {
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (in.accOffset[b] < 0 || !(in.blockWeightSum[b] > 0.0)) continue;
    const double inv = 1.0 / in.blockWeightSum[b];
    const Index off = in.accOffset[b];
    for (Index i = 0; i < blocks[b].size; ++i)
      global[static_cast<std::size_t>(blocks[b].offset + i)] = static_cast<float>(in.acc->value(off + i) * inv);
  }
}

std::vector<int> Algorithm::selectClients(const FlContext& ctx, int round) const {
  const int K = static_cast<int>(ctx.clients.size());
  const int m = ctx.cfg.fl.clientsPerRound;
  std::vector<int> all(K);
  for (int k = 0; k < K; ++k) all[k] = k;
  if (m <= 0 || m >= K) return all;
  Rng rng(ctx.cfg.seed, -1, round, Purpose::Select);
  rng.shuffle(all);
  all.resize(m);
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<char> Algorithm::reducedBlocks(const FlContext& ctx, int) const {
  return std::vector<char>(ctx.blocks.size(), 1);
}

bool Algorithm::evalParams(const FlContext&, int, const std::vector<float>&, float*) const { return false; }

void Algorithm::loadEvalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const {
  if (!evalParams(ctx, client, global, out)) std::memcpy(out, global.data(), global.size() * sizeof(float));
}

}  // namespace fedsilo
