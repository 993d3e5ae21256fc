#include "optim/sgd.hpp"

namespace fedsilo {

void Sgd::step(float* p, const float* g, std::size_t n) {
  const float lr = static_cast<float>(lr_), wd = static_cast<float>(weightDecay_), mu = static_cast<float>(momentum_);
  if (mu == 0.0f) {
    if (wd == 0.0f) {
      for (std::size_t i = 0; i < n; ++i) p[i] -= lr * g[i];
    } else {
      for (std::size_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + wd * p[i]);
    }
    return;
  }
  if (velocity_.size() != n) velocity_.assign(n, 0.0f);  // first step of a run only
  float* v = velocity_.data();
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i] + wd * p[i];
    v[i] = mu * v[i] + gi;
    p[i] -= lr * v[i];
  }
}

}  // namespace fedsilo
