// FedAvg (McMahan et al. 2017): w <- sum_k n_k w_k / sum_k n_k over the round's participants.
#pragma once
#include "fl/algorithm.hpp"

namespace fedsilo {

class FedAvg : public Algorithm {
 public:
  std::string name() const override { return "fedavg"; }
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
  // FedAvg and the algorithms built on it (FedProx, FedLP, FedBABU, Ditto, alpha-FedAvg) average
  // through applyWeightedMean.
  bool acceptsServerOptimizer() const override { return true; }
  // FedAvg, FedProx, Ditto (its global model) and FedBABU; FedLP and alpha-FedAvg say no.
  bool acceptsRobustAggregation() const override { return true; }

 protected:
  // Trains c.model from the global parameters with the shared loop and an optional objective hook,
  // and sends the whole model weighted by the client's number of training samples.
  void trainAndSend(ClientContext& c, ClientUpdate& out, const GradientHook* hook = nullptr);
};

std::unique_ptr<Algorithm> makeFedAvg(const ExperimentConfig& cfg);

}  // namespace fedsilo
