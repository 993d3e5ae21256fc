#include "fl/algorithm.hpp"

#include <algorithm>
#include <cstring>

namespace fedsilo {

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

bool Algorithm::evalParams(const FlContext&, int client, const std::vector<float>&, float* out) const {
  const PersonalStore* store = personalStore();
  const std::vector<float>* mine = store ? store->find(client) : nullptr;
  if (!mine) return false;
  std::memcpy(out, mine->data(), mine->size() * sizeof(float));
  return true;
}

void Algorithm::loadEvalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const {
  if (!evalParams(ctx, client, global, out)) std::memcpy(out, global.data(), global.size() * sizeof(float));
}

void Algorithm::checkpoint(StateArchive& ar) {
  std::vector<double> state = serverState();
  ar.doubles("server_state", state);
  if (!ar.saving()) setServerState(state);
  if (PersonalStore* store = personalStore()) ar.clientFloats("personal", store->all());
}

}  // namespace fedsilo
