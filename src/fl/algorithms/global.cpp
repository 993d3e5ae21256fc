#include "fl/algorithms/global.hpp"

#include <cstring>

#include "core/error.hpp"

namespace fedsilo {

OneShotGlobal::OneShotGlobal(const ExperimentConfig& cfg)
    : OneShot(cfg, "global"), shard_(static_cast<int>(cfg.algo.getInt("gems.global_shard", 0, 1000000))) {}

void OneShotGlobal::trainPooled(const FlContext& ctx, const DataParallel* dp) {
  Workbench& b = bench(ctx);
  IndexList pooled;
  for (const ClientData& cl : ctx.clients) pooled.insert(pooled.end(), cl.train.begin(), cl.train.end());
  std::memcpy(b.model->params(), init_.data(), init_.size() * sizeof(float));
  Rng rng(ctx.cfg.seed, -1, 0, Purpose::Shuffle);           // the same permutation on every rank
  if (!dp) b.model->setRandomContext(ctx.cfg.seed, -1, 0);  // (data-parallel: keyed per shard)
  b.trainer->train(*b.model, pooled, localTrainOptions(ctx.cfg), rng, -1, 0, nullptr, dp);
  trained_.assign(b.model->params(), b.model->params() + b.model->numParams());
}

void OneShotGlobal::rankUpdate(RankContext& c) {
  DataParallel dp{c.rank, c.ranks, shard_, c.fl.cfg.seed, c.allreduceExact};
  trainPooled(c.fl, &dp);
}

void OneShotGlobal::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);  // the clients' data is pooled (rankUpdate)
}

void OneShotGlobal::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  (void)in;
  Workbench& b = bench(ctx);
  if (shard_ == 0) trainPooled(ctx, nullptr);  // serial: the plain loop on rank 0
  FEDSILO_ASSERT(trained_.size() == init_.size(), "global: rankUpdate did not run");
  global = sweep(ctx, *b.model, *b.trainer, trained_);
}

std::unique_ptr<Algorithm> makeOneShotGlobal(const ExperimentConfig& cfg) {
  return std::make_unique<OneShotGlobal>(cfg);
}

}  // namespace fedsilo
