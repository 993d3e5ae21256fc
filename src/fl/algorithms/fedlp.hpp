// FedLP-Homo (Zhu et al., ICC 2023; PLayer-FL authors' code [V]): every client trains the whole model
// as FedAvg, then uploads each layer block independently with probability p (fedlp.keep_prob), drawn
// from Rng(seed, client, round, LayerKeep), one draw per block in model order. The server sets each
// block to the n_k-weighted mean over the clients that uploaded it,
//   w_b = sum_{k: kept b} n_k w_kb / sum_{k: kept b} n_k,
// which is applyWeightedMean with blockWeight_kb = n_k or 0; a block nobody uploaded keeps its value.
#pragma once
#include "fl/algorithms/fedavg.hpp"

namespace fedsilo {

// The per-block keep decisions of `client` in `round` (1 = uploaded), L draws from its stream.
std::vector<char> fedLpKeepMask(std::uint64_t seed, int client, int round, int L, double keepProb);

class FedLp : public FedAvg {
 public:
  explicit FedLp(double keepProb) : keepProb_(keepProb) {}
  std::string name() const override { return "fedlp"; }
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  // A client sends only the layers its Bernoulli draw keeps: the clients' rows do not share the blocks.
  bool acceptsRobustAggregation() const override { return false; }

 private:
  double keepProb_;
};

std::vector<OptionSpec> fedLpOptions();
std::unique_ptr<Algorithm> makeFedLp(const ExperimentConfig& cfg);

}  // namespace fedsilo
