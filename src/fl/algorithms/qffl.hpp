// q-FFL / q-FedAvg (Li, Sanjabi, Beirami, Smith, ICLR 2020), exactly as the authors' code
// (github.com/litian96/fair_flearn, flearn/trainers/qffedavg.py, fedbase.py; docs/algorithms.md, "qffl"):
//   objective f_q(w) = Σ_k p_k/(q+1) F_k^(q+1)(w)            (q = 0: FedAvg)
//   selection: m clients drawn ∝ n_k without replacement     (sampling = 2; no n_k weighting after)
//   client k:  F_k = loss of w^t on its whole training split (before training)
//              w̄_k = E epochs of mini-batch SGD from w^t (the shared loop)
//              Δw_k = L (w^t - w̄_k), L = 1/lr
//              Δ_k  = (F_k + 1e-10)^q Δw_k
//              h_k  = q (F_k + 1e-10)^(q-1) ‖Δw_k‖² + L (F_k + 1e-10)^q
//   server:    w^{t+1} = w^t - Σ_k Δ_k / Σ_k h_k
// Each client sends Δ_k with block weight 1 (so the exact reduction gives Σ Δ_k) and h_k as an exact sum.
// Under client-level DP (docs/privacy.md) the clients send -Δ_k / L = F_k^q (w̄_k - w^t), the DP step
// clips it, and the server moves w^t by the noised mean over the expected number of clients: q-FFL's
// loss weighting F_k^q stays (up to the clip), its normaliser Σ_k h_k (data-dependent) is replaced by
// the fixed denominator.
#pragma once
#include <memory>
#include <vector>

#include "fl/algorithm.hpp"

namespace fedsilo {

class QFfl : public Algorithm {
 public:
  explicit QFfl(double q) : q_(q) {}
  std::string name() const override { return "qffl"; }
  std::vector<int> selectClients(const FlContext& ctx, int round) const override;
  int sumsSize() const override { return 1; }
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
  bool acceptsServerOptimizer() const override { return true; }

 private:
  double q_;
  std::vector<float> delta_;  // Δ_k of the client being updated (must outlive clientUpdate's return)
};

// m of the K clients drawn without replacement with probabilities ∝ weights (successive draws from the
// renormalised remaining weights, as numpy.random.choice(replace=False, p=...)); ascending ids.
std::vector<int> sampleProportional(const std::vector<double>& weights, int m, Rng& rng);

std::unique_ptr<Algorithm> makeQFfl(const ExperimentConfig& cfg);
std::vector<OptionSpec> qfflOptions();

}  // namespace fedsilo
