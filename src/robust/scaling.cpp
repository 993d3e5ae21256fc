// sign_flip (send -s x) and scale (send s x, model replacement): the client's own update, rescaled.
#include "robust/attack.hpp"

namespace fedsilo {

double attackScale(const AttackConfig& cfg, int rows) {
  if (cfg.scale != 0.0) return cfg.scale;
  return cfg.kind == AttackKind::Scale ? static_cast<double>(rows) : 1.0;
}

namespace {

void multiplyMaliciousRows(const AttackRound& r, UpdateMatrix& u, double factor) {
  for (int k = 0; k < u.rows; ++k) {
    if (!r.malicious[static_cast<std::size_t>(k)]) continue;
    float* x = u.row(k);
    for (std::size_t i = 0; i < u.cols; ++i) x[i] = static_cast<float>(factor * static_cast<double>(x[i]));
  }
}

}  // namespace

void signFlipRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u) {
  multiplyMaliciousRows(r, u, -attackScale(cfg, u.rows));
}

void scaleRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u) {
  multiplyMaliciousRows(r, u, attackScale(cfg, u.rows));
}

}  // namespace fedsilo
