// The simulated deployment's silos: each silo's compute rate, links and latency drawn once from the
// configuration (keyed by seed, client and quantity), and the per-round jitter of its compute time
// (keyed by seed, client and round). No MPI: every rank builds the same model for all K silos.
#pragma once
#include <cstdint>
#include <vector>

#include "core/system_config.hpp"

namespace fedsilo {

// One silo. An unset quantity is free: infinite rate, zero latency or jitter.
struct SiloProfile {
  double computeGflops = 0.0;  // effective training rate, GFLOP/s
  double uplinkMbps = 0.0, downlinkMbps = 0.0;
  double latencyMs = 0.0;    // one-way, per message
  double jitterSigma = 0.0;  // sigma of the per-round lognormal factor on the compute time
};

// The Rng `extra` of each drawn quantity (part of the reproducibility contract: never renumber).
enum class SystemQuantity : std::uint64_t {
  Compute = 1,
  Bandwidth = 2,
  Uplink = 3,
  Downlink = 4,
  Latency = 5,
  Jitter = 6
};

class SystemModel {
 public:
  SystemModel(const SystemConfig& cfg, std::uint64_t seed, int clients);

  bool enabled() const { return cfg_.enabled(); }
  int clients() const { return static_cast<int>(profiles_.size()); }
  const SiloProfile& profile(int client) const { return profiles_.at(static_cast<std::size_t>(client)); }
  const SystemConfig& config() const { return cfg_; }

  // The factor exp(sigma_k Z) on client k's compute time in `round`, Z ~ N(0, 1) keyed by (seed, k,
  // round); 1 without jitter.
  double jitterFactor(int client, int round) const;
  // The silo's local training in `round`: samples x flopsPerSample at its rate, times its jitter.
  double computeSeconds(int client, int round, double flopsPerSample, double samples) const;
  double downloadSeconds(int client, double bytes) const;
  // Over the silo's own uplink (the shared server link aside: sim/sync_round).
  double uploadSeconds(int client, double bytes) const;

 private:
  SystemConfig cfg_;
  std::uint64_t seed_;
  std::vector<SiloProfile> profiles_;
};

}  // namespace fedsilo
