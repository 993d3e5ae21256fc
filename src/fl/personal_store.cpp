#include "fl/personal_store.hpp"

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
  if (saved)
    models_[client] = std::move(*saved);
  else
    models_.erase(client);
}

}  // namespace fedsilo
