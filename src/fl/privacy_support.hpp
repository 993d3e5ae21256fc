// Which algorithms and models the privacy options work with, and how client-level DP reads each
// algorithm's update (docs/privacy.md, "Algorithms"). One table, checked once at start-up.
#pragma once
#include <string>

#include "core/config.hpp"

namespace fedsilo {

// What ClientUpdate::vector holds under client-level DP, over the blocks a client sends:
//   Model  the client's model after local training; the update is vector - global
//   Delta  the update itself (q-FFL sends F_k^q (w_k - w^t) under DP, fl/algorithms/qffl.hpp)
enum class DpUpdateForm { Model, Delta };

// How client-level DP treats `algorithm`'s update; nullptr when it does not support client-level DP.
const DpUpdateForm* clientDpForm(const std::string& algorithm);

// The probability that a sampled client sends a given block (its block weight is > 0), known before
// the round: 1, or fedlp.keep_prob. The fixed denominator of block b is (expected clients) x this.
double blockSendProbability(const ExperimentConfig& cfg);

// Client-level DP samples each client independently with probability q = fl.clients_per_round /
// clients in every round (1 when fl.clients_per_round is 0 or >= clients): the accountant's q.
double clientSamplingRate(const ExperimentConfig& cfg);
// The expected number of clients per round, q x clients: the fixed denominator of the noised mean.
double expectedClients(const ExperimentConfig& cfg);

// DP-SGD: the private steps one client update runs per batch of its train.epochs x ceil(n_k / batch)
// (1; Ditto 2, its global and personal models; pFedMe pfedme.inner_steps, its K inner steps), every one
// of which the client's accountant charges: the planned steps' factor.
int sampleDpStepsPerBatch(const ExperimentConfig& cfg);

// Refuses (ConfigError, naming the option and the algorithm or model) a privacy configuration the
// algorithm or model does not support: client-level DP, DP-SGD and secure aggregation each have
// their list; PLayer-FL needs a fixed split (its automatic split reads the clients' layer
// sensitivities, a release DP does not cover); DP-SGD needs a model of Dense layers.
void checkPrivacySupport(const ExperimentConfig& cfg);

}  // namespace fedsilo
