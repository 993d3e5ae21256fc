#include "fl/algorithms/fedfa.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "fl/aggregation.hpp"
#include "fl/state_packer.hpp"

namespace fedsilo {

std::vector<OptionSpec> fedFaOptions() {
  return {
      {"fedfa.alpha", "0.5",
       "share of the accuracy information quantity in the weight, in [0, 1] (frequency: 1 - alpha)"},
      {"fedfa.client_momentum", "0.5", "client SGD momentum beta_c in [0, 1) (replaces train.momentum)"},
      {"fedfa.server_momentum", "0", "server momentum beta_s in [0, 1) on the aggregated model difference"},
      {"fedfa.server_lr", "1", "server learning rate eta_s (> 0)"},
  };
}

std::vector<double> fedFaWeights(const std::vector<double>& accuracy, const std::vector<double>& frequency,
                                 double alpha) {
  FEDSILO_ASSERT(accuracy.size() == frequency.size());
  const std::size_t m = accuracy.size();
  // Information quantity -ln(x_i / Σ x_j), normalised to sum to 1 (uniform when all are 0).
  auto info = [m](const std::vector<double>& x) {
    std::vector<double> I(m, 0.0);
    double sx = 0.0, sI = 0.0;
    for (double v : x) sx += v;
    for (std::size_t i = 0; i < m; ++i) {
      I[i] = -std::log(x[i] / sx);
      sI += I[i];
    }
    for (double& v : I) v = sI > 0.0 ? v / sI : 1.0 / static_cast<double>(m);
    return I;
  };
  std::vector<double> acc(m);
  for (std::size_t i = 0; i < m; ++i) acc[i] = std::max(1e-6, std::isfinite(accuracy[i]) ? accuracy[i] : 0.0);
  const std::vector<double> ia = info(acc), iff = info(frequency);
  std::vector<double> p(m);
  for (std::size_t i = 0; i < m; ++i) p[i] = alpha * ia[i] + (1.0 - alpha) * iff[i];
  return p;
}

void FedFa::setup(const FlContext& ctx, std::vector<float>& global) {
  P_ = global.size();
  K_ = static_cast<int>(ctx.clients.size());
  frequency_.assign(static_cast<std::size_t>(K_), 0.0);
  lastWeights_.assign(static_cast<std::size_t>(K_), 0.0);
  weights_.clear();
  momentum_.assign(opt_.serverMomentum > 0.0 ? P_ : 0, 0.0);
  private_ = ctx.cfg.privacy.clientLevel();
}

std::vector<char> FedFa::reducedBlocks(const FlContext& ctx, int) const {
  // The server averages the payloads itself; under client-level DP the models go through the reduction.
  return std::vector<char>(ctx.blocks.size(), private_ ? 1 : 0);
}

void FedFa::clientUpdate(ClientContext& c, ClientUpdate& out) {
  TrainOptions opt = c.trainOptions();
  opt.optimizer.momentum = opt_.clientMomentum;
  Rng rng = c.shuffleRng();
  const TrainStats st = c.trainer.train(c.model, c.client.train, opt, rng, c.client.id, c.round);
  out.trainLoss = st.meanLoss;
  const double acc = c.trainer.evaluate(c.model, c.fl.data.train, c.client.train, c.fl.cfg.eval.batch).accuracy();
  if (private_) {  // the model through the reduction (clipped and noised by the DP step), the accuracy as payload
    out.blockWeight.assign(c.fl.blocks.size(), 1.0);
    out.vector = c.model.params();
    out.payload = {acc};
    return;
  }
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
  out.payload.resize(1 + P_);
  out.payload[0] = acc;
  const float* w = c.model.params();
  for (std::size_t i = 0; i < P_; ++i) out.payload[1 + i] = w[i];
}

// Under client-level DP: d = w^t - (the noised mean model), then the server momentum and learning rate as
// usual, and fl.server_optimizer last, as without DP. The information-quantity weights p_i are not used
// (data-dependent weights scale a client's contribution past the clip bound); /fedfa/weight records the
// participants' equal shares.
void FedFa::privateServerUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  std::fill(lastWeights_.begin(), lastWeights_.end(), 0.0);
  for (int k : in.payloadClients) {
    frequency_[k] += 1.0;
    lastWeights_[k] = 1.0 / static_cast<double>(in.payloadClients.size());
  }
  const std::vector<float> mean = weightedMeanModel(in, ctx.blocks, global);
  std::vector<double> target(P_);
  for (std::size_t j = 0; j < P_; ++j) {
    double d = static_cast<double>(global[j]) - static_cast<double>(mean[j]);
    if (!momentum_.empty()) d = momentum_[j] = opt_.serverMomentum * momentum_[j] + d;
    target[j] = global[j] - opt_.serverLr * d;
  }
  applyAggregate(in, 0, static_cast<Index>(P_), target.data(), global);
  weights_.push_back(lastWeights_);
}

