#include "app/round_recorder.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "fl/fairness.hpp"

namespace fedsilo {

void RoundRecorder::appendRoundScalar(const std::string& name, double value) {
  note('s', name);
  scalars_[name].push_back(value);
  out().appendRoundScalar(name, value);
}

void RoundRecorder::appendRoundInt(const std::string& name, std::int64_t value) {
  note('i', name);
  scalars_[name].push_back(static_cast<double>(value));  // exact: round indices are far below 2^53
  out().appendRoundInt(name, value);
}

void RoundRecorder::appendRoundClients(const std::string& name, const std::vector<double>& local) {
  note('c', name);
  clients_[name].push_back(local);
  out().appendRoundClients(name, local);
}

void RoundRecorder::endRound() {
  ++rows_;
  out().endRound();
}

std::string RoundRecorder::names() const {
  std::string s;
  for (const auto& [kind, name] : order_) s += std::string(1, kind) + ":" + name + "\n";
  return s;
}

void RoundRecorder::save(StateArchive& ar) {
  const std::vector<int>& mine = placement_.clients(comm_.rank());
  for (const auto& [kind, name] : order_) {
    if (kind != 'c') {
      ar.doubles("rounds/" + name, scalars_.at(name));
      continue;
    }
    const auto& rows = clients_.at(name);
    std::unordered_map<int, std::vector<double>> byClient;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      std::vector<double>& v = byClient[mine[i]];
      for (const auto& row : rows) v.push_back(row.at(i));
    }
    ar.clientDoubles("rounds/" + name, byClient);
  }
}

void RoundRecorder::load(StateArchive& ar, const std::string& file, const std::string& names, std::uint64_t rows) {
  const std::vector<int>& mine = placement_.clients(comm_.rank());
  std::istringstream in(names);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 3 || line[1] != ':') continue;
    const char kind = line[0];
    const std::string name = line.substr(2);
    order_.emplace_back(kind, name);
    if (kind != 'c') {
      std::vector<double>& v = scalars_[name];
      ar.doubles("rounds/" + name, v);
      if (v.size() != rows)
        throw RuntimeError(
            fmt("checkpoint ", file, ": array rounds/", name, " has ", v.size(), " rows, expected ", rows));
      continue;
    }
    std::unordered_map<int, std::vector<double>> byClient;
    ar.clientDoubles("rounds/" + name, byClient);
    auto& out = clients_[name];
    out.assign(rows, std::vector<double>(mine.size(), 0.0));
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const auto it = byClient.find(mine[i]);
      if (it == byClient.end() || it->second.size() != rows)
        throw RuntimeError(
            fmt("checkpoint ", file, ": array rounds/", name, " lacks ", rows, " rows of client ", mine[i]));
      for (std::uint64_t t = 0; t < rows; ++t) out[t][i] = it->second[t];
    }
  }
  rows_ = rows;
}

void RoundRecorder::replay(RecordSink& out) const {
  for (std::uint64_t t = 0; t < rows_; ++t) {
    for (const auto& [kind, name] : order_) {
      if (kind == 's') out.appendRoundScalar(name, scalars_.at(name).at(t));
      else if (kind == 'i') out.appendRoundInt(name, static_cast<std::int64_t>(scalars_.at(name).at(t)));
      else out.appendRoundClients(name, clients_.at(name).at(t));
    }
    out.endRound();
  }
}

std::vector<double> RoundRecorder::scalarColumn(const std::string& name) const {
  const auto it = scalars_.find(name);
  return it == scalars_.end() ? std::vector<double>{} : it->second;
}

// The client rows `name` of every kept round, gathered to rank 0 in client order (rank-major blocks
// of rounds x local clients, each value put in its client's column).
std::vector<std::vector<double>> RoundRecorder::gatherClientRows(const std::string& name) const {
  const auto it = clients_.find(name);
  std::vector<double> mine;
  if (it != clients_.end())
    for (const auto& row : it->second) mine.insert(mine.end(), row.begin(), row.end());
  const std::vector<double> all = comm_.gatherv(mine, 0);
  std::vector<std::vector<double>> rows(rows_);
  if (!comm_.isRoot() || it == clients_.end()) return rows;
  for (auto& row : rows) row.resize(static_cast<std::size_t>(placement_.numClients()));
  std::size_t at = 0;
  for (int r = 0; r < comm_.size(); ++r)
    for (std::uint64_t t = 0; t < rows_; ++t)
      for (int k : placement_.clients(r)) rows[t][static_cast<std::size_t>(k)] = all.at(at++);
  return rows;
}

std::vector<RoundSummary> RoundRecorder::summaries(const ExperimentConfig& cfg) const {
  const std::vector<std::vector<double>> accuracy = gatherClientRows("client_accuracy");
  const std::vector<std::vector<double>> participated = gatherClientRows("participated");
  const auto column = [&](const std::string& name, std::uint64_t t) {
    const auto it = scalars_.find(name);
    return it == scalars_.end() ? std::nan("") : it->second.at(t);
  };
  std::vector<RoundSummary> out(rows_);
  for (std::uint64_t t = 0; t < rows_; ++t) {
    RoundSummary& s = out[t];
    s.round = static_cast<int>(column("round", t));
    s.evaluated = isEvaluationRound(cfg, s.round);
    s.globalAccuracy = column("global_accuracy", t);
    s.globalLoss = column("global_loss", t);
    s.seconds = column("seconds", t);
    s.trainSeconds = column("train_seconds", t);
    s.simSeconds = column("sim_seconds", t);  // NaN without the system model
    s.simTime = column("sim_time", t);
    // As RoundDriver::evaluateRound: NaN in a round that was not evaluated.
    s.meanClientAccuracy = s.evaluated ? mean(accuracy[t]) : std::nan("");
    s.worst10 = s.evaluated ? worstFraction(accuracy[t]) : std::nan("");
    s.participants = static_cast<int>(std::count(participated[t].begin(), participated[t].end(), 1.0));
  }
  return out;
}

void RoundRecorder::note(char kind, const std::string& name) {
  for (const auto& o : order_)
    if (o.second == name) return;
  order_.emplace_back(kind, name);
}

}  // namespace fedsilo
