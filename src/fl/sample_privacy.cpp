#include "fl/sample_privacy.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/types.hpp"
#include "fl/privacy_support.hpp"
#include "privacy/calibration.hpp"

namespace fedsilo {

namespace {

double sampleRate(const ExperimentConfig& cfg, Index n) {
  return std::min(1.0, static_cast<double>(cfg.train.batch) / static_cast<double>(std::max<Index>(n, 1)));
}

std::int64_t plannedSteps(const ExperimentConfig& cfg, Index n) {
  const std::int64_t perEpoch = (static_cast<std::int64_t>(n) + cfg.train.batch - 1) / cfg.train.batch;
  return static_cast<std::int64_t>(cfg.rounds) * cfg.train.epochs * perEpoch * sampleDpStepsPerBatch(cfg);
}

}  // namespace

double sampleLevelNoiseMultiplier(const ExperimentConfig& cfg, const std::vector<ClientData>& clients) {
  const PrivacyConfig& p = cfg.privacy;
  if (!(p.targetEpsilon > 0.0)) return p.noiseMultiplier;
  // Clients of equal size have equal epsilon: calibrate each size once, smallest first, and only where
  // the z found so far does not already meet the target.
  std::map<Index, int> sizes;
  for (const ClientData& c : clients) sizes[c.numTrain()] = 1;
  double z = 0.0;
  for (const auto& [n, unused] : sizes) {
    (void)unused;
    const double q = sampleRate(cfg, n);
    const std::int64_t steps = plannedSteps(cfg, n);
    if (steps == 0) continue;
    if (z > 0.0 && sgmEpsilon(q, z, steps, p.delta).epsilon <= p.targetEpsilon) continue;
    try {
      z = std::max(z, calibrateNoiseMultiplier(q, steps, p.delta, p.targetEpsilon).noiseMultiplier);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt("privacy.target_epsilon = ", p.targetEpsilon, " for a client of ", n, " samples (", steps,
                            " DP-SGD steps): ", e.what()));
    }
  }
  if (!(z > 0.0))
    throw ConfigError(fmt("privacy.target_epsilon = ", p.targetEpsilon, ": no client plans a DP-SGD step (train.epochs = ",
                          cfg.train.epochs, ")"));
  return z;
}

SampleLevelDp::SampleLevelDp(const ExperimentConfig& cfg, const std::vector<ClientData>& clients,
                             const Placement& placement, int rank)
    : cfg_(cfg),
      clients_(clients),
      placement_(placement),
      rank_(rank),
      z_(sampleLevelNoiseMultiplier(cfg, clients)),
      accountants_(placement.clients(rank).size()),
      epsilon_(placement.clients(rank).size()),
      steps_(placement.clients(rank).size(), 0.0) {}

void SampleLevelDp::beforeClient(int client, int round, LocalTrainer& trainer) {
  current_ = PrivateSgd{};
  current_.clip = cfg_.privacy.clip;
  current_.noiseMultiplier = z_;
  current_.seed = cfg_.seed;
  current_.client = client;
  current_.round = round;
  current_.accountant = &accountants_[static_cast<std::size_t>(slot(client))];
  trainer.setPrivateSgd(&current_);
}

void SampleLevelDp::afterClient(LocalTrainer& trainer) {
  trainer.setPrivateSgd(nullptr);
  steps_[static_cast<std::size_t>(slot(current_.client))] += static_cast<double>(current_.steps);
}

double SampleLevelDp::endRound() {
  double largest = kNaN;
  for (int i = 0; i < count(); ++i) {
    const double eps = accountants_[static_cast<std::size_t>(i)].spent(cfg_.privacy.delta).epsilon;
    epsilon_[static_cast<std::size_t>(i)].push_back(eps);
    largest = std::isnan(largest) ? eps : std::max(largest, eps);
  }
  return largest;
}

// Per client: [steps, rounds T, epsilon x T, accountant state], restored by client id at any rank count.
void SampleLevelDp::checkpoint(StateArchive& ar) {
  std::unordered_map<int, std::vector<double>> perClient;
  if (ar.saving())
    for (int i = 0; i < count(); ++i) {
      std::vector<double>& row = perClient[clientAt(i)];
      const auto& eps = epsilon_[static_cast<std::size_t>(i)];
      row = {steps_[static_cast<std::size_t>(i)], static_cast<double>(eps.size())};
      row.insert(row.end(), eps.begin(), eps.end());
      const std::vector<double> state = accountants_[static_cast<std::size_t>(i)].state();
      row.insert(row.end(), state.begin(), state.end());
    }
  ar.clientDoubles("privacy/sample_level", perClient);
  if (ar.saving()) return;
  for (int i = 0; i < count(); ++i) {
    const auto it = perClient.find(clientAt(i));
    FEDSILO_ASSERT(it != perClient.end() && it->second.size() >= 2, "checkpoint lacks the privacy state of client ",
                   clientAt(i));
    const std::vector<double>& row = it->second;
    const auto T = static_cast<std::size_t>(row[1]);
    FEDSILO_ASSERT(row.size() >= 2 + T, "checkpoint privacy state of client ", clientAt(i), " is too short");
    steps_[static_cast<std::size_t>(i)] = row[0];
    epsilon_[static_cast<std::size_t>(i)].assign(row.begin() + 2, row.begin() + 2 + static_cast<std::ptrdiff_t>(T));
    accountants_[static_cast<std::size_t>(i)].restore(std::vector<double>(row.begin() + 2 + static_cast<std::ptrdiff_t>(T), row.end()));
  }
}

void SampleLevelDp::record(RecordSink& sink, const Communicator& comm) const {
  const std::size_t T = epsilon_.empty() ? 0 : epsilon_.front().size();
  std::vector<double> local;  // local clients x T, client-major
  for (const auto& eps : epsilon_) {
    FEDSILO_ASSERT(eps.size() == T, "clients with different round counts");
    local.insert(local.end(), eps.begin(), eps.end());
  }
  const auto rounds = static_cast<std::size_t>(comm.allreduceMax<std::int64_t>(static_cast<std::int64_t>(T)));
  std::vector<double> byClient = placement_.toClientOrder(comm.gatherv(local, 0), rounds);  // K x T
  comm.bcast(byClient, 0);
  const std::size_t K = clients_.size();
  FEDSILO_ASSERT(byClient.size() == K * rounds, "per-client epsilon rows do not cover the clients");
  std::vector<double> byRound(byClient.size());  // T x K
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t t = 0; t < rounds; ++t) byRound[t * K + k] = byClient[k * rounds + t];
  sink.writeArray("/privacy/epsilon", byRound, {rounds, K});
  std::vector<double> rates;
  for (const ClientData& c : clients_) rates.push_back(sampleRate(cfg_, c.numTrain()));
  sink.writeArray("/privacy/sampling_rate", rates, {K});
  sink.writeClientRows("/privacy/steps", steps_, 1);
  sink.writeScalar("/privacy/noise_multiplier", z_);
  sink.writeScalar("/privacy/delta", cfg_.privacy.delta);
}

}  // namespace fedsilo
