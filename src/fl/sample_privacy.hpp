// Sample-level DP in the round: DP-SGD inside each silo (fl/dp_sgd.hpp) and one accountant per client.
// Client k's records are sampled at q_k = train.batch / n_k, so its epsilon is its own; the records of
// different silos are disjoint, and a record's guarantee is its silo's (docs/privacy.md).
//
// With privacy.target_epsilon, z is calibrated at start-up from the clients' sizes: the smallest z
// for which every client's planned steps (train.epochs x ceil(n_k / train.batch) per round, in every
// round, times the algorithm's private steps per batch: an upper bound when clients are sampled) give
// epsilon <= the target.
#pragma once
#include <unordered_map>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/config.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "fl/client.hpp"
#include "fl/local_trainer.hpp"
#include "privacy/rdp_accountant.hpp"

namespace fedsilo {

// The calibrated z for a sample-level target epsilon (see above), or the configured z without one.
double sampleLevelNoiseMultiplier(const ExperimentConfig& cfg, const std::vector<ClientData>& clients);

class SampleLevelDp {
 public:
  SampleLevelDp(const ExperimentConfig& cfg, const std::vector<ClientData>& clients, const Placement& placement,
                int rank);

  double noiseMultiplier() const { return z_; }
  // Around one client's update: DP-SGD on for every train() call of the trainer, composing into the
  // client's accountant.
  void beforeClient(int client, int round, LocalTrainer& trainer);
  void afterClient(LocalTrainer& trainer);
  // After each round, every rank: appends each local client's epsilon; returns their largest (NaN
  // without local clients).
  double endRound();

  void checkpoint(StateArchive& ar);
  // /privacy/epsilon [T, K], /privacy/sampling_rate [K], /privacy/steps [K], /privacy/noise_multiplier,
  // /privacy/delta (collective).
  void record(RecordSink& sink, const Communicator& comm) const;

 private:
  int slot(int client) const { return placement_.slot(client); }
  int clientAt(int i) const { return placement_.clients(rank_)[static_cast<std::size_t>(i)]; }
  int count() const { return placement_.count(rank_); }  // this rank's clients

  const ExperimentConfig& cfg_;
  const std::vector<ClientData>& clients_;
  const Placement& placement_;  // the experiment's
  int rank_;
  double z_;
  std::vector<RdpAccountant> accountants_;        // per local client
  std::vector<std::vector<double>> epsilon_;      // per local client: one value per round run
  std::vector<double> steps_;                     // per local client: DP-SGD steps run so far
  PrivateSgd current_;
};

}  // namespace fedsilo
