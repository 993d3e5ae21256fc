// FedAsync (Xie, Koyejo, Gupta, "Asynchronous Federated Optimization", 2019, arXiv 1903.03934): every
// arrival makes a version, x <- (1 - a_t) x + a_t x_k, with a_t = fedasync.alpha * s(tau) for the
// update's staleness tau and s one of the paper's staleness functions:
//   constant:   s = 1
//   polynomial: s = (tau + 1)^(-a)
//   hinge:      s = 1 for tau <= b, else 1 / (a (tau - b) + 1)
#pragma once
#include "fl/async_algorithm.hpp"

namespace fedsilo {

enum class StalenessFunction { Constant, Polynomial, Hinge };

// s(tau) of FedAsync's staleness function with its parameters a and b.
double stalenessFactor(StalenessFunction f, int staleness, double a, double b);

class FedAsync : public AsyncAlgorithm {
 public:
  FedAsync(double alpha, StalenessFunction f, double a, double b) : alpha_(alpha), f_(f), a_(a), b_(b) {}
  std::string name() const override { return "fedasync"; }
  int bufferSize() const override { return 1; }
  Upload upload() const override { return Upload::Model; }
  double updateWeight(double samples, int) const override { return samples; }
  void serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) override;
  bool acceptsServerOptimizer() const override { return false; }

 private:
  double alpha_;
  StalenessFunction f_;
  double a_, b_;
};

std::vector<OptionSpec> fedAsyncOptions();
std::unique_ptr<Algorithm> makeFedAsync(const ExperimentConfig& cfg);

}  // namespace fedsilo
