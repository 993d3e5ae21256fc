// FedBuff (Nguyen, Malik, Zhao, Rabbat, Esmaeili, Huba, "Federated Learning with Buffered Asynchronous
// Aggregation", AISTATS 2022, arXiv 2106.06639): silos send Delta_k = (local model - the version they
// downloaded); the server buffers fedbuff.buffer_size updates and applies
//   x <- x + eta * sum_k n_k s_k Delta_k / sum_k n_k,   s_k = 1/sqrt(1 + tau_k) (fedbuff.staleness_scaling)
// (weights by training samples as FedAvg's; the staleness factor shrinks a stale update rather than
// only reweighting it, as the paper's s(tau) Delta summed over the buffer). eta = fedbuff.server_lr;
// with fl.server_optimizer the buffered mean is the FedOpt pseudo-gradient instead (fl.server_lr).
#pragma once
#include "fl/async_algorithm.hpp"

namespace fedsilo {

class FedBuff : public AsyncAlgorithm {
 public:
  FedBuff(int bufferSize, double serverLr, bool stalenessScaling)
      : bufferSize_(bufferSize), serverLr_(serverLr), stalenessScaling_(stalenessScaling) {}
  std::string name() const override { return "fedbuff"; }
  int bufferSize() const override { return bufferSize_; }
  Upload upload() const override { return Upload::Delta; }
  double updateWeight(double samples, int staleness) const override;
  void serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) override;
  bool acceptsServerOptimizer() const override { return true; }

 private:
  int bufferSize_;
  double serverLr_;
  bool stalenessScaling_;
};

std::vector<OptionSpec> fedBuffOptions();
std::unique_ptr<Algorithm> makeFedBuff(const ExperimentConfig& cfg);

}  // namespace fedsilo