void FedFa::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  if (in.privateMean) return privateServerUpdate(ctx, in, global);
  std::fill(lastWeights_.begin(), lastWeights_.end(), 0.0);
  const std::size_t m = in.payloadClients.size(), row = 1 + P_;
  if (m > 0) {
    std::vector<double> acc(m), freq(m);
    for (std::size_t i = 0; i < m; ++i) {
      const int k = in.payloadClients[i];
      frequency_[k] += 1.0;
      acc[i] = in.payloads[i * row];
      freq[i] = frequency_[k];
    }
    const std::vector<double> p = fedFaWeights(acc, freq, opt_.accuracyShare);
    // d = Σ_i p_i (w^t - w_i), in ascending client order.
    std::vector<double> d(P_, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
      lastWeights_[in.payloadClients[i]] = p[i];
      const double* wi = in.payloads.data() + i * row + 1;
      for (std::size_t j = 0; j < P_; ++j) d[j] += p[i] * (static_cast<double>(global[j]) - wi[j]);
      if (!std::isfinite(wi[0]) || !std::isfinite(p[i]))
        throw NumericError(
            fmt("fedfa: round ", in.round, ": client ", in.payloadClients[i], " sent a non-finite update"));
    }
    if (!momentum_.empty())
      for (std::size_t j = 0; j < P_; ++j) d[j] = momentum_[j] = opt_.serverMomentum * momentum_[j] + d[j];
    for (std::size_t j = 0; j < P_; ++j) d[j] = global[j] - opt_.serverLr * d[j];  // the aggregate
    applyAggregate(in, 0, static_cast<Index>(P_), d.data(), global);
  }
  weights_.push_back(lastWeights_);
}

std::vector<double> FedFa::serverState() const {
  StatePacker p;
  p.doubles(frequency_);
  p.doubles(lastWeights_);
  p.doubles(momentum_);
  return p.take();
}

void FedFa::setServerState(const std::vector<double>& state) {
  StateReader r(state);
  frequency_ = r.doubles();
  lastWeights_ = r.doubles();
  momentum_ = r.doubles();
  FEDSILO_ASSERT(
      r.done() && frequency_.size() == static_cast<std::size_t>(K_) && lastWeights_.size() == frequency_.size(),
      "fedfa server state does not fit ", K_, " clients");
  weights_.push_back(lastWeights_);
}

void FedFa::checkpoint(StateArchive& ar) {
  Algorithm::checkpoint(ar);  // (setServerState appends a row that the history below replaces)
  std::vector<double> history = flattenRows(weights_);
  ar.doubles("fedfa_weights", history);
  if (!ar.saving()) weights_ = splitRows(history, static_cast<std::size_t>(K_));
}

void FedFa::record(const FlContext&, RecordSink& sink) const {
  // One row per round, like /rounds.
  const std::uint64_t K = static_cast<std::uint64_t>(K_);
  const std::uint64_t T = weights_.size();
  sink.writeArray("/fedfa/weight", flattenRows(weights_), {T, K});
  sink.writeIntArray("/fedfa/frequency", std::vector<std::int64_t>(frequency_.begin(), frequency_.end()), {K});
}

std::unique_ptr<Algorithm> makeFedFa(const ExperimentConfig& cfg) {
  FedFaOptions o;
  o.accuracyShare = cfg.algo.getDouble("fedfa.alpha", 0.0, 1.0);
  o.clientMomentum = cfg.algo.getDouble("fedfa.client_momentum", 0.0, 0.999999);
  if (o.clientMomentum != 0.0 && cfg.train.optimizer != OptimizerKind::Sgd)
    throw ConfigError(fmt("fedfa.client_momentum = ", o.clientMomentum, " is SGD momentum, but train.optimizer = ",
                          cfg.train.optimizer, " (set fedfa.client_momentum = 0, or train.optimizer = sgd)"));
  o.serverMomentum = cfg.algo.getDouble("fedfa.server_momentum", 0.0, 0.999999);
  o.serverLr = cfg.algo.getDouble("fedfa.server_lr", 1e-9, 1e6);
  return std::make_unique<FedFa>(o);
}

}  // namespace fedsilo
