#include "app/async_options.hpp"

#include "app/raw_values.hpp"
#include "fl/async_algorithm.hpp"

namespace fedsilo {

namespace {

// The registered asynchronous algorithms (for the error message only), made for a federation large
// enough for every algorithm's defaults (fedbuff.buffer_size is at most the client count).
std::string asyncNames(ExperimentConfig c) {
  c.clients = 1 << 20;
  return algorithmNamesWhere(c, [](Algorithm& a) { return a.asynchronous() != nullptr; });
}

// A setting that needs synchronous rounds, refused with an asynchronous algorithm.
void refuse(bool set, const RawValues& raw, const std::string& key, const ExperimentConfig& c, const std::string& why) {
  if (set)
    throw ConfigError(
        fmt(key, " = ", raw.trimmed(key), ": not with algorithm = ", c.algorithm, " (asynchronous: ", why, ")"));
}

void refuseRoundSettings(const RawValues& raw, const ExperimentConfig& c, const AsyncAlgorithm& alg) {
  refuse(c.fl.maxConcurrency != 0 && !alg.acceptsConcurrencyLimit(), raw, "fl.max_concurrency", c,
         "its scheduler keeps every silo training");
  refuse(c.fl.clientsPerRound != 0, raw, "fl.clients_per_round", c,
         alg.acceptsConcurrencyLimit() ? "every silo runs jobs; fl.max_concurrency limits how many at once"
                                       : "every silo runs jobs");
  refuse(c.fl.dropout > 0.0, raw, "fl.dropout", c, "no rounds to drop out of");
  refuse(c.fl.skipDiverged, raw, "fl.skip_diverged", c, "a dropped update would change the schedule");
  refuse(c.system.deadlineSeconds > 0.0, raw, "fl.deadline_seconds", c, "no rounds to close");
  refuse(c.system.serverBandwidthMbps > 0.0, raw, "system.server_bandwidth_mbps", c,
         "the schedule prices each upload over its own link");
  refuse(c.system.serverSeconds > 0.0, raw, "system.server_seconds", c, "server steps take no simulated time");
  refuse(c.privacy.any(), raw, c.privacy.secureAggregation ? "privacy.secure_aggregation" : "privacy.level", c,
         "no private or secure asynchronous aggregation");
  refuse(c.robust.gathersUpdates() || c.robust.attack.kind != AttackKind::None, raw,
         c.robust.aggregator.kind != AggregatorKind::Mean ? "fl.aggregator" : "attack.kind", c,
         "no robust asynchronous aggregation");
  refuse(c.compress.method != CompressMethod::None, raw, "fl.compress", c, "updates are sent whole");
  refuse(c.eval.point == EvalPoint::AfterLocal, raw, "eval.point", c, "clients are evaluated after server steps");
  refuse(c.train.optimizerState == OptimizerStateMode::Keep, raw, "train.optimizer_state", c,
         "every job starts fresh optimizer moments");
}

}  // namespace

void readAsyncOptions(const std::map<std::string, std::string>& values, ExperimentConfig& c) {
  const RawValues raw(values);
  c.fl.maxConcurrency = raw.smallInteger("fl.max_concurrency", 0, 100000000);
  c.eval.everySeconds = raw.number("eval.every_seconds", 0.0, 1e15);
  const std::unique_ptr<Algorithm> alg = makeAlgorithm(c);
  const AsyncAlgorithm* async = alg->asynchronous();
  if (async == nullptr) {
    const bool concurrency = c.fl.maxConcurrency != 0;
    if (concurrency || c.eval.everySeconds > 0.0) {
      const std::string key = concurrency ? "fl.max_concurrency" : "eval.every_seconds";
      throw ConfigError(fmt(key, " = ", raw.trimmed(key), ": algorithm = ", c.algorithm,
                            " runs synchronous rounds; the option applies to the asynchronous algorithms (",
                            asyncNames(c), ") only"));
    }
    return;
  }
  refuseRoundSettings(raw, c, *async);
}

}  // namespace fedsilo
