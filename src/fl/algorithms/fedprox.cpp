#include "fl/algorithms/fedprox.hpp"

#include "fl/gradient_hooks.hpp"

namespace fedsilo {

void FedProx::clientUpdate(ClientContext& c, ClientUpdate& out) {
  // c.global is w^t for the whole round (the driver loads it into the model before this call).
  const GradientHook hook = proximalHook(mu_, c.global.data());
  trainAndSend(c, out, mu_ > 0.0 ? &hook : nullptr);
}

std::vector<OptionSpec> fedProxOptions() {
  return {{"fedprox.mu", "0.1", "FedProx proximal coefficient mu >= 0 (mu/2 ||w - w^t||^2; 0 = FedAvg)"}};
}

std::unique_ptr<Algorithm> makeFedProx(const ExperimentConfig& cfg) {
  return std::make_unique<FedProx>(cfg.algo.getDouble("fedprox.mu", 0.0, 1e6));
}

}  // namespace fedsilo
