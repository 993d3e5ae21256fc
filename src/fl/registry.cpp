// The registry of algorithms: one explicit table of the built-in ones, then those a program of its own
// adds with registerAlgorithm before parsing (no self-registering statics, no macros).
#include <cctype>
#include <stdexcept>

#include "core/error.hpp"
#include "fl/algorithm.hpp"
#include "fl/algorithms/alpha_fedavg.hpp"
#include "fl/algorithms/average.hpp"
#include "fl/algorithms/ditto.hpp"
#include "fl/algorithms/ensemble.hpp"
#include "fl/algorithms/fedasync.hpp"
#include "fl/algorithms/fedcompass.hpp"
#include "fl/algorithms/fedavg.hpp"
#include "fl/algorithms/fedbabu.hpp"
#include "fl/algorithms/fedbuff.hpp"
#include "fl/algorithms/fedfa.hpp"
#include "fl/algorithms/fedlp.hpp"
#include "fl/algorithms/fedprox.hpp"
#include "fl/algorithms/gems.hpp"
#include "fl/algorithms/global.hpp"
#include "fl/algorithms/local.hpp"
#include "fl/algorithms/oneshot_local.hpp"
#include "fl/algorithms/pfedme.hpp"
#include "fl/algorithms/playerfl.hpp"
#include "fl/algorithms/playerfl_random.hpp"
#include "fl/algorithms/public_only.hpp"
#include "fl/algorithms/qffl.hpp"

