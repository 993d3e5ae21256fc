#include "fl/robust_round.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/types.hpp"
#include "robust/attack.hpp"
#include "robust/block_sums.hpp"

namespace fedsilo {

double RobustRound::gatherMemoryMb(int rows, long long params) {
  return 2.0 * 4.0 * static_cast<double>(rows) * static_cast<double>(params) / (1024.0 * 1024.0);
}

std::unique_ptr<RobustRound> RobustRound::make(const ExperimentConfig& cfg, const Communicator& comm,
                                               const Placement& placement, const std::vector<LayerBlock>& blocks,
                                               int numClasses) {
  const RobustConfig& r = cfg.robust;
  if (!r.gathersUpdates() && !r.attack.any()) return nullptr;
  if (r.gathersUpdates()) {
    long long params = 0;
    for (const LayerBlock& b : blocks) params += b.size;
    const int perRound = cfg.fl.clientsPerRound > 0 ? std::min(cfg.fl.clientsPerRound, cfg.clients) : cfg.clients;
    const double mb = gatherMemoryMb(perRound, params);
    if (mb > r.aggregator.memoryMb)
      throw ConfigError(fmt("fl.aggregator_memory_mb = ", r.aggregator.memoryMb, ": the gathered updates need ", mb,
                            " MB at rank 0 (2 x 4 bytes x ", perRound, " clients a round x ", params,
                            " parameters); raise it or use fewer clients a round"));
  }
  return std::make_unique<RobustRound>(cfg, comm, placement, blocks, numClasses);
}

RobustRound::RobustRound(const ExperimentConfig& cfg, const Communicator& comm, const Placement& placement,
                         const std::vector<LayerBlock>& blocks, int numClasses)
    : cfg_(cfg),
      comm_(comm),
      placement_(placement),
      blocks_(blocks),
      numClasses_(numClasses),
      malicious_(chooseMalicious(cfg.robust.attack, cfg.clients, cfg.seed)),
      gathers_(cfg.robust.gathersUpdates()),
      byColumns_(
          gathers_ &&
          (aggregatesByColumns(cfg.robust.aggregator.kind) || aggregatesBySummedBlocks(cfg.robust.aggregator.kind)) &&
          attacksByColumns(cfg.robust.attack.kind)),
      selected_(static_cast<std::size_t>(cfg.clients), 0.0),
      weight_(static_cast<std::size_t>(cfg.clients), kNaN) {}

void RobustRound::beforeClient(int client, int round, LocalTrainer& trainer) const {
  const AttackConfig& a = cfg_.robust.attack;
  if (a.kind == AttackKind::LabelFlip && malicious_[static_cast<std::size_t>(client)] && attacksInRound(a, round))
    trainer.setLabelFlip(numClasses_);
}

void RobustRound::afterClient(LocalTrainer& trainer) const { trainer.setLabelFlip(0); }

void RobustRound::keepUpdate(int client, const std::vector<char>& reduced, const std::vector<double>& blockWeight,
                             const float* sent, const std::vector<float>& global) {
  if (!gathers_) return;
  double weight = 0.0;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    if (!reduced[b]) continue;
    if (weight == 0.0) weight = blockWeight[b];
    FEDSILO_ASSERT(blockWeight[b] == weight, "client ", client, " sent block ", blocks_[b].name, " with weight ",
                   blockWeight[b], ", its other blocks with ", weight, ": robust aggregation needs one weight");
  }
  std::vector<float> row;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    if (!reduced[b]) continue;
    const auto at = static_cast<std::size_t>(blocks_[b].offset), n = static_cast<std::size_t>(blocks_[b].size);
    for (std::size_t i = 0; i < n; ++i) row.push_back(sent[at + i] - global[at + i]);
  }
  if (byColumns_) {
    columns_.add(client, weight, row, comm_.size());
    return;
  }
  ids_.push_back(client);
  weights_.push_back(weight);
  rows_.insert(rows_.end(), row.begin(), row.end());
}

void RobustRound::gather(int round) {
  std::fill(selected_.begin(), selected_.end(), 0.0);
  std::fill(weight_.begin(), weight_.end(), kNaN);
  if (!gathers_) return;
  if (byColumns_) {
    const int needed = findAggregator(cfg_.robust.aggregator.kind).minRows(cfg_.robust.aggregator);
    byColumnsRound_ = aggregateByColumns(comm_, cfg_.robust, cfg_.seed, round, malicious_, needed, columns_, center_);
    return;
  }
  std::vector<int> ids = comm_.gatherv(ids_, 0);
  std::vector<double> weights = comm_.gatherv(weights_, 0);
  std::vector<float> rows = comm_.gatherv(rows_, 0);
  ids_ = std::move(ids);
  weights_ = std::move(weights);
  rows_ = std::move(rows);
}

