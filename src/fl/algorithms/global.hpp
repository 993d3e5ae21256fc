// `global`, a baseline of the GEMS paper (Guha & Smith, arXiv 1805.07782, Sec. 4); the one-shot protocol
// and the public-data fine-tuning it shares with GEMS are in fl/algorithms/one_shot.hpp.
#pragma once
#include "fl/algorithms/one_shot.hpp"

namespace fedsilo {

// One model trained on the pooled training data of all clients (every rank holds the whole dataset),
// data-parallel across all ranks in rankUpdate (LocalTrainer with DataParallel: gems.global_shard
// samples per gradient shard, an exact allreduce per step), so the model is the same at any rank
// count; rank 0 then runs the fine-tuning sweep on it. gems.global_shard = 0 trains it on rank 0
// alone instead (the plain serial loop: faster when an SGD step is shorter than an allreduce).
class OneShotGlobal : public OneShot {
 public:
  explicit OneShotGlobal(const ExperimentConfig& cfg);
  bool usesRankUpdate() const override { return shard_ > 0; }
  void rankUpdate(RankContext& c) override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;

 private:
  // Trains the shared initial model on the union of the clients' training indices into trained_;
  // data-parallel with dp (every rank), serially without.
  void trainPooled(const FlContext& ctx, const DataParallel* dp);

  int shard_;
  std::vector<float> trained_;  // after rankUpdate, on every rank
};

std::unique_ptr<Algorithm> makeOneShotGlobal(const ExperimentConfig& cfg);

}  // namespace fedsilo
