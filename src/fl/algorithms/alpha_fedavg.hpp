// α-FedAvg (Tian, Lü, Zou, Zhao, Li; 计算机研究与发展 2021/2022, DOI 10.7544/issn1000-1239.20201081).
// The paper's formulas were lost in extraction; the reconstruction is in docs/algorithms.md
// ("α-FedAvg, q-FFL, FedFa" and "alpha_fedavg"), where every inferred choice is listed.
//
// Every round each selected client k
//   1. reports a_k = Acc(w_t, D_k^test), the accuracy of the current global model on its own test
//      split, measured BEFORE local training (Algorithm 2, client step ①/⑩),
//   2. trains E epochs of mini-batch SGD from w_t (the shared loop, FedAvg::trainAndSend),
//   3. sends its model with block weight a_k^(1/α - 1)   (or n_k^(1/α) a_k^(1/α-1), `weighted`);
//      the exact reduction divides by Σ_k of the weights, so the server's aggregate is Σ p_k w_k with
//      p_k = a_k^(1/α-1) / Σ_j a_j^(1/α-1) (eq. 6). Until α is known (round 0; [I]: the initial model's
//      accuracies are meaningless) and for `auto` until the search round, clients send n_k (FedAvg).
// α is fixed (`alpha_fedavg.alpha = 2`) or chosen by Algorithm 1 (fl/fairness.hpp searchAlpha) so that
// E(α) = E_T: from a FedAvg reference's final accuracies before training (the paper's procedure) or,
// without a reference, by the server at the end of `search_round` from that round's reports ([I]).
//
// Section 3.4 (honest-but-selfish clients): each client shares `verify_samples` samples of its val
// split with the server at the start (drawn with Rng(seed, k, -1, Verify); the paper uses DP synthetic
// data built from the local test data). Every round the server evaluates w_t on the participants'
// samples; a report more than `verify_tolerance` away is a strike, and after `verify_strikes` strikes
// the client is excluded from aggregation for good (it sends block weight 0). `liars` report
// clamp(a_k + liar_boost, 0, 1) so that the check can be exercised.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "fl/algorithms/fedavg.hpp"
#include "core/types.hpp"
#include "fl/fairness.hpp"

namespace fedsilo {

struct AlphaFedAvgOptions {
  bool autoAlpha = true;
  double alpha = 1.0;                     // fixed α (autoAlpha = false)
  double efficiencyTarget = -1.0;         // E_T; < 0: derived (see docs)
  std::vector<double> referenceAccuracy;  // a FedAvg reference's final per-client accuracies
  std::string reference;                  // path of that reference (resolved by io, see reference_reader)
  int searchRound = 1;
  bool weighted = false;
  double alphaMax = 5.0;                  // α used when every α meets E_T (target below E(∞))
  double accuracyFloor = kAccuracyFloor;  // reports are clamped to [floor, 1] before weighting ([I])
  int verifySamples = 0;                  // 0: no verification
  double verifyTolerance = 0.2;
  int verifyStrikes = 3;
  std::vector<int> liars;
  double liarBoost = 0.3;
  static AlphaFedAvgOptions parse(const ExperimentConfig& cfg);
};

class AlphaFedAvg : public FedAvg {
 public:
  explicit AlphaFedAvg(AlphaFedAvgOptions o) : opt_(std::move(o)) {}
  std::string name() const override { return "alpha_fedavg"; }
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  int payloadSize() const override { return 1; }  // the reported accuracy
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
  // The server step searches alpha against an efficiency target, not one mean of the updates.
  bool acceptsRobustAggregation() const override { return false; }
  std::vector<double> serverState() const override { return state_; }
  void setServerState(const std::vector<double>& s) override { applyState(s, true); }
  void checkpoint(StateArchive& ar) override;
  void record(const FlContext& ctx, RecordSink& sink) const override;

  // Replicated state, for tests.
  bool alphaKnown() const { return alphaKnown_; }
  double alpha() const { return alpha_; }
  const AlphaSearchResult& search() const { return search_; }
  const std::vector<int>& excluded() const { return excluded_; }
  const std::vector<int>& strikes() const { return strikes_; }
  const std::vector<std::vector<double>>& reportHistory() const { return reports_; }

 private:
  // Decodes a broadcast state; appends the round's reports/checks to the history when `append`.
  void applyState(const std::vector<double>& s, bool append);
  std::vector<double> encodeState(const std::vector<double>& reports, const std::vector<double>& checks) const;
  void runSearch(Announcer& say, const std::vector<double>& acc, const std::vector<double>& sampleWeights,
                 double target);
  double clientWeight(int client, int round, double reported) const;

  AlphaFedAvgOptions opt_;
  int K_ = 0;
  std::vector<double> numTrain_;
  // Replicated (identical on every rank after each round).
  bool alphaKnown_ = false;
  double alpha_ = 1.0, target_ = kNaN;
  int searchedAt_ = -1;  // round of the in-run search; -2: before training (reference); -1: none
  AlphaSearchResult search_;
  std::vector<int> excluded_, strikes_;
  std::vector<std::vector<double>> reports_, checks_;  // per round run: [K] (NaN: no report / no check)
  std::vector<double> state_;
  // Rank 0 only (verification).
  std::vector<IndexList> verifyIdx_;
  std::unique_ptr<Model> verifyModel_;
  std::unique_ptr<LocalTrainer> verifyTrainer_;
};

std::unique_ptr<Algorithm> makeAlphaFedAvg(const ExperimentConfig& cfg);
std::vector<OptionSpec> alphaFedAvgOptions();

}  // namespace fedsilo
