// gaussian: the client sends N(0, sigma^2 I) with sigma = ||x|| / sqrt(n), noise whose expected norm
// is about its own update's; the noise is keyed by (seed, client, round, AttackNoise).
#include <cmath>

#include "core/rng.hpp"
#include "robust/attack.hpp"

namespace fedsilo {

void gaussianRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u) {
  (void)cfg;
  for (int k = 0; k < u.rows; ++k) {
    if (!r.malicious[static_cast<std::size_t>(k)]) continue;
    float* x = u.row(k);
    const double sigma = u.cols > 0 ? std::sqrt(squaredNorm(x, u.cols) / static_cast<double>(u.cols)) : 0.0;
    Rng rng(r.seed, r.clients[static_cast<std::size_t>(k)], r.round, Purpose::AttackNoise);
    for (std::size_t i = 0; i < u.cols; ++i) x[i] = static_cast<float>(sigma * rng.normal());
  }
}

}  // namespace fedsilo
