#include "app/privacy_options.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "fl/privacy_support.hpp"
#include "privacy/calibration.hpp"
#include "privacy/client_dp.hpp"

namespace fedsilo {

namespace {

// A number option: finite, and in the interval given by its bounds (open or closed at each end).
double number(const std::map<std::string, std::string>& values, const std::string& key, double lo, double hi,
              bool openLo, bool openHi) {
  const std::string& text = values.at(key);
  const double x = parseDouble(text, key);
  const bool ok = std::isfinite(x) && (openLo ? x > lo : x >= lo) && (openHi ? x < hi : x <= hi);
  if (!ok)
    throw ConfigError(fmt(key, " = ", text, ": expected a number in ", openLo ? "(" : "[", lo, ", ", hi,
                          openHi ? ")" : "]"));
  return x;
}

bool boolean(const std::map<std::string, std::string>& values, const std::string& key) {
  OptionValues o;
  o.set(key, values.at(key));
  return o.getBool(key);
}

void readValues(const std::map<std::string, std::string>& v, PrivacyConfig& p) {
  p.level = parseEnum<PrivacyLevel>("privacy.level", v.at("privacy.level"));
  p.clip = number(v, "privacy.clip", 0.0, 1e12, true, false);
  p.noiseMultiplier = number(v, "privacy.noise_multiplier", 0.0, 1e6, false, false);
  p.targetEpsilon = number(v, "privacy.target_epsilon", 0.0, 1e6, false, false);
  p.delta = number(v, "privacy.delta", 0.0, 1.0, true, true);
  p.noisePlacement = parseEnum<NoisePlacement>("privacy.noise_placement", v.at("privacy.noise_placement"));
  p.adaptiveClip = boolean(v, "privacy.adaptive_clip");
  p.targetQuantile = number(v, "privacy.target_quantile", 0.0, 1.0, true, true);
  p.clipLr = number(v, "privacy.clip_lr", 0.0, 1e6, true, false);
  p.clipCountStd = number(v, "privacy.clip_count_std", 0.0, 1e12, false, false);
  p.secureAggregation = boolean(v, "privacy.secure_aggregation");
  const std::string& t = v.at("privacy.secagg_threshold");
  const long long threshold = parseInt(t, "privacy.secagg_threshold");
  if (threshold < 0 || threshold > 1000000)
    throw ConfigError(fmt("privacy.secagg_threshold = ", t, ": expected an integer in [0, 1000000] (0: a majority)"));
  p.secaggThreshold = static_cast<int>(threshold);
}

// Options that only one level uses are refused with the other, so that a run never silently
// ignores what it was asked for (level = none ignores them all: switching DP off keeps a sweep's
// other settings).
void checkCombinations(const PrivacyConfig& p) {
  if (p.level == PrivacyLevel::None) return;
  const bool hasZ = p.noiseMultiplier > 0.0, hasTarget = p.targetEpsilon > 0.0;
  if (hasZ == hasTarget)
    throw ConfigError(fmt("privacy.level = ", p.level,
                          " needs exactly one of privacy.noise_multiplier > 0 and privacy.target_epsilon > 0 (given: ",
                          "noise_multiplier = ", p.noiseMultiplier, ", target_epsilon = ", p.targetEpsilon, ")"));
  if (p.sampleLevel() && p.noisePlacement == NoisePlacement::Clients)
    throw ConfigError("privacy.noise_placement = clients with privacy.level = sample: DP-SGD adds its noise inside "
                      "each silo; the placement is a client-level option");
  if (p.adaptiveClip && !p.clientLevel())
    throw ConfigError("privacy.adaptive_clip = true needs privacy.level = client (it adapts the clip of client updates)");
  if (p.adaptiveClip && p.noisePlacement == NoisePlacement::Clients)
    throw ConfigError("privacy.adaptive_clip = true needs privacy.noise_placement = server: the clipped-count noise "
                      "is added by the server");
}

void calibrateClientLevel(const ExperimentConfig& cfg, PrivacyConfig& p) {
  if (!p.clientLevel() || !(p.targetEpsilon > 0.0)) return;
  try {
    p.noiseMultiplier =
        calibrateNoiseMultiplier(clientSamplingRate(cfg), cfg.rounds, p.delta, p.targetEpsilon).noiseMultiplier;
  } catch (const ConfigError& e) {
    throw ConfigError(fmt("privacy.target_epsilon = ", p.targetEpsilon, " over ", cfg.rounds, " rounds: ", e.what()));
  }
}

// The clipped-count release of adaptive clipping must leave room for the update's noise
// (updateNoiseMultiplier throws the ConfigError otherwise).
void checkAdaptiveClip(const ExperimentConfig& cfg, const PrivacyConfig& p) {
  if (!p.adaptiveClip) return;
  const double countStd = p.clipCountStd > 0.0 ? p.clipCountStd : expectedClients(cfg) / 20.0;
  try {
    updateNoiseMultiplier(p.noiseMultiplier, countStd);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt("privacy.clip_count_std = ", countStd, ": ", e.what()));
  }
}

}  // namespace

std::vector<OptionSpec> privacyOptions() {
  return {
      {"privacy.level", "none", "differential privacy: " + joinNames<PrivacyLevel>(" | ", true)},
      {"privacy.clip", "1",
       "C > 0: L2 bound of each client's update (client) or each per-example gradient (sample); the initial C "
       "with adaptive clipping"},
      {"privacy.noise_multiplier", "0",
       "z > 0: noise standard deviation / C (exactly one of noise_multiplier and target_epsilon)"},
      {"privacy.target_epsilon", "0",
       "> 0: calibrate z so that epsilon after the planned rounds (client) or every client's planned steps "
       "(sample) is at most this; 0: use noise_multiplier"},
      {"privacy.delta", "1e-05", "delta of the reported epsilon, in (0, 1)"},
      {"privacy.noise_placement", "server", "client level: " + joinNames<NoisePlacement>(" | ", true)},
      {"privacy.adaptive_clip", "false",
       "client level, server noise: C follows the target quantile of the update norms (Andrew et al. 2021)"},
      {"privacy.target_quantile", "0.5", "adaptive clipping: the quantile gamma of the update norms, in (0, 1)"},
      {"privacy.clip_lr", "0.2", "adaptive clipping: the learning rate eta of the geometric update (> 0)"},
      {"privacy.clip_count_std", "0",
       "adaptive clipping: the standard deviation of the clipped-count noise (0: expected clients per round / 20)"},
      {"privacy.secure_aggregation", "false",
       "simulate secure aggregation (pairwise masks, Bonawitz et al. 2017): the same results, its cost recorded"},
      {"privacy.secagg_threshold", "0",
       "secure aggregation: survivors needed to unmask a round (0: a majority of the round's clients)"},
  };
}

PrivacyConfig readPrivacy(const std::map<std::string, std::string>& values, const ExperimentConfig& cfg) {
  PrivacyConfig p;
  readValues(values, p);
  checkCombinations(p);
  ExperimentConfig withPrivacy = cfg;
  withPrivacy.privacy = p;
  checkPrivacySupport(withPrivacy);
  calibrateClientLevel(cfg, p);
  checkAdaptiveClip(cfg, p);
  return p;
}

}  // namespace fedsilo
