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

namespace {

StalenessFunction parseStalenessFunction(const std::string& key, const std::string& text) {
  if (text == "constant") return StalenessFunction::Constant;
  if (text == "polynomial") return StalenessFunction::Polynomial;
  if (text == "hinge") return StalenessFunction::Hinge;
  throw ConfigError(fmt(key, " = ", text, ": expected constant, polynomial or hinge"));
}

}  // namespace

StalenessWeight StalenessWeight::read(const ExperimentConfig& cfg, const std::string& prefix) {
  StalenessWeight w;
  w.alpha = cfg.algo.getDouble(prefix + ".alpha", 0.0, 1.0);
  if (!(w.alpha > 0.0)) throw ConfigError(fmt(prefix, ".alpha = ", w.alpha, ": expected a value in (0, 1]"));
  w.f = parseStalenessFunction(prefix + ".staleness", cfg.algo.getString(prefix + ".staleness"));
  w.a = cfg.algo.getDouble(prefix + ".a", 0.0, 1e6);
  w.b = cfg.algo.getDouble(prefix + ".b", 0.0, 1e9);
  return w;
}

void FedAsync::serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) {
  FEDSILO_ASSERT(in.staleness.size() == 1, "fedasync steps on one update, got ", in.staleness.size());
  const double at = weight_(in.staleness[0]);
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

std::unique_ptr<Algorithm> makeFedAsync(const ExperimentConfig& cfg) {
  return std::make_unique<FedAsync>(StalenessWeight::read(cfg, "fedasync"));
}

}  // namespace fedsilo
