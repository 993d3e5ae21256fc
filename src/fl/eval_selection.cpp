#include "fl/eval_selection.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/types.hpp"

namespace fedsilo {

namespace {
constexpr std::size_t kFigures = 6;  // checkpoint row: round, then the five figures
}  // namespace

ClientEvaluation::ClientEvaluation()
    : testAccuracy(kNaN), testF1(kNaN), testLoss(kNaN), valAccuracy(kNaN), valLoss(kNaN) {}

ClientSelection::ClientSelection(const EvalConfig& cfg, std::vector<int> clients, bool keepParams)
    : select_(cfg.select),
      metric_(cfg.selectMetric),
      clients_(std::move(clients)),
      keepParams_(keepParams),
      figures_(clients_.size()),
      rounds_(clients_.size(), -1) {}

double ClientSelection::score(const ClientEvaluation& e) const {
  return metric_ == SelectMetric::Accuracy ? e.valAccuracy : -e.valLoss;
}

bool ClientSelection::replaces(int i, const ClientEvaluation& e) const {
  if (select_ == EvalSelect::Final || rounds_[static_cast<std::size_t>(i)] < 0) return true;
  const double kept = score(selected(i)), offered = score(e);
  if (!std::isfinite(kept)) return true;
  return std::isfinite(offered) && offered > kept;
}

void ClientSelection::offer(int i, int round, const ClientEvaluation& e, const float* params, std::size_t numParams) {
  FEDSILO_ASSERT(i >= 0 && static_cast<std::size_t>(i) < figures_.size(), "client slot ", i, " out of range");
  if (!replaces(i, e)) return;
  figures_[static_cast<std::size_t>(i)] = e;
  rounds_[static_cast<std::size_t>(i)] = round;
  if (keepParams_ && params)
    params_[i].assign(params, params + numParams);
  else
    params_.erase(i);
}

const std::vector<float>* ClientSelection::params(int i) const {
  const auto it = params_.find(i);
  return it == params_.end() ? nullptr : &it->second;
}

void ClientSelection::checkpoint(StateArchive& ar) {
  const int n = static_cast<int>(figures_.size());
  std::unordered_map<int, std::vector<double>> rows;
  std::unordered_map<int, std::vector<float>> kept;
  if (ar.saving())
    for (int i = 0; i < n; ++i) {
      const int k = clients_[static_cast<std::size_t>(i)];
      const ClientEvaluation& e = figures_[static_cast<std::size_t>(i)];
      rows[k] = {static_cast<double>(rounds_[static_cast<std::size_t>(i)]), e.testAccuracy, e.testF1,
                 e.testLoss, e.valAccuracy, e.valLoss};
      if (keepParams_) kept[k] = params_.count(i) ? params_.at(i) : std::vector<float>{};
    }
  ar.clientDoubles("selection/figures", rows);
  if (keepParams_) ar.clientFloats("selection/params", kept);
  if (ar.saving()) return;
  params_.clear();
  for (int i = 0; i < n; ++i) {
    const int k = clients_[static_cast<std::size_t>(i)];
    const auto row = rows.find(k);
    FEDSILO_ASSERT(row != rows.end() && row->second.size() == kFigures, "checkpoint lacks the selection of client ", k);
    const std::vector<double>& r = row->second;
    rounds_[static_cast<std::size_t>(i)] = static_cast<int>(r[0]);
    ClientEvaluation& e = figures_[static_cast<std::size_t>(i)];
    e.testAccuracy = r[1];
    e.testF1 = r[2];
    e.testLoss = r[3];
    e.valAccuracy = r[4];
    e.valLoss = r[5];
    if (keepParams_ && !kept[k].empty()) params_[i] = std::move(kept[k]);
  }
}

}  // namespace fedsilo
