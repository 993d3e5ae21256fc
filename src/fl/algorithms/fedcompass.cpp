#include "fl/algorithms/fedcompass.hpp"

#include "sim/compass_schedule.hpp"

namespace fedsilo {

AsyncSchedule FedCompass::schedule(AsyncPolicy policy, const JobSeconds& seconds) const {
  return buildCompassSchedule(policy.clients, policy.versions, options_, seconds);
}

double FedCompass::updateWeight(double samples, int staleness) const { return weight_(staleness) * samples; }

void FedCompass::serverStep(const FlContext& ctx, const AsyncServerInput& in, std::vector<float>& global) {
  // N: every silo's training samples, so that a group of all silos from one version with alpha = 1 and
  // no staleness moves the model by FedAvg's weighted mean, and a smaller group by its share of it.
  double total = 0.0;
  for (const ClientData& c : ctx.clients) total += static_cast<double>(c.numTrain());
  if (!(total > 0.0)) return;
  for (Index i = 0; i < ctx.numParams; ++i) {
    const auto at = static_cast<std::size_t>(i);
    global[at] = static_cast<float>(global[at] + (*in.sum)[at] / total);
  }
}

std::vector<OptionSpec> fedCompassOptions() {
  return {
      {"fedcompass.q_min", "20", "FedCompass fewest local steps a silo is given (integer >= 1)"},
      {"fedcompass.q_max", "100", "FedCompass most local steps (integer >= q_min); every silo's first job"},
      {"fedcompass.lambda", "1.2",
       "FedCompass group latest arrival = opening time + lambda x expected duration (lambda >= 1)"},
      {"fedcompass.speed_momentum", "0.9",
       "FedCompass weight of the newest observed seconds per step in a silo's speed estimate, in (0, 1]"},
      {"fedcompass.alpha", "0.9", "FedCompass server step size alpha in (0, 1]: x <- x + alpha sum s(tau) n/N Delta"},
      {"fedcompass.staleness", "constant", "FedCompass staleness function s(tau): constant | polynomial | hinge"},
      {"fedcompass.a", "0.5", "FedCompass staleness parameter a >= 0 (polynomial: (tau+1)^-a; hinge: 1/(a(tau-b)+1))"},
      {"fedcompass.b", "4", "FedCompass hinge staleness threshold b >= 0 (s = 1 for tau <= b)"}};
}

std::unique_ptr<Algorithm> makeFedCompass(const ExperimentConfig& cfg) {
  CompassOptions o;
  o.qMin = static_cast<int>(cfg.algo.getInt("fedcompass.q_min", -1000000000, 1000000000));
  o.qMax = static_cast<int>(cfg.algo.getInt("fedcompass.q_max", -1000000000, 1000000000));
  o.lambda = cfg.algo.getDouble("fedcompass.lambda", 1.0, 1e9);
  o.speedMomentum = cfg.algo.getDouble("fedcompass.speed_momentum", 0.0, 1.0);  // 0 refused below
  validateCompassOptions(o);
  return std::make_unique<FedCompass>(o, StalenessWeight::read(cfg, "fedcompass"));
}

}  // namespace fedsilo
