// FedOpt's server optimizers (Reddi, Charles, Zaheer, Garrett, Rush, Konečný, Kumar, McMahan, "Adaptive
// Federated Optimization", ICLR 2021, arXiv 2003.00295, Algorithm 2, without bias correction), applied
// to every parameter the server step sets, with the pseudo-gradient Delta = aggregate - w (the weighted
// mean of the clients' models minus the current global model, or the algorithm's own aggregate):
//   momentum (FedAvgM): m <- beta m + Delta                                    w <- w + eta m
//   adagrad:            m <- b1 m + (1 - b1) Delta,  v <- v + Delta^2          w <- w + eta m / (sqrt(v) + tau)
//   yogi:               m as adagrad,  v <- v - (1 - b2) Delta^2 sign(v - Delta^2)      (same step)
//   adam:               m as adagrad,  v <- b2 v + (1 - b2) Delta^2                     (same step)
// m starts at 0 and v at tau^2 (Algorithm 2 asks v_{-1} >= tau^2). A parameter the round does not set
// (a block that was not reduced, or that nobody sent) keeps its value and its state.
// The state (m, and v for the adaptive ones: 1 or 2 doubles per parameter) lives where the server step
// runs, on rank 0; it is allocated at the first step. The round driver broadcasts it only to checkpoint.
#pragma once
#include <vector>

#include "core/config.hpp"
#include "core/types.hpp"

namespace fedsilo {

class ServerOptimizer {
 public:
  ServerOptimizer(const ServerOptimizerConfig& cfg, Index numParams) : cfg_(cfg), numParams_(numParams) {}
  // Whether the server step goes through this optimizer (fl.server_optimizer != none).
  bool active() const { return cfg_.kind != ServerOptimizerKind::None; }
  // Moves x[0..n), the parameters [offset, offset + n) of the flat vector, towards the aggregate
  // target[0..n) by one optimizer step.
  void step(Index offset, Index n, const double* target, float* x);
  // The state as one flat array [m | v] (empty before the first step), and back (checkpoints).
  std::vector<double> state() const;
  void setState(const std::vector<double>& state);
  const ServerOptimizerConfig& config() const { return cfg_; }

 private:
  bool adaptive() const { return cfg_.kind != ServerOptimizerKind::Momentum; }
  void allocate();
  // v's update for one parameter given Delta^2.
  double secondMoment(double v, double delta2) const;

  ServerOptimizerConfig cfg_;
  Index numParams_ = 0;
  std::vector<double> m_, v_;  // per parameter; empty until the first step (v_ also for momentum)
};

}  // namespace fedsilo
