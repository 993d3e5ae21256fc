// FedProx (Li et al., MLSys 2020): each client minimises h_k(w) = F_k(w) + mu/2 ||w - w^t||^2 with the
// shared training loop (E epochs of SGD from w^t); the server averages as FedAvg (sample weights).
// The proximal term enters through a GradientHook: g <- g + mu (w - w^t).
#pragma once
#include "fl/algorithms/fedavg.hpp"

namespace fedsilo {

class FedProx : public FedAvg {
 public:
  explicit FedProx(double mu) : mu_(mu) {}
  std::string name() const override { return "fedprox"; }
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  double mu() const { return mu_; }

 private:
  double mu_;
};

std::vector<OptionSpec> fedProxOptions();
std::unique_ptr<Algorithm> makeFedProx(const ExperimentConfig& cfg);

}  // namespace fedsilo
