#include "fl/algorithms/ensemble.hpp"

#include "core/types.hpp"

namespace fedsilo {

OneShotEnsemble::OneShotEnsemble(const ExperimentConfig& cfg) : OneShotLocal(cfg, "ensemble") {}

void OneShotEnsemble::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  requireAllClients(in.payloadClients.size(), ctx);
  Workbench& b = bench(ctx);
  Model& m = *b.model;
  LocalTrainer& tr = *b.trainer;
  const std::size_t K = in.payloadClients.size(), S = opt_.finetuneSizes.size(),
                    P = static_cast<std::size_t>(numParams_);
  members_ = in.payloads;
  const IndexList test = allIndices(ctx.data.test.size());
  const int C = ctx.data.train.numClasses;
  auto load = [&](std::size_t k) {
    for (std::size_t i = 0; i < P; ++i) m.params()[i] = static_cast<float>(members_[k * P + i]);
  };
  // The vote of the members, each fine-tuned on the first S public samples.
  auto voteAccuracy = [&](int S, std::uint64_t stream, std::vector<double>* memberAcc) {
    std::vector<std::vector<std::int32_t>> votes(K);
    for (std::size_t k = 0; k < K; ++k) {
      load(k);
      fineTuneLastBlock(ctx, m, tr, publicSample(S));
      votes[k] = predictLabels(m, tr, ctx.data.test, test, ctx.cfg.eval.batch);
      if (memberAcc) (*memberAcc)[k] = accuracyOf(votes[k], ctx.data.test, test);
    }
    Rng tie(ctx.cfg.seed, -1, -1, Purpose::Tie, stream);
    return accuracyOf(majorityVote(votes, C, tie), ctx.data.test, test);
  };
  memberAcc_.assign(K * S, 0.0);
  sweepAcc_.assign(S, 0.0);
  std::vector<double> acc(K);
  for (std::size_t s = 0; s < S; ++s) {
    sweepAcc_[s] = voteAccuracy(opt_.finetuneSizes[s], 1 + s, &acc);
    for (std::size_t k = 0; k < K; ++k) memberAcc_[k * S + s] = acc[k];
  }
  accBefore_ = voteAccuracy(0, 0, nullptr);
  accAfter_ = opt_.publicSamples > 0 ? voteAccuracy(opt_.publicSamples, 1000000, nullptr) : kNaN;
  (void)global;
}

std::optional<EvalStats> OneShotEnsemble::evaluateClient(ClientContext& c) {
  const Dataset& ds = c.fl.testSet(c.client);
  const std::size_t P = static_cast<std::size_t>(numParams_);
  if (members_.empty()) return EvalStats(ds.numClasses);  // before the aggregation: nothing to score
  const std::size_t K = members_.size() / P;
  std::vector<std::vector<std::int32_t>> votes(K);
  for (std::size_t k = 0; k < K; ++k) {
    for (std::size_t i = 0; i < P; ++i) c.model.params()[i] = static_cast<float>(members_[k * P + i]);
    votes[k] = predictLabels(c.model, c.trainer, ds, c.client.test, c.fl.cfg.eval.batch);
  }
  Rng tie(c.fl.cfg.seed, c.client.id, -1, Purpose::Tie);
  return predictionStats(majorityVote(votes, ds.numClasses, tie), ds, c.client.test);
}

double OneShotEnsemble::clientAccuracy(ClientContext& c) { return evaluateClient(c)->accuracy(); }

void OneShotEnsemble::packExtra(StatePacker& p) const {
  OneShotLocal::packExtra(p);
  p.doubles(members_);
}

void OneShotEnsemble::unpackExtra(StateReader& r) {
  OneShotLocal::unpackExtra(r);
  members_ = r.doubles();
}

std::unique_ptr<Algorithm> makeOneShotEnsemble(const ExperimentConfig& cfg) {
  return std::make_unique<OneShotEnsemble>(cfg);
}

}  // namespace fedsilo
