#include "server_momentum.hpp"

#include "core/error.hpp"
#include "fl/aggregation.hpp"

using fedsilo::ConfigError;
using fedsilo::fmt;

void ServerMomentum::setup(const fedsilo::FlContext& ctx, std::vector<float>& /*global*/) {
  velocity_.assign(static_cast<std::size_t>(ctx.numParams), 0.0);
}

void ServerMomentum::serverUpdate(const fedsilo::FlContext& ctx, const fedsilo::ServerInput& in,
                                  std::vector<float>& global) {
  std::vector<float> mean = global;
  fedsilo::applyWeightedMean(in, ctx.blocks, mean);  // blocks nobody sent keep the global value: d = 0 there
  for (std::size_t i = 0; i < global.size(); ++i) {
    const double step = static_cast<double>(global[i]) - static_cast<double>(mean[i]);
    velocity_[i] = beta_ * velocity_[i] + step;
    global[i] = static_cast<float>(static_cast<double>(global[i]) - serverLr_ * velocity_[i]);
  }
}

std::vector<fedsilo::OptionSpec> serverMomentumOptions() {
  return {{"server_momentum.beta", "0.9", "server momentum beta in [0, 1) (0 = no momentum)"},
          {"server_momentum.lr", "1", "server learning rate (> 0; 1 with beta = 0 is FedAvg)"}};
}

// Called when the command line is parsed (every option checked before any data is read: a bad value is
// exit 2 with one line naming it) and again when the experiment starts.
std::unique_ptr<fedsilo::Algorithm> makeServerMomentum(const fedsilo::ExperimentConfig& cfg) {
  const double beta = cfg.algo.getDouble("server_momentum.beta", 0.0, 1.0);
  if (beta == 1.0)
    throw ConfigError(fmt("server_momentum.beta = ", cfg.algo.all().at("server_momentum.beta"),
                          ": expected a value in [0, 1)"));
  const double lr = cfg.algo.getDouble("server_momentum.lr", 0.0, 100.0);
  if (lr == 0.0)
    throw ConfigError(fmt("server_momentum.lr = ", cfg.algo.all().at("server_momentum.lr"),
                          ": expected a value in (0, 100]"));
  return std::make_unique<ServerMomentum>(beta, lr);
}
