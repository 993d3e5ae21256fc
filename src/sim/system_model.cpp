#include "sim/system_model.hpp"

#include <cmath>
#include <limits>

#include "core/rng.hpp"
#include "sim/distribution.hpp"
#include "sim/timing.hpp"

namespace fedsilo {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double drawOr(const std::optional<DistributionSpec>& spec, double unset, std::uint64_t seed, int client,
              SystemQuantity q) {
  return spec ? drawValue(*spec, seed, client, static_cast<std::uint64_t>(q)) : unset;
}

}  // namespace

SystemModel::SystemModel(const SystemConfig& cfg, std::uint64_t seed, int clients) : cfg_(cfg), seed_(seed) {
  profiles_.resize(static_cast<std::size_t>(clients));
  // A symmetric link (system.bandwidth_mbps) is one draw for both directions.
  const SystemQuantity up = cfg.symmetricLink ? SystemQuantity::Bandwidth : SystemQuantity::Uplink;
  const SystemQuantity down = cfg.symmetricLink ? SystemQuantity::Bandwidth : SystemQuantity::Downlink;
  for (int k = 0; k < clients; ++k) {
    SiloProfile& p = profiles_[static_cast<std::size_t>(k)];
    p.computeGflops = drawOr(cfg.computeGflops, kInf, seed, k, SystemQuantity::Compute);
    p.uplinkMbps = drawOr(cfg.uplinkMbps, kInf, seed, k, up);
    p.downlinkMbps = drawOr(cfg.downlinkMbps, kInf, seed, k, down);
    p.latencyMs = drawOr(cfg.latencyMs, 0.0, seed, k, SystemQuantity::Latency);
    p.jitterSigma = drawOr(cfg.jitter, 0.0, seed, k, SystemQuantity::Jitter);
  }
}

double SystemModel::jitterFactor(int client, int round) const {
  const double sigma = profile(client).jitterSigma;
  if (sigma == 0.0) return 1.0;
  Rng rng(seed_, client, round, Purpose::SystemJitter);
  return std::exp(sigma * rng.normal());
}

double SystemModel::computeSeconds(int client, int round, double flopsPerSample, double samples) const {
  return fedsilo::computeSeconds(flopsPerSample, samples, profile(client).computeGflops) * jitterFactor(client, round);
}

double SystemModel::downloadSeconds(int client, double bytes) const {
  const SiloProfile& p = profile(client);
  return transferSeconds(bytes, p.downlinkMbps, p.latencyMs);
}

double SystemModel::uploadSeconds(int client, double bytes) const {
  const SiloProfile& p = profile(client);
  return transferSeconds(bytes, p.uplinkMbps, p.latencyMs);
}

}  // namespace fedsilo
