#include "fl/algorithms/fedbuff.hpp"

#include <algorithm>
#include <cmath>

#include "fl/aggregation.hpp"

namespace fedsilo {

double FedBuff::updateWeight(double samples, int staleness) const {
  return stalenessScaling_ ? samples / std::sqrt(1.0 + staleness) : samples;
}

void FedBuff::serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) {
  // The target of the step; a server optimizer takes (target - x) = the buffered mean as its
  // pseudo-gradient and its own learning rate (fl.server_lr).
  const double eta = in.serverOptimizer ? 1.0 : serverLr_;
  std::vector<double> target(static_cast<std::size_t>(ctx.numParams));
  for (Index i = 0; i < ctx.numParams; ++i)
    target[static_cast<std::size_t>(i)] = global[static_cast<std::size_t>(i)] + eta * in.mean(i);
  ServerInput step;
  step.serverOptimizer = in.serverOptimizer;
  applyAggregate(step, 0, ctx.numParams, target.data(), global);
}

std::vector<OptionSpec> fedBuffOptions() {
  return {
      {"fedbuff.buffer_size", "0", "FedBuff updates per server step, 1 to the number of clients (0 = min(5, clients))"},
      {"fedbuff.server_lr", "1", "FedBuff server learning rate eta > 0: x <- x + eta * buffered mean delta"},
      {"fedbuff.staleness_scaling", "true", "FedBuff: scale each buffered delta by 1/sqrt(1 + staleness)"}};
}

std::unique_ptr<Algorithm> makeFedBuff(const ExperimentConfig& cfg) {
  const auto given = cfg.algo.getInt("fedbuff.buffer_size", 0, 100000000);
  const long long buffer = given == 0 ? std::min(5, cfg.clients) : given;
  if (buffer > cfg.clients)
    throw ConfigError(
        fmt("fedbuff.buffer_size = ", buffer, ": expected 1 to the number of clients (", cfg.clients, ")"));
  const double eta = cfg.algo.getDouble("fedbuff.server_lr", 0.0, 1e6);
  if (!(eta > 0.0)) throw ConfigError(fmt("fedbuff.server_lr = ", eta, ": expected a value > 0"));
  return std::make_unique<FedBuff>(static_cast<int>(buffer), eta, cfg.algo.getBool("fedbuff.staleness_scaling"));
}

}  // namespace fedsilo
