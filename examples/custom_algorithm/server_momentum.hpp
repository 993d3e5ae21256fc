// Server momentum (FedAvgM: Hsu, Qi and Brown 2019, "Measuring the Effects of Non-Identical Data
// Distribution for Federated Visual Classification", arXiv:1909.06335). The clients train as in FedAvg;
// the server treats the step from the global model to the clients' weighted mean as a gradient and keeps
// a velocity of it across rounds:
//   d = w - mean_k(w_k)      v <- beta v + d      w <- w - lr v
// beta = 0 and lr = 1 give FedAvg. The velocity is the algorithm's state: it lives on every rank as server
// state (broadcast after each round) and is saved in checkpoints, so a resumed run continues exactly.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "fl/algorithms/fedavg.hpp"

class ServerMomentum : public fedsilo::FedAvg {
 public:
  ServerMomentum(double beta, double serverLr) : beta_(beta), serverLr_(serverLr) {}
  std::string name() const override { return "server_momentum"; }
  // FedAvg accepts fedsilo's own server optimizers (fl.server_optimizer); this algorithm's server step is
  // a momentum step of its own, so it refuses them (exit 2) instead of stepping twice.
  bool acceptsServerOptimizer() const override { return false; }
  void setup(const fedsilo::FlContext& ctx, std::vector<float>& global) override;
  void serverUpdate(const fedsilo::FlContext& ctx, const fedsilo::ServerInput& in, std::vector<float>& global) override;
  // The default Algorithm::checkpoint saves and restores serverState() as "server_state".
  std::vector<double> serverState() const override { return velocity_; }
  void setServerState(const std::vector<double>& state) override { velocity_ = state; }

 private:
  double beta_, serverLr_;
  std::vector<double> velocity_;  // one value per model parameter
};

// The registry entry's pieces (main.cpp): the options it declares and the factory that validates them.
std::vector<fedsilo::OptionSpec> serverMomentumOptions();
std::unique_ptr<fedsilo::Algorithm> makeServerMomentum(const fedsilo::ExperimentConfig& cfg);
