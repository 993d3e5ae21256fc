#include "app/system_options.hpp"

#include "app/raw_values.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "fl/algorithm.hpp"
#include "sim/distribution.hpp"

namespace fedsilo {

namespace {

const char* const kSpecHelp =
    "a distribution spec over the silos: X or constant:X, list:a,b,... (client k takes item k mod n), uniform:a,b, "
    "lognormal:mu,sigma (exp of N(mu, sigma^2)), file:PATH (CSV rows client,value)";

}  // namespace

std::vector<OptionSpec> systemOptions() {
  const std::string spec = kSpecHelp;
  return {
      {"system.compute_gflops", "",
       "simulated deployment (docs/system.md): each silo's effective training rate in GFLOP/s (> 0), " + spec +
           "; empty: training costs no simulated time (fedsilo calibrate measures this machine's)"},
      {"system.bandwidth_mbps", "",
       "each silo's link in Mbit/s (> 0), both directions (one draw), " + spec +
           "; empty: transfers cost no time beyond the latency"},
      {"system.uplink_mbps", "", "each silo's uplink in Mbit/s (> 0), instead of system.bandwidth_mbps for uploads"},
      {"system.downlink_mbps", "",
       "each silo's downlink in Mbit/s (> 0), instead of system.bandwidth_mbps for downloads"},
      {"system.latency_ms", "", "one-way latency of each message in ms (>= 0), " + spec + "; empty: 0"},
      {"system.jitter", "",
       "sigma (>= 0) of the per-round factor exp(sigma Z), Z ~ N(0, 1) keyed by seed, silo and round, on each silo's "
       "compute time, " +
           spec + "; needs system.compute_gflops"},
      {"system.server_bandwidth_mbps", "0",
       "the server's link in Mbit/s, shared max-min fairly by the uploads that overlap in time (0: unlimited)"},
      {"system.server_seconds", "0", "simulated seconds of the server step each round (>= 0)"},
      {"fl.deadline_seconds", "0",
       "a selected silo whose simulated download + compute + upload takes longer does not enter the round's "
       "aggregate (participated = -2; 0: no deadline; needs the system model)"},
      {"eval.target_accuracy", "0",
       "the accuracy whose first attainment /summary/rounds_to_target and time_to_target record, in (0, 1] (0: none)"},
      {"eval.target_metric", "global",
       "what eval.target_accuracy compares: global (the global model's test accuracy) | mean_client (the mean client "
       "accuracy of the round line)"},
  };
}

namespace {

const ValueRange kPositive{0.0, true};
const ValueRange kNonNegative{0.0, false};

std::optional<DistributionSpec> readSpec(const RawValues& raw, const std::string& key, int clients,
                                         const ValueRange& range) {
  if (raw.trimmed(key).empty()) return std::nullopt;
  return parseDistribution(key, raw.text(key), clients, range);
}

void readLinks(const RawValues& raw, int clients, SystemConfig& s) {
  const auto both = readSpec(raw, "system.bandwidth_mbps", clients, kPositive);
  s.uplinkMbps = readSpec(raw, "system.uplink_mbps", clients, kPositive);
  s.downlinkMbps = readSpec(raw, "system.downlink_mbps", clients, kPositive);
  if (both && s.uplinkMbps && s.downlinkMbps)
    throw ConfigError(fmt("system.bandwidth_mbps = ", raw.text("system.bandwidth_mbps"),
                          ": has no effect, system.uplink_mbps and system.downlink_mbps set both directions"));
  s.symmetricLink = both && !s.uplinkMbps && !s.downlinkMbps;
  if (!s.uplinkMbps) s.uplinkMbps = both;
  if (!s.downlinkMbps) s.downlinkMbps = both;
}

TargetMetric readTargetMetric(const RawValues& raw) {
  const std::string m = raw.trimmed("eval.target_metric");
  if (m == "global") return TargetMetric::Global;
  if (m == "mean_client") return TargetMetric::MeanClient;
  throw ConfigError(
      fmt("eval.target_metric = ", raw.text("eval.target_metric"), ": expected one of global, mean_client"));
}

// What a deadline cannot run with: no clock to compare with; a shared server link, under which one
// silo's upload time depends on every other silo's, known only after their updates entered the
// aggregate; an algorithm that needs every client.
void checkDeadline(const RawValues& raw, const SystemConfig& s, const ExperimentConfig& cfg) {
  if (s.deadlineSeconds <= 0.0) return;
  const std::string what = fmt("fl.deadline_seconds = ", raw.text("fl.deadline_seconds"));
  if (!s.enabled())
    throw ConfigError(what + ": needs the system model (set system.compute_gflops and/or system.bandwidth_mbps)");
  if (s.serverBandwidthMbps > 0.0)
    throw ConfigError(what + ": not with system.server_bandwidth_mbps = " + raw.text("system.server_bandwidth_mbps") +
                      " (each silo's upload time would depend on every other silo's; docs/system.md)");
  if (!makeAlgorithm(cfg)->acceptsDroppedSilos())
    throw ConfigError(fmt(what, ": algorithm = ", cfg.algorithm, " needs every selected client's update (set 0)"));
}

}  // namespace

SystemConfig readSystem(const std::map<std::string, std::string>& values, const ExperimentConfig& cfg) {
  const RawValues raw(values);
  SystemConfig s;
  s.computeGflops = readSpec(raw, "system.compute_gflops", cfg.clients, kPositive);
  readLinks(raw, cfg.clients, s);
  s.latencyMs = readSpec(raw, "system.latency_ms", cfg.clients, kNonNegative);
  s.jitter = readSpec(raw, "system.jitter", cfg.clients, kNonNegative);
  if (s.jitter && !s.computeGflops)
    throw ConfigError(fmt("system.jitter = ", raw.text("system.jitter"), ": applies with system.compute_gflops only"));
  s.serverBandwidthMbps = raw.number("system.server_bandwidth_mbps", 0.0, 1e12);
  s.serverSeconds = raw.number("system.server_seconds", 0.0, 1e12);
  s.deadlineSeconds = raw.number("fl.deadline_seconds", 0.0, 1e12);
  checkDeadline(raw, s, cfg);
  s.targetAccuracy = raw.number("eval.target_accuracy", 0.0, 1.0);
  s.targetMetric = readTargetMetric(raw);
  if (s.targetAccuracy == 0.0 && raw.trimmed("eval.target_metric") != "global")
    throw ConfigError(
        fmt("eval.target_metric = ", raw.text("eval.target_metric"), ": applies with eval.target_accuracy > 0 only"));
  if (s.targetAccuracy > 0.0 && s.targetMetric == TargetMetric::Global && !makeAlgorithm(cfg)->hasGlobalModel())
    throw ConfigError(fmt("eval.target_metric = global: algorithm = ", cfg.algorithm,
                          " has no global model (set eval.target_metric = mean_client)"));
  return s;
}

}  // namespace fedsilo
