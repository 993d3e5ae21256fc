#include "fl/client_privacy.hpp"

#include <cmath>

#include "core/error.hpp"
#include "privacy/gaussian.hpp"

namespace fedsilo {

namespace {
AdaptiveClipOptions adaptiveOptions(const PrivacyConfig& p, double countStd) {
  AdaptiveClipOptions o;
  o.initialClip = p.clip;
  o.targetQuantile = p.targetQuantile;
  o.learningRate = p.clipLr;
  o.countStd = countStd;
  return o;
}
}  // namespace

ClientLevelDp::ClientLevelDp(const ExperimentConfig& cfg, const std::vector<LayerBlock>& blocks)
    : cfg_(cfg),
      blocks_(blocks),
      form_(*clientDpForm(cfg.algorithm)),
      q_(clientSamplingRate(cfg)),
      expected_(expectedClients(cfg)),
      sendProbability_(blockSendProbability(cfg)) {
  if (cfg.privacy.adaptiveClip) {
    countStd_ = cfg.privacy.clipCountStd > 0.0 ? cfg.privacy.clipCountStd : expected_ / 20.0;
    adaptive_.emplace(adaptiveOptions(cfg.privacy, countStd_));
  }
}

std::vector<int> ClientLevelDp::selectClients(int round) const {
  return poissonSample(cfg_.seed, round, cfg_.clients, q_);
}

double ClientLevelDp::updateNoiseStd() const {
  const double z = cfg_.privacy.noiseMultiplier;
  return (adaptive_ ? updateNoiseMultiplier(z, countStd_) : z) * clip();
}

void ClientLevelDp::privatize(int client, int round, int roundClients, const std::vector<char>& reduced,
                              const std::vector<float>& global, ClientUpdate& update) {
  const float* sent = update.vector;
  FEDSILO_ASSERT(sent != nullptr, "client-level DP needs the update's vector");
  update_.assign(global.size(), 0.0f);
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    if (!reduced[b] || !(update.blockWeight[b] > 0.0)) continue;  // not sent: a zero update
    const auto first = static_cast<std::size_t>(blocks_[b].offset), end = first + static_cast<std::size_t>(blocks_[b].size);
    for (std::size_t i = first; i < end; ++i)
      update_[i] = form_ == DpUpdateForm::Model ? sent[i] - global[i] : sent[i];
  }
  const double norm = clipL2(update_.data(), update_.size(), clip());  // unsent blocks are 0: the joint norm
  lastBit_ = norm <= clip() ? 1.0 : 0.0;
  if (cfg_.privacy.noisePlacement == NoisePlacement::Clients) {
    const double shareStd = distributedNoiseStd(cfg_.privacy.noiseMultiplier, clip(), roundClients);
    Rng rng = clientNoiseRng(cfg_.seed, client, round);
    for (std::size_t b = 0; b < blocks_.size(); ++b)
      if (reduced[b])
        addGaussianNoise(update_.data() + blocks_[b].offset, static_cast<std::size_t>(blocks_[b].size), shareStd, rng);
  }
  update.vector = update_.data();
  for (std::size_t b = 0; b < blocks_.size(); ++b) update.blockWeight[b] = reduced[b] ? 1.0 : 0.0;
}

void ClientLevelDp::addSums(ExactSum& into, std::size_t at) const {
  if (adaptive_) into.add(at, lastBit_);
}

double ClientLevelDp::serverNoiseStd(int shares, int roundClients) const {
  if (cfg_.privacy.noisePlacement == NoisePlacement::Server) return updateNoiseStd();
  return distributedTopUpStd(cfg_.privacy.noiseMultiplier, clip(), shares, roundClients);
}

void ClientLevelDp::privatizeServerInput(int round, const ExactSum& acc, const std::vector<float>& global, int shares,
                                         int roundClients, ServerInput& in) {
  mean_.resize(acc.size());
  const double denominator = meanDenominator();
  const double serverStd = serverNoiseStd(shares, roundClients);
  Rng rng = centralNoiseRng(cfg_.seed, round);
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    in.blockWeightSum[b] = 0.0;
    if (in.accOffset[b] < 0) continue;
    const auto at = static_cast<std::size_t>(in.accOffset[b]), n = static_cast<std::size_t>(blocks_[b].size);
    noised_.resize(n);
    for (std::size_t i = 0; i < n; ++i) noised_[i] = acc.value(at + i);
    if (serverStd > 0.0) addGaussianNoise(noised_.data(), n, serverStd, rng);
    const float* g = global.data() + blocks_[b].offset;
    for (std::size_t i = 0; i < n; ++i)
      mean_.data()[at + i] = Fixed128::fromDouble(static_cast<double>(g[i]) + noised_[i] / denominator);
    in.blockWeightSum[b] = 1.0;
  }
  in.acc = &mean_;
  std::fill(in.sums.begin(), in.sums.end(), 0.0);
  in.privateMean = true;
}

double ClientLevelDp::endRound(int round, double clippedCount, int survivors, bool discarded) {
  clipUsed_.push_back(clip());
  // The released sum carries N(0, z^2 C^2) in every round, whoever added it (privatizeServerInput), so
  // every round is one sampled Gaussian step at z.
  const double z = cfg_.privacy.noiseMultiplier;
  accountant_.compose(q_, z);
  charged_.push_back(z);
  if (adaptive_ && !discarded)
    adaptive_->update(static_cast<int>(std::lround(clippedCount)), survivors, expected_, cfg_.seed, round);
  epsilon_.push_back(accountant_.spent(cfg_.privacy.delta).epsilon);
  return epsilon_.back();
}

void ClientLevelDp::checkpoint(StateArchive& ar) {
  std::vector<double> state = accountant_.state();
  std::vector<double> clipNow{clip()};
  ar.doubles("privacy/accountant", state);
  ar.doubles("privacy/clip_now", clipNow);
  ar.doubles("privacy/epsilon", epsilon_);
  ar.doubles("privacy/clip", clipUsed_);
  ar.doubles("privacy/charged", charged_);
  if (ar.saving()) return;
  accountant_.restore(state);
  FEDSILO_ASSERT(clipNow.size() == 1 && clipUsed_.size() == epsilon_.size() && charged_.size() == epsilon_.size(),
                 "checkpoint privacy state does not fit");
  if (adaptive_) adaptive_->restore(clipNow[0]);
}

void ClientLevelDp::record(RecordSink& sink) const {
  const std::vector<std::uint64_t> dims{epsilon_.size()};
  sink.writeArray("/privacy/epsilon", epsilon_, dims);
  sink.writeArray("/privacy/clip", clipUsed_, dims);
  sink.writeArray("/privacy/noise_multiplier_charged", charged_, dims);
  sink.writeScalar("/privacy/noise_multiplier", cfg_.privacy.noiseMultiplier);
  sink.writeScalar("/privacy/sampling_rate", q_);
  sink.writeScalar("/privacy/delta", cfg_.privacy.delta);
}

}  // namespace fedsilo
