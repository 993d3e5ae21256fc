// Noise calibration: the smallest noise multiplier whose accounted epsilon meets a target.
#pragma once
#include <cstdint>

#include "privacy/rdp_accountant.hpp"

namespace fedsilo {

struct Calibration {
  double noiseMultiplier = 0.0;  // the returned sigma: epsilon(sigma) <= target
  double epsilon = 0.0;          // epsilon(sigma), for the report
  double order = 0.0;            // the RDP order that attains it
};

// Bisection on sigma for `steps` sampled Gaussian steps at rate q in (0, 1] and delta in (0, 1):
// epsilon(sigma) is non-increasing in sigma (each order's RDP is), so the bracket [lo, hi] with
// epsilon(lo) > target >= epsilon(hi) shrinks until hi - lo <= tolerance * hi. The result is the upper
// end, so epsilon(result) <= target always holds and the result exceeds the exact solution by at most
// a relative `tolerance` (default 1e-6). Throws ConfigError on bad arguments or an unreachable target
// (sigma above 1e6).
Calibration calibrateNoiseMultiplier(double q, std::int64_t steps, double delta, double targetEpsilon,
                                     double tolerance = 1e-6, RdpConversion conversion = RdpConversion::Improved);

}  // namespace fedsilo
