// FedAsync (Xie, Koyejo, Gupta, "Asynchronous Federated Optimization", 2019, arXiv 1903.03934): every
// arrival makes a version, x <- (1 - a_t) x + a_t x_k, with a_t = fedasync.alpha * s(tau) for the
// update's staleness tau and s one of the paper's staleness functions:
//   constant:   s = 1
//   polynomial: s = (tau + 1)^(-a)
//   hinge:      s = 1 for tau <= b, else 1 / (a (tau - b) + 1)
#pragma once
#include <string>

#include "fl/async_algorithm.hpp"

namespace fedsilo {

enum class StalenessFunction { Constant, Polynomial, Hinge };

// s(tau) of FedAsync's staleness function with its parameters a and b.
double stalenessFactor(StalenessFunction f, int staleness, double a, double b);

// FedAsync's weight of an update that is tau versions old, alpha x s(tau), which FedCompass's server
// step uses too; each algorithm reads it from its own options <prefix>.alpha, .staleness, .a and .b.
struct StalenessWeight {
  double alpha = 1.0;
  StalenessFunction f = StalenessFunction::Constant;
  double a = 0.5, b = 4.0;
  double operator()(int staleness) const { return alpha * stalenessFactor(f, staleness, a, b); }
  // Throws ConfigError naming the option and its value: alpha in (0, 1], staleness one of constant,
  // polynomial or hinge, a >= 0, b >= 0.
  static StalenessWeight read(const ExperimentConfig& cfg, const std::string& prefix);
};

class FedAsync : public AsyncAlgorithm {
 public:
  explicit FedAsync(StalenessWeight weight) : weight_(weight) {}
  std::string name() const override { return "fedasync"; }
  int bufferSize() const override { return 1; }
  Upload upload() const override { return Upload::Model; }
  double updateWeight(double samples, int) const override { return samples; }
  void serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) override;
  bool acceptsServerOptimizer() const override { return false; }

 private:
  StalenessWeight weight_;
};

std::vector<OptionSpec> fedAsyncOptions();
std::unique_ptr<Algorithm> makeFedAsync(const ExperimentConfig& cfg);

}  // namespace fedsilo
