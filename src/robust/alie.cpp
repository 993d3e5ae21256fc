// alie, "A little is enough" (Baruch, Baruch, Goldberg, NeurIPS 2019): every malicious client sends
// mu - z sigma, the honest updates' per-coordinate mean and standard deviation, with z small enough
// that the payload stays inside the spread of the honest updates (so median, trimmed mean and Krum
// keep it) yet moves the aggregate consistently.
#include <algorithm>
#include <cmath>

#include "robust/attack.hpp"

namespace fedsilo {

double normalQuantile(double p) {
  // Bisection on Phi(x) = erfc(-x / sqrt 2) / 2: monotone, deterministic, exact to double precision.
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200 && hi - lo > 0.0; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double alieZ(const AttackConfig& cfg, int rows, int malicious) {
  if (cfg.z != 0.0) return cfg.z;
  const int s = rows / 2 + 1 - malicious;
  const double p = std::min(static_cast<double>(rows - s) / rows, 1.0 - 0.5 / rows);
  return p > 0.5 ? normalQuantile(p) : 0.0;
}

void alieRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u) {
  int malicious = 0;
  for (char m : r.malicious) malicious += m ? 1 : 0;
  std::vector<double> mean, stddev;
  honestMoments(r, u, mean, &stddev);
  const double z = alieZ(cfg, u.rows, malicious);
  for (int k = 0; k < u.rows; ++k) {
    if (!r.malicious[static_cast<std::size_t>(k)]) continue;
    float* x = u.row(k);
    for (std::size_t i = 0; i < u.cols; ++i) x[i] = static_cast<float>(mean[i] - z * stddev[i]);
  }
}

}  // namespace fedsilo
