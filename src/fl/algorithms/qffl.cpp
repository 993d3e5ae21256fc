#include "fl/algorithms/qffl.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "fl/aggregation.hpp"

namespace fedsilo {

std::vector<OptionSpec> qfflOptions() {
  return {{"qffl.q", "1",
           "q-FFL fairness exponent q >= 0 (0: FedAvg-like; the authors use 5 on Vehicle, 1 on Synthetic/Sent140)"}};
}

std::vector<int> sampleProportional(const std::vector<double>& weights, int m, Rng& rng) {
  const int K = static_cast<int>(weights.size());
  std::vector<int> out;
  if (m <= 0 || m >= K) {
    for (int k = 0; k < K; ++k) out.push_back(k);
    return out;
  }
  std::vector<double> w = weights;
  for (int i = 0; i < m; ++i) {
    double total = 0.0;
    for (double v : w) total += v;
    int pick = -1;
    if (total > 0.0) {
      double u = rng.uniform() * total;
      for (int k = 0; k < K; ++k) {
        if (w[k] <= 0.0) continue;
        pick = k;
        if (u < w[k]) break;
        u -= w[k];
      }
    } else {  // only zero-weight clients left: uniform over them
      std::vector<int> left;
      for (int k = 0; k < K; ++k)
        if (std::find(out.begin(), out.end(), k) == out.end()) left.push_back(k);
      pick = left[rng.below(left.size())];
    }
    out.push_back(pick);
    w[pick] = 0.0;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> QFfl::selectClients(const FlContext& ctx, int round) const {
  std::vector<double> n(ctx.clients.size());
  for (std::size_t k = 0; k < n.size(); ++k) n[k] = static_cast<double>(ctx.clients[k].numTrain());
  Rng rng(ctx.cfg.seed, -1, round, Purpose::Select);
  return sampleProportional(n, ctx.cfg.fl.clientsPerRound, rng);
}

void QFfl::clientUpdate(ClientContext& c, ClientUpdate& out) {
  const std::size_t P = static_cast<std::size_t>(c.model.numParams());
  // F_k: mean loss of w^t over the whole local training split (evaluation mode).
  const double F = c.trainer.evaluate(c.model, c.fl.data.train, c.client.train, c.fl.cfg.eval.batch).meanLoss();
  if (!std::isfinite(F))
    throw NumericError(fmt("qffl: client ", c.client.id, " round ", c.round, ": loss of the global model is ", F));
  Rng rng = c.shuffleRng();
  const TrainOptions opt = c.trainOptions();
  const TrainStats st = c.trainer.train(c.model, c.client.train, opt, rng, c.client.id, c.round);
  out.trainLoss = st.meanLoss;
  const double L = 1.0 / opt.optimizer.lr;
  const double Fq = std::pow(F + 1e-10, q_);
  const float* w = c.model.params();
  // Under client-level DP the server forms the noised mean of the clients' vectors (ServerInput::
  // privateMean) instead of dividing by sum_k h_k, a data-dependent normaliser DP does not release:
  // each client sends F_k^q (w_k - w^t) = -Δ_k / L, clipped by the DP step.
  const bool dp = c.fl.cfg.privacy.clientLevel();
  delta_.resize(P);
  double norm2 = 0.0;
  for (std::size_t i = 0; i < P; ++i) {
    const double dw = L * (static_cast<double>(c.global[i]) - static_cast<double>(w[i]));  // Δw_k
    norm2 += dw * dw;
    delta_[i] = static_cast<float>(dp ? Fq * (static_cast<double>(w[i]) - static_cast<double>(c.global[i]))
                                      : Fq * dw);  // Δ_k, or -Δ_k / L under DP
  }
  const double h = q_ * std::pow(F + 1e-10, q_ - 1.0) * norm2 + L * Fq;
  out.blockWeight.assign(c.fl.blocks.size(), 1.0);
  out.vector = delta_.data();
  out.sums = {h};
}

void QFfl::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  if (in.privateMean) return applyWeightedMean(in, ctx.blocks, global);  // w^t + the noised mean of -Δ_k / L
  const double H = in.sums.empty() ? 0.0 : in.sums[0];
  if (!(H > 0.0)) return;  // nobody sent an update
  std::vector<double> aggregate;  // w^t - sum_k Delta_k / H: the server optimizer's target
  for (std::size_t b = 0; b < ctx.blocks.size(); ++b) {
    if (in.accOffset[b] < 0) continue;
    const LayerBlock& block = ctx.blocks[b];
    const Index off = in.accOffset[b];
    aggregate.resize(static_cast<std::size_t>(block.size));
    for (Index i = 0; i < block.size; ++i)
      aggregate[static_cast<std::size_t>(i)] =
          static_cast<double>(global[static_cast<std::size_t>(block.offset + i)]) - in.acc->value(off + i) / H;
    applyAggregate(in, block.offset, block.size, aggregate.data(), global);
  }
}

std::unique_ptr<Algorithm> makeQFfl(const ExperimentConfig& cfg) {
  return std::make_unique<QFfl>(cfg.algo.getDouble("qffl.q", 0.0, 1000.0));
}

}  // namespace fedsilo
