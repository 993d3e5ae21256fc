#include "app/robust_options.hpp"

#include <algorithm>
#include <set>

#include "app/raw_values.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "fl/algorithm.hpp"

namespace fedsilo {

std::vector<OptionSpec> robustOptions() {
  return {
      {"fl.aggregator", "mean",
       "how the server combines the updates: " + joinNames<AggregatorKind>(" | ", true) +
           "; anything but mean needs every update, not only their sum (docs/robustness.md)"},
      {"fl.trim_fraction", "0.1", "trimmed_mean: beta in [0, 0.5), the share cut from each side per coordinate"},
      {"fl.byzantine", "0", "krum, multi_krum: f, the Byzantine clients tolerated (needs 2f + 3 updates a round)"},
      {"fl.krum_m", "0", "multi_krum: m, the updates of best score averaged (0: the round's updates - f)"},
      {"fl.geomed_iterations", "10", "geomed: Weiszfeld iterations at most (>= 1)"},
      {"fl.geomed_eps", "1e-6", "geomed: nu in (0, 1), the least distance and the relative stopping tolerance"},
      {"fl.clip_tau", "10", "centered_clip: the clipping radius tau > 0 around the last aggregate"},
      {"fl.clip_iterations", "1", "centered_clip: clipping iterations l (>= 1)"},
      {"fl.clip_norm", "10", "norm_clip: the L2 bound (> 0) of each update before the mean"},
      {"fl.aggregator_memory_mb", "4096",
       "the most memory (MB) rank 0 may use for the gathered updates, 2 x 4 bytes x clients a round x parameters; "
       "a run above it is refused at start-up"},
      {"attack.kind", "none", "what the malicious silos do: " + joinNames<AttackKind>(" | ", true)},
      {"attack.clients", "0", "number of malicious silos, drawn from the seed (or give attack.client_ids)"},
      {"attack.client_ids", "", "the malicious silos' ids, comma-separated (instead of attack.clients)"},
      {"attack.scale", "0", "sign_flip, scale: s (0: sign_flip 1, scale the number of clients in the round)"},
      {"attack.z", "0", "alie: z (0: the paper's z_max from the round's clients and malicious count)"},
      {"attack.epsilon", "0.1", "ipm: epsilon > 0 in -epsilon x mean of the honest updates"},
      {"attack.start_round", "0", "first round in which the malicious silos attack (honest before)"},
  };
}

namespace {

AggregatorConfig readAggregator(const RawValues& raw) {
  AggregatorConfig a;
  a.kind = raw.choice<AggregatorKind>("fl.aggregator");
  a.trimFraction = raw.number("fl.trim_fraction", 0.0, 0.5, false, true);
  a.byzantine = raw.smallInteger("fl.byzantine", 0, 1000000);
  a.krumM = raw.smallInteger("fl.krum_m", 0, 1000000);
  a.geomedIterations = raw.smallInteger("fl.geomed_iterations", 1, 1000000);
  a.geomedEps = raw.number("fl.geomed_eps", 0.0, 1.0, true, true);
  a.clipTau = raw.number("fl.clip_tau", 0.0, 1e300, true);
  a.clipIterations = raw.smallInteger("fl.clip_iterations", 1, 1000000);
  a.clipNorm = raw.number("fl.clip_norm", 0.0, 1e300, true);
  a.memoryMb = raw.number("fl.aggregator_memory_mb", 0.0, 1e12, true);
  return a;
}

AttackConfig readAttack(const RawValues& raw, int clients) {
  AttackConfig t;
  t.kind = raw.choice<AttackKind>("attack.kind");
  t.clients = raw.smallInteger("attack.clients", 0, clients);
  const std::string ids = trim(raw.text("attack.client_ids"));
  if (!ids.empty()) t.clientIds = parseIntList(ids, "attack.client_ids");
  std::set<int> seen;
  for (int k : t.clientIds) {
    if (k < 0 || k >= clients)
      throw ConfigError(fmt("attack.client_ids = ", ids, ": client ", k, " is not in [0, ", clients - 1, "]"));
    if (!seen.insert(k).second) throw ConfigError(fmt("attack.client_ids = ", ids, ": client ", k, " is listed twice"));
  }
  t.scale = raw.number("attack.scale", -1e12, 1e12);
  t.z = raw.number("attack.z", -1e6, 1e6);
  t.epsilon = raw.number("attack.epsilon", 0.0, 1e12, true);
  t.startRound = raw.smallInteger("attack.start_round", 0, 100000000);
  if (t.clients > 0 && !t.clientIds.empty())
    throw ConfigError(
        fmt("attack.clients = ", t.clients, " and attack.client_ids = ", ids, ": give one of them, not both"));
  if (t.any() && t.clients == 0 && t.clientIds.empty())
    throw ConfigError(fmt("attack.kind = ", t.kind, ": no malicious silos (set attack.clients or attack.client_ids)"));
  if (!t.any() && (t.clients > 0 || !t.clientIds.empty()))
    throw ConfigError("attack.clients / attack.client_ids: malicious silos given but attack.kind = none");
  return t;
}

// What robust aggregation cannot run with: secure aggregation hides the individual updates; client-level
// DP's guarantee covers the noised sum, not a robust statistic of unnoised updates.
void checkCombinations(const RobustConfig& r, const ExperimentConfig& cfg) {
  if (!r.gathersUpdates()) return;
  const std::string what = r.aggregator.kind != AggregatorKind::Mean ? fmt("fl.aggregator = ", r.aggregator.kind)
                                                                     : fmt("attack.kind = ", r.attack.kind);
  if (cfg.privacy.secureAggregation)
    throw ConfigError(what +
                      ": needs the individual updates, which privacy.secure_aggregation hides (use one or the other)");
  if (cfg.privacy.clientLevel())
    throw ConfigError(what +
                      ": not with privacy.level = client, whose guarantee covers the noised sum only "
                      "(docs/robustness.md; privacy.level = sample works)");
  if (!makeAlgorithm(cfg)->acceptsRobustAggregation())
    throw ConfigError(fmt(what, ": algorithm = ", cfg.algorithm,
                          " does not set the global model to a mean of the clients' updates; robust aggregation and "
                          "model-poisoning attacks apply to fedavg, fedprox, ditto and fedbabu"));
}

}  // namespace

RobustConfig readRobust(const std::map<std::string, std::string>& values, const ExperimentConfig& cfg) {
  const RawValues raw(values);
  RobustConfig r;
  r.aggregator = readAggregator(raw);
  r.attack = readAttack(raw, cfg.clients);
  checkCombinations(r, cfg);
  const int perRound = cfg.fl.clientsPerRound > 0 ? std::min(cfg.fl.clientsPerRound, cfg.clients) : cfg.clients;
  const int needed = 2 * r.aggregator.byzantine + 3;
  const bool krum = r.aggregator.kind == AggregatorKind::Krum || r.aggregator.kind == AggregatorKind::MultiKrum;
  if (krum && perRound < needed)
    throw ConfigError(fmt("fl.byzantine = ", r.aggregator.byzantine, ": ", r.aggregator.kind,
                          " needs at least 2f + 3 = ", needed, " clients a round, the run has ", perRound));
  if (r.aggregator.kind == AggregatorKind::MultiKrum && r.aggregator.krumM > perRound)
    throw ConfigError(fmt("fl.krum_m = ", r.aggregator.krumM, ": more than the ", perRound, " clients a round"));
  return r;
}

}  // namespace fedsilo
