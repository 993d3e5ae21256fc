// ipm, inner-product manipulation (Xie, Koyejo, Gupta, UAI 2020): every malicious client sends
// -epsilon times the honest updates' mean, so that for small epsilon the aggregate's inner product
// with the true mean turns negative while the payload stays close to the honest cloud.
#include "robust/attack.hpp"

namespace fedsilo {

void ipmRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u) {
  std::vector<double> mean;
  honestMoments(r, u, mean, nullptr);
  for (int k = 0; k < u.rows; ++k) {
    if (!r.malicious[static_cast<std::size_t>(k)]) continue;
    float* x = u.row(k);
    for (std::size_t i = 0; i < u.cols; ++i) x[i] = static_cast<float>(-cfg.epsilon * mean[i]);
  }
}

}  // namespace fedsilo
