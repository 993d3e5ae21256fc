#include "fl/local.hpp"

#include <cstring>

namespace fedsilo {

std::vector<float>& PersonalStore::get(int client, const std::vector<float>& init) {
  auto it = models_.find(client);
  if (it == models_.end()) it = models_.emplace(client, init).first;
  return it->second;
}

const std::vector<float>* PersonalStore::find(int client) const {
  auto it = models_.find(client);
  return it == models_.end() ? nullptr : &it->second;
}

void PersonalStore::put(int client, const float* params, std::size_t n) {
  auto& v = models_[client];
  v.assign(params, params + n);
}

std::optional<std::vector<float>> PersonalStore::snapshot(int client) const {
  const std::vector<float>* p = find(client);
  return p ? std::optional<std::vector<float>>(*p) : std::nullopt;
}

void PersonalStore::restore(int client, std::optional<std::vector<float>> saved) {
  if (saved) models_[client] = std::move(*saved);
  else models_.erase(client);
}

std::vector<char> Local::reducedBlocks(const FlContext& ctx, int) const { return std::vector<char>(ctx.blocks.size(), 0); }

void Local::setup(const FlContext&, std::vector<float>& global) { init_ = global; }

void Local::clientUpdate(ClientContext& c, ClientUpdate& out) {
  std::vector<float>& mine = personal_.get(c.client.id, init_);
  std::memcpy(c.model.params(), mine.data(), mine.size() * sizeof(float));
  Rng rng = c.shuffleRng();
  const TrainStats st = c.trainer.train(c.model, c.client.train, c.trainOptions(), rng, c.client.id, c.round);
  out.trainLoss = st.meanLoss;
  std::memcpy(mine.data(), c.model.params(), mine.size() * sizeof(float));
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
  out.vector = c.model.params();
}

bool Local::evalParams(const FlContext&, int client, const std::vector<float>&, float* out) const {
  const std::vector<float>* p = personal_.find(client);
  const std::vector<float>& src = p ? *p : init_;
  std::memcpy(out, src.data(), src.size() * sizeof(float));
  return true;
}

std::unique_ptr<Algorithm> makeLocal(const ExperimentConfig&) { return std::make_unique<Local>(); }

}  // namespace fedsilo
