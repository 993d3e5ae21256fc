// The one explicit registry of algorithms: no self-registering statics, no macros.
#include "core/error.hpp"
#include "fl/algorithm.hpp"
#include "fl/fedavg.hpp"
#include "fl/local.hpp"

namespace fedsilo {

const std::vector<AlgorithmEntry>& algorithmRegistry() {
  static const std::vector<AlgorithmEntry> table = {
      {"fedavg", &makeFedAvg, "FedAvg: sample-weighted average of the clients' models", nullptr},
      {"local", &makeLocal, "Local: every client trains alone, no communication", nullptr},
  };
  return table;
}

std::unique_ptr<Algorithm> makeAlgorithm(const ExperimentConfig& cfg) {
  std::string names;
  for (const auto& e : algorithmRegistry()) {
    if (cfg.algorithm == e.name) return e.make(cfg);
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  throw ConfigError(fmt("algorithm = ", cfg.algorithm, ": unknown algorithm, expected one of ", names));
}

std::vector<OptionSpec> allAlgorithmOptions() {
  std::vector<OptionSpec> out;
  for (const auto& e : algorithmRegistry())
    if (e.options)
      for (auto& o : e.options()) out.push_back(o);
  return out;
}

}  // namespace fedsilo
