// FedCompass (Li, Chaturvedi, He, Chen, Singh, Kindratenko, Huerta, Kim, Madduri, "FedCompass: Efficient
// Cross-Silo Federated Learning on Heterogeneous Client Devices Using a Computing Power-Aware Scheduler",
// ICLR 2024, arXiv 2309.14675; docs/async.md): semi-asynchronous. Its schedule is the computing-power-aware
// scheduler's (sim/compass_schedule.hpp): each job trains the local steps the scheduler assigns, in
// [fedcompass.q_min, fedcompass.q_max], so that silos of similar speed arrive as a group; each version
// aggregates one group (or a silo's first update alone) with the late updates buffered before it:
//   x <- x + alpha * sum_j s(tau_j) (n_j / N) Delta_j
// over the version's updates j, Delta_j = trained model - the version it downloaded, n_j its silo's
// training samples, N the training samples of all silos, s FedAsync's staleness function
// (fedcompass.staleness, .a, .b), alpha = fedcompass.alpha.
#pragma once
#include "fl/algorithms/fedasync.hpp"
#include "fl/async_algorithm.hpp"
#include "sim/compass_scheduler.hpp"

namespace fedsilo {

class FedCompass : public AsyncAlgorithm {
 public:
  FedCompass(CompassOptions options, StalenessWeight weight) : options_(options), weight_(weight) {}
  std::string name() const override { return "fedcompass"; }
  AsyncSchedule schedule(AsyncPolicy policy, const JobSeconds& seconds) const override;
  // The scheduler keeps every silo busy: a silo is sent its next job as soon as it may.
  bool acceptsConcurrencyLimit() const override { return false; }
  Upload upload() const override { return Upload::Delta; }
  // alpha s(tau) n_j: the server step divides the weighted sum by N.
  double updateWeight(double samples, int staleness) const override;
  void serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) override;
  bool acceptsServerOptimizer() const override { return false; }

 private:
  CompassOptions options_;
  StalenessWeight weight_;
};

std::vector<OptionSpec> fedCompassOptions();
std::unique_ptr<Algorithm> makeFedCompass(const ExperimentConfig& cfg);

}  // namespace fedsilo
