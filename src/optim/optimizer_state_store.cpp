#include "optim/optimizer_state_store.hpp"

#include <unordered_map>

#include "core/error.hpp"

namespace fedsilo {

const OptimizerState* OptimizerStateStore::find(int client, ModelRole role) const {
  const auto it = states_.find({client, static_cast<int>(role)});
  return it == states_.end() ? nullptr : &it->second;
}

OptimizerStateStore::Snapshot OptimizerStateStore::snapshot(int client) const {
  Snapshot saved(kModelRoles);
  for (int r = 0; r < kModelRoles; ++r)
    if (const OptimizerState* s = find(client, static_cast<ModelRole>(r))) saved[r] = *s;
  return saved;
}

void OptimizerStateStore::restore(int client, Snapshot saved) {
  FEDSILO_ASSERT(saved.size() == static_cast<std::size_t>(kModelRoles));
  for (int r = 0; r < kModelRoles; ++r) {
    if (saved[r])
      states_[{client, r}] = std::move(*saved[r]);
    else
      states_.erase({client, r});
  }
}

namespace {

// One state as two per-client vectors: the moments concatenated, and the layout
// [first size, second size, max size, steps of every tensor...] (doubles hold step counts exactly).
void pack(const OptimizerState& s, std::vector<float>& moments, std::vector<double>& layout) {
  moments.clear();
  moments.insert(moments.end(), s.first.begin(), s.first.end());
  moments.insert(moments.end(), s.second.begin(), s.second.end());
  moments.insert(moments.end(), s.maxSecond.begin(), s.maxSecond.end());
  layout = {static_cast<double>(s.first.size()), static_cast<double>(s.second.size()),
            static_cast<double>(s.maxSecond.size())};
  for (std::int64_t t : s.steps) layout.push_back(static_cast<double>(t));
}

OptimizerState unpack(int client, const std::vector<float>& moments, const std::vector<double>& layout) {
  FEDSILO_ASSERT(layout.size() >= 3, "checkpoint: optimizer state of client ", client, " has no layout");
  const auto a = static_cast<std::size_t>(layout[0]), b = static_cast<std::size_t>(layout[1]),
             c = static_cast<std::size_t>(layout[2]);
  FEDSILO_ASSERT(a + b + c == moments.size(), "checkpoint: optimizer state of client ", client, " holds ",
                 moments.size(), " values, its layout says ", a + b + c);
  OptimizerState s;
  const auto secondBegin = moments.begin() + static_cast<std::ptrdiff_t>(a);
  const auto maxSecondBegin = secondBegin + static_cast<std::ptrdiff_t>(b);
  s.first.assign(moments.begin(), secondBegin);
  s.second.assign(secondBegin, maxSecondBegin);
  s.maxSecond.assign(maxSecondBegin, moments.end());
  for (std::size_t i = 3; i < layout.size(); ++i) s.steps.push_back(static_cast<std::int64_t>(layout[i]));
  return s;
}

}  // namespace

void OptimizerStateStore::checkpoint(StateArchive& ar, const std::string& prefix) {
  for (int r = 0; r < kModelRoles; ++r) {
    std::unordered_map<int, std::vector<float>> moments;
    std::unordered_map<int, std::vector<double>> layout;
    if (ar.saving())
      for (const auto& [key, state] : states_)
        if (key.second == r) pack(state, moments[key.first], layout[key.first]);
    const std::string name = prefix + "/role" + std::to_string(r);
    ar.clientFloats(name + "/moments", moments);
    ar.clientDoubles(name + "/layout", layout);
    if (ar.saving()) continue;
    for (auto& [client, values] : layout) {
      const auto m = moments.find(client);
      FEDSILO_ASSERT(m != moments.end(), "checkpoint: optimizer moments of client ", client, " missing");
      states_[{client, r}] = unpack(client, m->second, values);
    }
  }
}

}  // namespace fedsilo
