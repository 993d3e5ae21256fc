#include "fl/algorithms/ditto.hpp"

#include <cstring>

#include "fl/gradient_hooks.hpp"

namespace fedsilo {

void Ditto::clientUpdate(ClientContext& c, ClientUpdate& out) {
  const std::size_t P = static_cast<std::size_t>(c.model.numParams());
  // 1. The global update step: FedAvg's local training from w^t.
  trainAndSend(c, out);
  sent_.assign(c.model.params(), c.model.params() + P);
  // 2. The personal model, regularised towards w^t (the round's global model), own shuffle stream.
  std::vector<float>& v = personal_.get(c.client.id, c.global);
  std::memcpy(c.model.params(), v.data(), P * sizeof(float));
  const GradientHook hook = proximalHook(lambda_, c.global.data());
  Rng rng(c.fl.cfg.seed, c.client.id, c.round, Purpose::Shuffle, 1);
  c.trainer.train(c.model, c.client.train, c.trainOptions(ModelRole::Personal), rng, c.client.id, c.round,
                  lambda_ > 0.0 ? &hook : nullptr);
  std::memcpy(v.data(), c.model.params(), P * sizeof(float));
  // The model leaves holding the trained global copy (what is sent and what sensitivity measures).
  std::memcpy(c.model.params(), sent_.data(), P * sizeof(float));
  out.vector = c.model.params();
}

std::vector<OptionSpec> dittoOptions() {
  return {{"ditto.lambda", "0.1", "Ditto regularisation lambda >= 0 of the personal model towards the global one"}};
}

std::unique_ptr<Algorithm> makeDitto(const ExperimentConfig& cfg) {
  return std::make_unique<Ditto>(cfg.algo.getDouble("ditto.lambda", 0.0, 1e6));
}

}  // namespace fedsilo
