// What the asynchronous driver (fl/async_driver.hpp) asks of an asynchronous algorithm (docs/async.md):
// its event schedule (by default a buffer of a fixed number of arrivals per server step; FedCompass's
// scheduler instead), what a silo uploads (its model or its difference from the
// version it downloaded), the weight of an update of a given staleness, and the server step on the
// buffered, weighted sum. Clients train as FedAvg's do, with the shared loop, from the version their
// job downloaded. Asynchronous algorithms never call MPI either.
#pragma once
#include <functional>
#include <vector>

#include "core/exact_sum.hpp"
#include "fl/algorithms/fedavg.hpp"
#include "fl/server_optimizer.hpp"
#include "sim/async_schedule.hpp"

namespace fedsilo {

// The server step's input (rank 0): the buffered updates u_j, weighted, summed exactly over ranks.
struct AsyncServerInput {
  int version = 0;                             // the version this step makes (1, 2, ...)
  const std::vector<double>* sum = nullptr;    // sum_j w_j u_j, every parameter in the model's order
  double sampleSum = 0.0;                      // sum_j n_j: the buffered jobs' training samples
  std::vector<int> clients;                    // the buffered jobs' silos, in arrival order
  std::vector<int> staleness;                  // each one's staleness (version - 1 - the version it trained from)
  ServerOptimizer* serverOptimizer = nullptr;  // fl.server_optimizer, or nullptr
  // sum_j w_j u_j / sum_j n_j for parameter i.
  double mean(Index i) const { return (*sum)[static_cast<std::size_t>(i)] / sampleSum; }
};

class AsyncAlgorithm : public FedAvg {
 public:
  enum class Upload { Model, Delta };

  // seconds(client, index, localSteps): the simulated duration of the client's index-th job when it
  // trains localSteps optimizer steps (0: train.epochs epochs).
  using JobSeconds = std::function<double(int client, int index, int localSteps)>;

  AsyncAlgorithm* asynchronous() override { return this; }
  // The whole event schedule, computed before training from the configuration alone (the same on every
  // rank). Default: jobs of train.epochs epochs and a buffer of bufferSize() arrivals per server step
  // (policy.bufferSize is set here).
  virtual AsyncSchedule schedule(AsyncPolicy policy, const JobSeconds& seconds) const {
    policy.bufferSize = bufferSize();
    return buildAsyncSchedule(policy, [&seconds](int client, int index) { return seconds(client, index, 0); });
  }
  // Updates per server step of the default schedule (FedAsync: 1; FedBuff: fedbuff.buffer_size).
  virtual int bufferSize() const { return 1; }
  // Whether fl.max_concurrency may limit the silos training at once (the configuration parser refuses
  // it for an algorithm that says no).
  virtual bool acceptsConcurrencyLimit() const { return true; }
  virtual Upload upload() const = 0;
  // The weight w_j of an update from a silo with `samples` training samples that is `staleness`
  // versions old when it enters the server step.
  virtual double updateWeight(double samples, int staleness) const = 0;
  virtual void serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) = 0;

  // The synchronous round driver never runs an asynchronous algorithm (fl/experiment.cpp).
  void serverUpdate(const FlContext&, const ServerInput&, std::vector<float>&) override {
    FEDSILO_ASSERT(false, name(), " runs on the asynchronous driver");
  }
  bool acceptsRobustAggregation() const override { return false; }
  bool acceptsDroppedSilos() const override { return false; }
};

}  // namespace fedsilo