void RobustRound::serverInput(int round, const std::vector<float>& global, ServerInput& in, Announcer& announce) {
  if (!gathers_) return;
  const int needed = findAggregator(cfg_.robust.aggregator.kind).minRows(cfg_.robust.aggregator);
  const AggregatedRound r = byColumns_ ? std::move(byColumnsRound_) : aggregateGathered(round, needed);
  byColumnsRound_ = AggregatedRound{};
  if (r.clients.empty()) return;
  if (!r.aggregated) {
    keepGlobalModel(round, static_cast<int>(r.clients.size()), needed, r.clients, in, announce);
    return;
  }
  useResult(r, global, in);
}

AggregatedRound RobustRound::aggregateGathered(int round, int needed) {
  AggregatedRound out;
  if (ids_.empty()) return out;
  // The rows in client order: a gather delivers them rank by rank.
  std::vector<std::size_t> order(ids_.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ids_[a] < ids_[b]; });
  const std::size_t n = rows_.size() / ids_.size();
  UpdateMatrix u(static_cast<int>(ids_.size()), n);
  AttackRound attack;
  attack.seed = cfg_.seed;
  attack.round = round;
  std::vector<double> weights;
  for (std::size_t r = 0; r < order.size(); ++r) {
    const std::size_t from = order[r];
    std::copy_n(rows_.begin() + static_cast<std::ptrdiff_t>(from * n), n, u.row(static_cast<int>(r)));
    attack.clients.push_back(ids_[from]);
    attack.malicious.push_back(malicious_[static_cast<std::size_t>(ids_[from])]);
    weights.push_back(weights_[from]);
  }
  std::vector<float>().swap(rows_);  // the matrix holds them now
  out.clients = attack.clients;
  out.aggregated = u.rows >= needed;
  if (!out.aggregated) return out;
  applyAttack(cfg_.robust.attack, attack, u);
  if (center_.size() != n) center_.assign(n, 0.0);
  out.result = aggregate(cfg_.robust.aggregator, AggregateInput{u, weights, center_});
  center_ = out.result.aggregate;
  return out;
}

void RobustRound::useResult(const AggregatedRound& r, const std::vector<float>& global, ServerInput& in) {
  const AggregateResult& result = r.result;
  for (std::size_t i = 0; i < r.clients.size(); ++i) {
    const auto k = static_cast<std::size_t>(r.clients[i]);
    selected_[k] = result.selected[i] ? 1.0 : 0.0;
    weight_[k] = result.weight[i];
  }
  // global + aggregate as the mean of each reduced block (weight sum 1).
  mean_.resize(in.acc->size());
  std::size_t at = 0;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    if (in.accOffset[b] < 0) continue;
    const auto accAt = static_cast<std::size_t>(in.accOffset[b]), size = static_cast<std::size_t>(blocks_[b].size);
    const float* g = global.data() + blocks_[b].offset;
    for (std::size_t i = 0; i < size; ++i)
      mean_.data()[accAt + i] = Fixed128::fromDouble(static_cast<double>(g[i]) + result.aggregate[at + i]);
    at += size;
    in.blockWeightSum[b] = 1.0;
  }
  in.acc = &mean_;
}

void RobustRound::keepGlobalModel(int round, int rows, int needed, const std::vector<int>& senders, ServerInput& in,
                                  Announcer& announce) {
  announce.warning(fmt("round ", round, ": ", rows, rows == 1 ? " update" : " updates",
                       " arrived, fl.aggregator = ", cfg_.robust.aggregator.kind, " needs at least ", needed,
                       "; the global model is kept for this round"));
  for (int k : senders) weight_[static_cast<std::size_t>(k)] = 0.0;  // sent, and not used
  for (std::size_t b = 0; b < blocks_.size(); ++b)
    if (in.accOffset[b] >= 0) in.blockWeightSum[b] = 0.0;  // as in a round without updates
}

void RobustRound::endRound() {
  ids_.clear();
  weights_.clear();
  rows_.clear();
  if (!gathers_) return;
  comm_.bcast(selected_.data(), selected_.size(), 0);
  comm_.bcast(weight_.data(), weight_.size(), 0);
}

void RobustRound::recordRound(RecordSink& sink) const {
  if (!gathers_) return;
  std::vector<double> selected, weight;
  for (int k : placement_.clients(comm_.rank())) {
    selected.push_back(selected_[static_cast<std::size_t>(k)]);
    weight.push_back(weight_[static_cast<std::size_t>(k)]);
  }
  sink.appendRoundClients("aggregator_selected", selected);
  sink.appendRoundClients("aggregator_weight", weight);
}

void RobustRound::record(RecordSink& sink) const {
  if (!cfg_.robust.attack.any()) return;
  std::vector<std::int64_t> mine;
  for (int k : placement_.clients(comm_.rank())) mine.push_back(malicious_[static_cast<std::size_t>(k)]);
  sink.writeClientIntRows("/clients/malicious", mine, 1);
}

void RobustRound::checkpoint(StateArchive& ar) {
  if (!gathers_) return;
  std::vector<double> center = center_;
  if (ar.saving()) comm_.bcast(center, 0);  // rank 0's; the archive stores replicated arrays
  ar.doubles("robust/center", center);
  if (!ar.saving()) center_ = center;
}

}  // namespace fedsilo
