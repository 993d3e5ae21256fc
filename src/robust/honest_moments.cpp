// The honest updates' per-coordinate moments that the omniscient attacks (alie, ipm) read.
#include <cmath>

#include "robust/attack.hpp"

namespace fedsilo {

void honestMoments(const AttackRound& r, const UpdateMatrix& u, std::vector<double>& mean,
                   std::vector<double>* stddev) {
  bool anyHonest = false;
  for (int k = 0; k < u.rows; ++k) anyHonest = anyHonest || !r.malicious[static_cast<std::size_t>(k)];
  const auto counts = [&](int k) { return !anyHonest || !r.malicious[static_cast<std::size_t>(k)]; };
  std::vector<double> coeff(static_cast<std::size_t>(u.rows), 0.0);
  double m = 0.0;
  for (int k = 0; k < u.rows; ++k) m += counts(k) ? 1.0 : 0.0;
  for (int k = 0; k < u.rows; ++k) coeff[static_cast<std::size_t>(k)] = counts(k) ? 1.0 / m : 0.0;
  combineRows(u, coeff, mean);
  if (!stddev) return;
  stddev->assign(u.cols, 0.0);
  for (int k = 0; k < u.rows; ++k) {
    if (!counts(k)) continue;
    const float* x = u.row(k);
    for (std::size_t i = 0; i < u.cols; ++i) {
      const double d = static_cast<double>(x[i]) - mean[i];
      (*stddev)[i] += d * d / m;
    }
  }
  for (double& s : *stddev) s = std::sqrt(s);
}

}  // namespace fedsilo
