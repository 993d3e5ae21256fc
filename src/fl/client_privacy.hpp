// Client-level DP-FedAvg in the round (McMahan, Ramage, Talwar and Zhang 2018, "Learning Differentially
// Private Recurrent Language Models", ICLR, arXiv:1710.06963, Algorithm 1 with the fixed-denominator
// estimator; docs/privacy.md): the round driver's client-level DP step, used through fl/round_privacy.
//
//   selection  every client independently with probability q (Poisson, privacy/client_dp.hpp)
//   client     u_k = update over the reduced blocks it sends (its model minus the global model, or the
//              algorithm's delta), clipped jointly to L2 norm C; with noise at the clients, plus its
//              share N(0, z^2 C^2 / |U|) on every reduced coordinate (|U|: the round's sampled clients).
//              It is then reduced with weight 1: the algorithms' own weights are not used (a weight
//              computed from a client's data scales its contribution past C)
//   server     per reduced block b: mean_b = g_b + (sum_k u_kb + N(0, z^2 C^2)) / (q K pi_b), the
//              denominator fixed (the expected number of senders of the block, pi_b its send
//              probability) so that it reveals nothing about who was sampled; the algorithm's server
//              step sees mean_b as the weighted mean (ServerInput::privateMean), before any server
//              optimiser. With noise at the clients the server adds the shares that are not in the sum
//              (nobody sampled, dropouts, a discarded sum), so the noise is N(0, z^2 C^2) in every round
//   accountant one sampled Gaussian step (q, z) per round
// Adaptive clipping (Andrew et al. 2021) adds each client's bit 1[||u_k|| <= C] to one exact sum; the
// server noises the count and moves C, and the update noise is raised so that both releases together
// cost one step at z.
#pragma once
#include <optional>
#include <vector>

#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "fl/algorithm.hpp"
#include "fl/privacy_support.hpp"
#include "nn/model.hpp"
#include "privacy/client_dp.hpp"
#include "privacy/rdp_accountant.hpp"

namespace fedsilo {

class ClientLevelDp {
 public:
  // Keeps a reference to `cfg`, which must outlive it (the experiment's configuration does).
  ClientLevelDp(const ExperimentConfig& cfg, const std::vector<LayerBlock>& blocks);

  // The round's Poisson sample (identical on every rank).
  std::vector<int> selectClients(int round) const;
  // Exact sums this step appends to the round's reduction (the adaptive-clipping count).
  int numSums() const { return adaptive_ ? 1 : 0; }

  // Client side: replaces `update`'s vector by the clipped update (plus the noise share) and its block
  // weights by 1 on every reduced block. `roundClients` = |U|; `global` the round's start model.
  void privatize(int client, int round, int roundClients, const std::vector<char>& reduced,
                 const std::vector<float>& global, ClientUpdate& update);
  // Adds the last privatized client's sums (its clipping bit) to into[at ...].
  void addSums(ExactSum& into, std::size_t at) const;

  // Rank 0, after the reduction: noise on the sum and the fixed-denominator mean, into `in` (whose
  // acc then points into this object). `shares`: how many of the round's `roundClients` noise shares
  // `acc` holds (the survivors; 0 when secure aggregation discarded the sum); ignored with the noise
  // at the server.
  void privatizeServerInput(int round, const ExactSum& acc, const std::vector<float>& global, int shares,
                            int roundClients, ServerInput& in);

  // Every rank, after the round (replicated arguments): charges the accountant one step and moves the
  // adaptive clip (not after a round whose sum secure aggregation discarded). Returns the run's
  // epsilon so far.
  double endRound(int round, double clippedCount, int survivors, bool discarded = false);

  double clip() const { return adaptive_ ? adaptive_->clip() : cfg_.privacy.clip; }
  double samplingRate() const { return q_; }
  void checkpoint(StateArchive& ar);
  // /privacy/epsilon [T], /privacy/clip [T], /privacy/noise_multiplier_charged [T], scalars.
  void record(RecordSink& sink) const;

 private:
  double updateNoiseStd() const;  // z_update C (z_update = z without adaptive clipping)
  // What the server adds to the sum: the whole noise, or the shares missing from it.
  double serverNoiseStd(int shares, int roundClients) const;
  double meanDenominator() const { return expected_ * sendProbability_; }

  const ExperimentConfig& cfg_;
  const std::vector<LayerBlock>& blocks_;
  DpUpdateForm form_;
  double q_, expected_, sendProbability_;
  double countStd_ = 0.0;
  std::optional<AdaptiveClip> adaptive_;
  std::vector<float> update_;  // the privatized update (ClientUpdate::vector points here)
  double lastBit_ = 0.0;       // 1 when the last privatized update's norm was <= C
  ExactSum mean_;              // rank 0: the noised mean (ServerInput::acc under DP)
  std::vector<double> noised_;
  RdpAccountant accountant_;
  std::vector<double> epsilon_, clipUsed_, charged_;  // per round run
};

}  // namespace fedsilo
