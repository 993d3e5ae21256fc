#include "privacy/client_dp.hpp"

#include <cmath>

#include "core/error.hpp"
#include "privacy/gaussian.hpp"

namespace fedsilo {

namespace {
void checkRate(double q) {
  if (!(q >= 0.0 && q <= 1.0)) throw ConfigError(fmt("sampling rate q = ", q, ": expected a number in [0, 1]"));
}
}  // namespace

bool poissonSelected(std::uint64_t seed, std::int64_t client, std::int64_t round, double q) {
  checkRate(q);
  return Rng(seed, client, round, Purpose::DpSample).uniform() < q;
}

std::vector<int> poissonSample(std::uint64_t seed, std::int64_t round, int numClients, double q) {
  checkRate(q);
  std::vector<int> selected;
  for (int k = 0; k < numClients; ++k)
    if (Rng(seed, k, round, Purpose::DpSample).uniform() < q) selected.push_back(k);
  return selected;
}

double l2Norm(const float* x, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return std::sqrt(s);
}

double clipL2(float* x, std::size_t n, double clip) {
  if (!(clip > 0.0) || std::isinf(clip)) throw ConfigError(fmt("clip = ", clip, ": expected a finite number > 0"));
  const double norm = l2Norm(x, n);
  if (!std::isfinite(norm)) throw NumericError(fmt("clipping: the update's L2 norm is ", norm));
  if (norm > clip) {
    const double scale = clip / norm;
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] * scale);
  }
  return norm;
}

Rng centralNoiseRng(std::uint64_t seed, std::int64_t round) { return Rng(seed, -1, round, Purpose::DpNoise); }

Rng clientNoiseRng(std::uint64_t seed, std::int64_t client, std::int64_t round) {
  FEDSILO_ASSERT(client >= 0, "client noise needs a client id >= 0");
  return Rng(seed, client, round, Purpose::DpNoise);
}

double distributedNoiseStd(double noiseMultiplier, double clip, int clients) {
  if (clients < 1) throw ConfigError(fmt("distributed noise over ", clients, " clients: expected >= 1"));
  return noiseMultiplier * clip / std::sqrt(static_cast<double>(clients));
}

double distributedTopUpStd(double noiseMultiplier, double clip, int shares, int clients) {
  if (shares < 0 || shares > clients)
    throw ConfigError(fmt("distributed noise: ", shares, " shares of ", clients, " clients: expected 0..clients"));
  if (clients == 0) return noiseMultiplier * clip;
  const double missing = static_cast<double>(clients - shares) / clients;
  return noiseMultiplier * clip * std::sqrt(missing);
}

void addGaussianNoise(float* x, std::size_t n, double stddev, Rng& rng) { addScaledNormals(x, n, stddev, rng); }

void addGaussianNoise(double* x, std::size_t n, double stddev, Rng& rng) { addScaledNormals(x, n, stddev, rng); }

AdaptiveClip::AdaptiveClip(const AdaptiveClipOptions& options) : opt_(options), clip_(options.initialClip) {
  if (!(opt_.initialClip > 0.0) || std::isinf(opt_.initialClip))
    throw ConfigError(fmt("adaptive clip: initial clip = ", opt_.initialClip, ": expected a finite number > 0"));
  if (!(opt_.targetQuantile > 0.0 && opt_.targetQuantile < 1.0))
    throw ConfigError(fmt("adaptive clip: target quantile = ", opt_.targetQuantile, ": expected a number in (0, 1)"));
  if (!(opt_.learningRate > 0.0) || std::isinf(opt_.learningRate))
    throw ConfigError(fmt("adaptive clip: learning rate = ", opt_.learningRate, ": expected a finite number > 0"));
  if (!(opt_.countStd >= 0.0) || std::isinf(opt_.countStd))
    throw ConfigError(fmt("adaptive clip: count noise std = ", opt_.countStd, ": expected a finite number >= 0"));
}

double AdaptiveClip::update(int clientsAtOrBelow, int sampledClients, double expectedClients, std::uint64_t seed,
                            std::int64_t round) {
  FEDSILO_ASSERT(clientsAtOrBelow >= 0 && clientsAtOrBelow <= sampledClients, clientsAtOrBelow, " of ", sampledClients);
  FEDSILO_ASSERT(expectedClients > 0.0, "expected clients ", expectedClients);
  double centred = clientsAtOrBelow - 0.5 * sampledClients;
  if (opt_.countStd > 0.0) centred += opt_.countStd * Rng(seed, -1, round, Purpose::DpClipCount).normal();
  const double fraction = centred / expectedClients + 0.5;
  clip_ *= std::exp(-opt_.learningRate * (fraction - opt_.targetQuantile));
  return fraction;
}

void AdaptiveClip::restore(double clip) {
  if (!(clip > 0.0) || std::isinf(clip)) throw RuntimeError(fmt("adaptive clip state: clip = ", clip, " is not > 0"));
  clip_ = clip;
}

double updateNoiseMultiplier(double target, double countStd) {
  if (!(target > 0.0) || std::isinf(target))
    throw ConfigError(fmt("noise multiplier = ", target, ": expected a finite number > 0"));
  if (countStd == 0.0) throw ConfigError("adaptive clipping needs count noise (count std > 0) to be private");
  const double inv = 1.0 / (target * target) - 1.0 / (4.0 * countStd * countStd);
  if (!(inv > 0.0))
    throw ConfigError(fmt("adaptive clipping: count noise std = ", countStd, " is too small for noise multiplier ",
                          target, " (needs > ", target / 2.0, ")"));
  return 1.0 / std::sqrt(inv);
}

}  // namespace fedsilo
