#include "fl/fedfa.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace fedsilo {

std::vector<OptionSpec> fedFaOptions() {
  return {
      {"fedfa.alpha", "0.5", "share of the accuracy information quantity in the weight, in [0, 1] (frequency: 1 - alpha)"},
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
}

std::vector<char> FedFa::reducedBlocks(const FlContext& ctx, int) const {
  return std::vector<char>(ctx.blocks.size(), 0);  // the server averages the payloads itself
}

void FedFa::clientUpdate(ClientContext& c, ClientUpdate& out) {
  TrainOptions opt = c.trainOptions();
  opt.momentum = opt_.clientMomentum;
  Rng rng = c.shuffleRng();
  const TrainStats st = c.trainer.train(c.model, c.client.train, opt, rng, c.client.id, c.round);
  out.trainLoss = st.meanLoss;
  const double acc = c.trainer.evaluate(c.model, c.fl.data.train, c.client.train, c.fl.cfg.eval.batch).accuracy();
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
  out.payload.resize(1 + P_);
  out.payload[0] = acc;
  const float* w = c.model.params();
  for (std::size_t i = 0; i < P_; ++i) out.payload[1 + i] = w[i];
}

void FedFa::serverUpdate(const FlContext&, const ServerInput& in, std::vector<float>& global) {
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
        throw NumericError(fmt("fedfa: round ", in.round, ": client ", in.payloadClients[i], " sent a non-finite update"));
    }
    if (!momentum_.empty())
      for (std::size_t j = 0; j < P_; ++j) d[j] = momentum_[j] = opt_.serverMomentum * momentum_[j] + d[j];
    for (std::size_t j = 0; j < P_; ++j) global[j] = static_cast<float>(global[j] - opt_.serverLr * d[j]);
  }
  weights_.push_back(lastWeights_);
}

std::vector<double> FedFa::serverState() const {
  std::vector<double> s = frequency_;
  s.insert(s.end(), lastWeights_.begin(), lastWeights_.end());
  s.insert(s.end(), momentum_.begin(), momentum_.end());
  return s;
}

void FedFa::setServerState(const std::vector<double>& s) {
  const std::size_t K = static_cast<std::size_t>(K_);
  FEDSILO_ASSERT(s.size() == 2 * K + momentum_.size());
  std::copy(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(K), frequency_.begin());
  std::copy(s.begin() + static_cast<std::ptrdiff_t>(K), s.begin() + static_cast<std::ptrdiff_t>(2 * K), lastWeights_.begin());
  std::copy(s.begin() + static_cast<std::ptrdiff_t>(2 * K), s.end(), momentum_.begin());
  weights_.push_back(lastWeights_);
}

void FedFa::checkpoint(StateArchive& ar) {
  std::vector<double> s = serverState(), hist;
  for (const auto& r : weights_) hist.insert(hist.end(), r.begin(), r.end());
  ar.doubles("server_state", s);
  ar.doubles("fedfa_weights", hist);
  if (ar.saving()) return;
  setServerState(s);
  weights_.clear();
  const std::size_t K = static_cast<std::size_t>(K_);
  for (std::size_t i = 0; K > 0 && i + K <= hist.size(); i += K)
    weights_.emplace_back(hist.begin() + static_cast<std::ptrdiff_t>(i), hist.begin() + static_cast<std::ptrdiff_t>(i + K));
}

void FedFa::record(const FlContext&, RecordSink& sink) const {
  // One row per round, like /rounds.
  const std::uint64_t K = static_cast<std::uint64_t>(K_);
  std::vector<double> w;
  const std::uint64_t T = weights_.size();
  for (const auto& row : weights_) w.insert(w.end(), row.begin(), row.end());
  sink.writeArray("/fedfa/weight", w, {T, K});
  sink.writeIntArray("/fedfa/frequency", std::vector<std::int64_t>(frequency_.begin(), frequency_.end()), {K});
}

std::unique_ptr<Algorithm> makeFedFa(const ExperimentConfig& cfg) {
  FedFaOptions o;
  o.accuracyShare = cfg.algo.getDouble("fedfa.alpha", 0.0, 1.0);
  o.clientMomentum = cfg.algo.getDouble("fedfa.client_momentum", 0.0, 0.999999);
  o.serverMomentum = cfg.algo.getDouble("fedfa.server_momentum", 0.0, 0.999999);
  o.serverLr = cfg.algo.getDouble("fedfa.server_lr", 1e-9, 1e6);
  return std::make_unique<FedFa>(o);
}

}  // namespace fedsilo
