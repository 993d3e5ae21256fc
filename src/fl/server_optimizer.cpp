#include "fl/server_optimizer.hpp"

#include <cmath>

#include "core/error.hpp"

namespace fedsilo {

void ServerOptimizer::allocate() {
  if (!m_.empty()) return;
  const auto n = static_cast<std::size_t>(numParams_);
  m_.assign(n, 0.0);
  if (adaptive()) v_.assign(n, cfg_.tau * cfg_.tau);
}

double ServerOptimizer::secondMoment(double v, double delta2) const {
  switch (cfg_.kind) {
    case ServerOptimizerKind::Adagrad:
      return v + delta2;
    case ServerOptimizerKind::Yogi: {
      const double d = v - delta2;
      const double sign = d > 0.0 ? 1.0 : (d < 0.0 ? -1.0 : 0.0);
      return v - (1.0 - cfg_.beta2) * delta2 * sign;
    }
    case ServerOptimizerKind::Adam:
      return cfg_.beta2 * v + (1.0 - cfg_.beta2) * delta2;
    default:
      return v;
  }
}

void ServerOptimizer::step(Index offset, Index n, const double* target, float* x) {
  FEDSILO_ASSERT(active() && offset >= 0 && n >= 0 && offset + n <= numParams_, "server optimizer step out of range");
  allocate();
  double* m = m_.data() + offset;
  if (!adaptive()) {
    for (Index i = 0; i < n; ++i) {
      const double w = x[i];
      m[i] = cfg_.momentum * m[i] + (target[i] - w);
      x[i] = static_cast<float>(w + cfg_.lr * m[i]);
    }
    return;
  }
  double* v = v_.data() + offset;
  for (Index i = 0; i < n; ++i) {
    const double w = x[i];
    const double delta = target[i] - w;
    m[i] = cfg_.beta1 * m[i] + (1.0 - cfg_.beta1) * delta;
    v[i] = secondMoment(v[i], delta * delta);
    x[i] = static_cast<float>(w + cfg_.lr * m[i] / (std::sqrt(v[i]) + cfg_.tau));
  }
}

std::vector<double> ServerOptimizer::state() const {
  std::vector<double> s(m_);
  s.insert(s.end(), v_.begin(), v_.end());
  return s;
}

void ServerOptimizer::setState(const std::vector<double>& state) {
  const auto n = static_cast<std::size_t>(numParams_);
  const std::size_t expected = adaptive() ? 2 * n : n;
  FEDSILO_ASSERT(state.empty() || state.size() == expected, "checkpoint server optimizer state has ", state.size(),
                 " values, expected ", expected, " (", nameOf(cfg_.kind), ", ", n, " parameters)");
  m_.clear();
  v_.clear();
  if (state.empty()) return;
  m_.assign(state.begin(), state.begin() + static_cast<std::ptrdiff_t>(n));
  if (adaptive()) v_.assign(state.begin() + static_cast<std::ptrdiff_t>(n), state.end());
}

}  // namespace fedsilo
