// The typed system-model options (system.*, fl.deadline_seconds, eval.target_*; docs/system.md):
// parsed and checked once by app/system_options (the distribution specs by sim/distribution), read
// by src/sim and fl/round_clock.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace fedsilo {

// How a per-silo quantity is spread over the silos (docs/system.md, "Distribution specs").
enum class DistributionKind { Constant, List, Uniform, Lognormal, File };

struct DistributionSpec {
  DistributionKind kind = DistributionKind::Constant;
  // constant: {x}; list: the items (client k takes item k mod n); uniform: {a, b}; lognormal: {mu, sigma}
  // (exp of N(mu, sigma^2)); file: one value per client, index = client id (read at start-up).
  std::vector<double> values;
  std::string text;  // as configured, for messages
};

// What eval.target_accuracy compares: the global model's test accuracy, or the mean client accuracy of
// the round line.
enum class TargetMetric { Global, MeanClient };

struct SystemConfig {
  // Per-silo quantities; an unset one costs nothing (compute and links free, no latency, no jitter).
  std::optional<DistributionSpec> computeGflops;  // effective training rate, GFLOP/s
  std::optional<DistributionSpec> uplinkMbps;     // system.uplink_mbps, else system.bandwidth_mbps
  std::optional<DistributionSpec> downlinkMbps;   // system.downlink_mbps, else system.bandwidth_mbps
  bool symmetricLink = false;                     // both directions from system.bandwidth_mbps: one draw
  std::optional<DistributionSpec> latencyMs;      // one-way, per message
  std::optional<DistributionSpec> jitter;         // sigma of the per-round lognormal compute factor
  double serverBandwidthMbps = 0.0;               // the server's link, shared by overlapping uploads; 0: unlimited
  double serverSeconds = 0.0;                     // the server step's simulated time per round
  double deadlineSeconds = 0.0;                   // fl.deadline_seconds; 0: none
  double targetAccuracy = 0.0;                    // eval.target_accuracy; 0: none
  TargetMetric targetMetric = TargetMetric::Global;

  // Whether the system model is on: any silo quantity or server figure set.
  bool enabled() const {
    return computeGflops || uplinkMbps || downlinkMbps || latencyMs || serverBandwidthMbps > 0.0 || serverSeconds > 0.0;
  }
};

}  // namespace fedsilo
