#include "privacy/calibration.hpp"

#include <cmath>

#include "core/error.hpp"

namespace fedsilo {

Calibration calibrateNoiseMultiplier(double q, std::int64_t steps, double delta, double targetEpsilon, double tolerance,
                                     RdpConversion conversion) {
  if (!(q > 0.0 && q <= 1.0)) throw ConfigError(fmt("sampling rate q = ", q, ": expected a number in (0, 1]"));
  if (steps < 1) throw ConfigError(fmt("steps = ", steps, ": expected an integer >= 1"));
  if (!(targetEpsilon > 0.0) || std::isinf(targetEpsilon))
    throw ConfigError(fmt("target epsilon = ", targetEpsilon, ": expected a finite number > 0"));
  if (!(tolerance > 0.0 && tolerance < 1.0)) throw ConfigError(fmt("tolerance = ", tolerance, ": expected (0, 1)"));
  auto spentAt = [&](double sigma) { return sgmEpsilon(q, sigma, steps, delta, conversion); };

  constexpr double kMaxSigma = 1e6;
  double lo = 0.0, hi = 1.0;
  PrivacySpent atHi = spentAt(hi);
  while (atHi.epsilon > targetEpsilon) {
    lo = hi;
    hi *= 2.0;
    if (hi > kMaxSigma)
      throw ConfigError(fmt("target epsilon = ", targetEpsilon, ": not reached by any noise multiplier up to ",
                            kMaxSigma, " (q = ", q, ", steps = ", steps, ", delta = ", delta, ")"));
    atHi = spentAt(hi);
  }
  while (hi - lo > tolerance * hi) {
    const double mid = 0.5 * (lo + hi);
    const PrivacySpent atMid = spentAt(mid);
    if (atMid.epsilon > targetEpsilon) {
      lo = mid;
    } else {
      hi = mid;
      atHi = atMid;
    }
  }
  return {hi, atHi.epsilon, atHi.order};
}

}  // namespace fedsilo
