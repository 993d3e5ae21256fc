// FedFa (Huang, Li, Wang, Du, Zhang, "Fairness and Accuracy in Federated Learning", arXiv 2012.10069).
// RECONSTRUCTED: the exact formulas were not retrieved; docs/algorithms.md, "fedfa", gives the
// reconstruction and marks what is inferred [S/I].
//   client i: E epochs of SGD with client momentum (v <- β_c v + g; fedfa.client_momentum) from w^t,
//             reports Acc_i, the accuracy of its trained model on its own training split.
//   server:   f_i = rounds client i has taken part in so far (this one included);
//             I^acc_i = -ln(Acc_i / Σ_j Acc_j),  I^f_i = -ln(f_i / Σ_j f_j)   (sums over the round's
//             participants), each normalised to sum to 1 (Î), p_i = α Î^acc_i + (1-α) Î^f_i;
//             d = Σ_i p_i (w^t - w_i), server momentum m <- β_s m + d, w^{t+1} = w^t - η_s m.
// The paper's "aggregate every b rounds" is not modelled (b = 1; local epochs play that role).
// p_i needs sums over all participants AFTER training, so it cannot be a client-side block weight: the
// clients send their models as payloads (gathered to rank 0 in client order, deterministic at any rank
// count) and the server forms the weighted mean itself. Costs m·P doubles per round on rank 0.
// Under client-level DP the models go through the exact reduction instead (uniform weights, clipped
// and noised) and the server applies its momentum and learning rate to w^t minus the noised mean
// (docs/privacy.md).
#pragma once
#include <memory>
#include <vector>

#include "fl/algorithm.hpp"

namespace fedsilo {

struct FedFaOptions {
  double accuracyShare = 0.5;   // α (β = 1 - α)
  double clientMomentum = 0.5;  // β_c
  double serverMomentum = 0.0;  // β_s
  double serverLr = 1.0;        // η_s
};

// p_i = α Î^acc_i + (1-α) Î^f_i for one round's participants (accuracies clamped to >= 1e-6; a term
// whose information quantities are all 0, e.g. one participant, is uniform).
std::vector<double> fedFaWeights(const std::vector<double>& accuracy, const std::vector<double>& frequency,
                                 double accuracyShare);

class FedFa : public Algorithm {
 public:
  explicit FedFa(FedFaOptions o) : opt_(o) {}
  std::string name() const override { return "fedfa"; }
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  std::vector<char> reducedBlocks(const FlContext& ctx, int round) const override;
  int payloadSize() const override { return private_ ? 1 : 1 + static_cast<int>(P_); }
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
  // On the model FedFa's own step gives (w^t - eta_s m), as its aggregate.
  bool acceptsServerOptimizer() const override { return true; }
  // Frequencies, this round's weights and the server momentum.
  std::vector<double> serverState() const override;
  void setServerState(const std::vector<double>& state) override;
  void checkpoint(StateArchive& ar) override;
  void record(const FlContext& ctx, RecordSink& sink) const override;

 private:
  void privateServerUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global);

  FedFaOptions opt_;
  bool private_ = false;  // client-level DP: the models go through the reduction (docs/privacy.md)
  std::size_t P_ = 0;
  int K_ = 0;
  std::vector<double> frequency_;             // replicated
  std::vector<double> momentum_;              // replicated (empty when β_s = 0)
  std::vector<double> lastWeights_;           // replicated: this round's p (K, 0 for non-participants)
  std::vector<std::vector<double>> weights_;  // replicated history, one row per round run
};

std::unique_ptr<Algorithm> makeFedFa(const ExperimentConfig& cfg);
std::vector<OptionSpec> fedFaOptions();

}  // namespace fedsilo
