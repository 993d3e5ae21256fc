#include "sim/timing.hpp"

#include <cmath>

namespace fedsilo {

double computeSeconds(double flopsPerSample, double samples, double gflops) {
  if (std::isinf(gflops) || samples <= 0.0) return 0.0;
  return flopsPerSample * samples / (gflops * 1e9);
}

double transferSeconds(double bytes, double mbps, double latencyMs) {
  if (bytes <= 0.0) return 0.0;
  const double wire = std::isinf(mbps) ? 0.0 : bytes * 8.0 / (mbps * 1e6);
  return wire + latencyMs / 1000.0;
}

}  // namespace fedsilo
