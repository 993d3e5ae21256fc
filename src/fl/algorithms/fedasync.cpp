#include "fl/algorithms/fedasync.hpp"

#include <cmath>

namespace fedsilo {

double stalenessFactor(StalenessFunction f, int staleness, double a, double b) {
  const double tau = staleness;
  switch (f) {
    case StalenessFunction::Constant: return 1.0;
    case StalenessFunction::Polynomial: return std::pow(tau + 1.0, -a);
    case StalenessFunction::Hinge: return tau <= b ? 1.0 : 1.0 / (a * (tau - b) + 1.0);
  }
  return 1.0;
}

void FedAsync::serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) {
  FEDSILO_ASSERT(in.staleness.size() == 1, "fedasync steps on one update, got ", in.staleness.size());
  const double at = alpha_ * stalenessFactor(f_, in.staleness[0], a_, b_);
  for (Index i = 0; i < ctx.numParams; ++i) {
    const auto at_i = static_cast<std::size_t>(i);
    global[at_i] = static_cast<float>((1.0 - at) * global[at_i] + at * in.mean(i));
  }
}

std::vector<OptionSpec> fedAsyncOptions() {
  return {{"fedasync.alpha", "0.6", "FedAsync mixing weight alpha in (0, 1]: x <- (1 - a_t) x + a_t x_k"},
          {"fedasync.staleness", "constant",
           "FedAsync staleness function s(tau) with a_t = alpha s(tau): constant | polynomial | hinge"},
          {"fedasync.a", "0.5", "FedAsync staleness parameter a >= 0 (polynomial: (tau+1)^-a; hinge: 1/(a(tau-b)+1))"},
          {"fedasync.b", "4", "FedAsync hinge staleness threshold b >= 0 (s = 1 for tau <= b)"}};
}

namespace {

StalenessFunction parseStalenessFunction(const std::string& text) {
  if (text == "constant") return StalenessFunction::Constant;
  if (text == "polynomial") return StalenessFunction::Polynomial;
  if (text == "hinge") return StalenessFunction::Hinge;
  throw ConfigError(fmt("fedasync.staleness = ", text, ": expected constant, polynomial or hinge"));
}

}  // namespace

std::unique_ptr<Algorithm> makeFedAsync(const ExperimentConfig& cfg) {
  const double alpha = cfg.algo.getDouble("fedasync.alpha", 0.0, 1.0);
  if (!(alpha > 0.0)) throw ConfigError(fmt("fedasync.alpha = ", alpha, ": expected a value in (0, 1]"));
  return std::make_unique<FedAsync>(alpha, parseStalenessFunction(cfg.algo.getString("fedasync.staleness")),
                                    cfg.algo.getDouble("fedasync.a", 0.0, 1e6),
                                    cfg.algo.getDouble("fedasync.b", 0.0, 1e9));
}

}  // namespace fedsilo