namespace fedsilo {

namespace {

std::vector<AlgorithmEntry> builtInAlgorithms() {
  return {
      {"fedavg", &makeFedAvg, "FedAvg: sample-weighted average of the clients' models", nullptr},
      {"local", &makeLocal, "Local: every client trains alone, no communication", nullptr},
      {"gems", &makeGems,
       "GEMS (Guha & Smith 2018): intersection of good-enough model balls; rounds = 1 (convex, ellipsoid) or 2 "
       "(neuron-wise mlp)",
       &oneShotOptionSpecs, &gemsRounds},
      {"average", &makeOneShotAverage, "One-shot naive average of the clients' local models (GEMS baseline)", nullptr, &oneShotSingleRound},
      {"ensemble", &makeOneShotEnsemble, "One-shot majority-vote ensemble of the local models (GEMS baseline)",
       nullptr, &oneShotSingleRound},
      {"oneshot_local", &makeOneShotLocal, "One-shot local models, scored on the test set as the GEMS paper's Local",
       nullptr, &oneShotSingleRound},
      {"global", &makeOneShotGlobal, "One-shot: one model trained on the pooled data of all clients (GEMS baseline)",
       nullptr, &oneShotSingleRound},
      {"public_only", &makeOneShotPublicOnly, "One-shot: a model trained on the public sample alone (GEMS baseline)",
       nullptr, &oneShotSingleRound},
      {"alpha_fedavg", &makeAlphaFedAvg,
       "alpha-FedAvg: alpha-fair aggregation weights a_k^(1/alpha-1), alpha from the efficiency target",
       &alphaFedAvgOptions},
      {"qffl", &makeQFfl, "q-FFL/q-FedAvg (Li et al. 2020), as the authors' code: loss-reweighted updates",
       &qfflOptions},
      {"fedfa", &makeFedFa, "FedFa (reconstructed): accuracy/frequency information-quantity weights, double momentum",
       &fedFaOptions},
      {"playerfl", &makePlayerFl, "PLayer-FL: federate the layers before the sensitivity jump, keep the rest local",
       &playerFlOptions},
      {"playerfl_random", &makePlayerFlRandom, "PLayer-FL-Random: as playerfl with a random split (uses playerfl.*)",
       nullptr},
      {"fedprox", &makeFedProx, "FedProx: FedAvg with the proximal term mu/2 ||w - w^t||^2", &fedProxOptions},
      {"pfedme", &makePFedMe, "pFedMe: Moreau-envelope personalisation (personal theta, local w, server beta)",
       &pFedMeOptions},
      {"ditto", &makeDitto, "Ditto: FedAvg plus a personal model regularised towards the global one", &dittoOptions},
      {"fedbabu", &makeFedBabu, "FedBABU: frozen head during FL, averaged body, head fine-tuning at the end",
       &fedBabuOptions},
      {"fedlp", &makeFedLp, "FedLP: each client uploads each layer with probability fedlp.keep_prob", &fedLpOptions},
      {"fedasync", &makeFedAsync,
       "FedAsync (Xie et al. 2019): asynchronous, each arrival mixed in with weight alpha s(staleness)",
       &fedAsyncOptions},
      {"fedbuff", &makeFedBuff,
       "FedBuff (Nguyen et al. 2022): asynchronous, server step on a buffer of fedbuff.buffer_size deltas",
       &fedBuffOptions},
      {"fedcompass", &makeFedCompass,
       "FedCompass (Li et al. 2024): semi-asynchronous, local steps per silo speed, groups aggregated at once",
       &fedCompassOptions},
  };
}

// The built-in table, then the registered entries.
std::vector<AlgorithmEntry>& registry() {
  static std::vector<AlgorithmEntry> table = builtInAlgorithms();
  return table;
}

bool validName(const char* name) {
  if (name == nullptr || !std::islower(static_cast<unsigned char>(name[0]))) return false;
  for (const char* c = name; *c != '\0'; ++c)
    if (!std::islower(static_cast<unsigned char>(*c)) && !std::isdigit(static_cast<unsigned char>(*c)) && *c != '_')
      return false;
  return true;
}

void checkNewOptions(const AlgorithmEntry& entry) {
  if (!entry.options) return;
  for (const auto& mine : entry.options())
    for (const auto& e : registry())
      if (e.options)
        for (const auto& theirs : e.options())
          if (mine.key == theirs.key)
            throw std::invalid_argument(fmt("registerAlgorithm(", entry.name, "): option ", mine.key,
                                            " is already declared by algorithm ", e.name));
}

// The algorithms whose server step goes through the aggregation helpers (for the error message only).
std::string serverOptimizerAlgorithms(const ExperimentConfig& cfg) {
  return algorithmNamesWhere(cfg, [](Algorithm& a) { return a.acceptsServerOptimizer(); });
}

// The protocol options that not every algorithm can take (fl.server_optimizer, eval.point).
void checkProtocolFit(const ExperimentConfig& cfg, const AlgorithmEntry& entry, const Algorithm& alg) {
  const ServerOptimizerKind optimizer = cfg.fl.serverOptimizer.kind;
  if (optimizer != ServerOptimizerKind::None && !alg.acceptsServerOptimizer())
    throw ConfigError(fmt("fl.server_optimizer = ", optimizer, ": algorithm = ", cfg.algorithm,
                          " does not average the clients' models into the global one; a server optimizer applies to ",
                          serverOptimizerAlgorithms(cfg), " (or set fl.server_optimizer = none)"));
  if (cfg.eval.point == EvalPoint::AfterLocal && entry.oneShotRounds)
    throw ConfigError(fmt("eval.point = after_local: algorithm = ", cfg.algorithm,
                          " is one-shot (the server builds the final model from the local ones); use eval.point = "
                          "after_aggregation"));
}

}  // namespace

const std::vector<AlgorithmEntry>& algorithmRegistry() { return registry(); }

void registerAlgorithm(const AlgorithmEntry& entry) {
  const std::string name = entry.name ? entry.name : "";
  if (!validName(entry.name))
    throw std::invalid_argument(fmt("registerAlgorithm: name '", name,
                                    "': expected lower-case letters, digits and '_', starting with a letter"));
  if (entry.make == nullptr) throw std::invalid_argument(fmt("registerAlgorithm(", name, "): no factory (make)"));
  if (entry.summary == nullptr || entry.summary[0] == '\0')
    throw std::invalid_argument(fmt("registerAlgorithm(", name, "): no summary (it is listed in --help)"));
  if (findAlgorithm(name))
    throw std::invalid_argument(fmt("registerAlgorithm(", name, "): an algorithm of that name is already registered"));
  checkNewOptions(entry);
  registry().push_back(entry);
}

std::unique_ptr<Algorithm> makeAlgorithm(const ExperimentConfig& cfg) {
  std::string names;
  for (const auto& e : algorithmRegistry()) {
    if (cfg.algorithm == e.name) {
      std::unique_ptr<Algorithm> alg = e.make(cfg);
      checkProtocolFit(cfg, e, *alg);
      return alg;
    }
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  }
  throw ConfigError(fmt("algorithm = ", cfg.algorithm, ": unknown algorithm, expected one of ", names));
}

std::string algorithmNamesWhere(ExperimentConfig cfg, const std::function<bool(Algorithm&)>& test) {
  std::string names;
  for (const auto& e : algorithmRegistry()) {
    cfg.algorithm = e.name;
    try {
      if (test(*e.make(cfg))) names += (names.empty() ? "" : ", ") + std::string(e.name);
    } catch (const ConfigError&) {  // its own options do not fit this configuration: not listed
    }
  }
  return names;
}

const AlgorithmEntry* findAlgorithm(const std::string& name) {
  for (const auto& e : algorithmRegistry())
    if (name == e.name) return &e;
  return nullptr;
}

std::vector<OptionSpec> allAlgorithmOptions() {
  std::vector<OptionSpec> out;
  for (const auto& e : algorithmRegistry())
    if (e.options)
      for (auto& o : e.options()) out.push_back(o);
  return out;
}

}  // namespace fedsilo
