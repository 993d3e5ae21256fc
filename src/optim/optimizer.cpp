#include "optim/optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace fedsilo {

void OptimizerState::clear() {
  std::fill(first.begin(), first.end(), 0.0f);
  std::fill(second.begin(), second.end(), 0.0f);
  std::fill(maxSecond.begin(), maxSecond.end(), 0.0f);
  std::fill(steps.begin(), steps.end(), 0);
}

void Optimizer::prepare(OptimizerState& state, std::size_t n, std::size_t tensors) const {
  const auto size = [](std::vector<float>& v, std::size_t want) {
    if (v.size() != want) v.assign(want, 0.0f);
  };
  size(state.first, usesFirst() ? n : 0);
  size(state.second, usesSecond() ? n : 0);
  size(state.maxSecond, usesSecond() && s_.amsgrad ? n : 0);
  if (state.steps.size() != tensors) state.steps.assign(tensors, 0);
}

void Optimizer::step(float* params, const float* grads, const std::vector<ParamSegment>& segments,
                     OptimizerState& state) const {
  if (s_.optimizer == OptimizerKind::Sgd) {
    // No per-tensor state: runs of adjacent tensors are one loop (the same arithmetic per element).
    float* buf = state.first.empty() ? nullptr : state.first.data();
    for (std::size_t i = 0; i < segments.size();) {
      const std::size_t begin = segments[i].begin;
      std::size_t end = segments[i].end;
      for (++i; i < segments.size() && segments[i].begin == end; ++i) end = segments[i].end;
      sgdStep(params + begin, grads + begin, buf ? buf + begin : nullptr, end - begin);
    }
    return;
  }
  float* vmax = state.maxSecond.empty() ? nullptr : state.maxSecond.data();
  for (const ParamSegment& seg : segments) {
    const std::int64_t t = ++state.steps[seg.tensor];
    adamStep(params + seg.begin, grads + seg.begin, state.first.data() + seg.begin, state.second.data() + seg.begin,
             vmax ? vmax + seg.begin : nullptr, seg.end - seg.begin, t);
  }
}

void Optimizer::sgdStep(float* p, const float* g, float* buf, std::size_t n) const {
  const float lr = static_cast<float>(s_.lr), wd = static_cast<float>(s_.weightDecay);
  const float mu = static_cast<float>(s_.momentum);
  if (!buf) {
    if (wd == 0.0f) {
      for (std::size_t i = 0; i < n; ++i) p[i] -= lr * g[i];
    } else {
      for (std::size_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + wd * p[i]);
    }
    return;
  }
  // A zero buffer makes the first step b = d, PyTorch's initialisation of its momentum buffer.
  if (s_.nesterov) {
    for (std::size_t i = 0; i < n; ++i) {
      const float gi = g[i] + wd * p[i];
      buf[i] = mu * buf[i] + gi;
      p[i] -= lr * (gi + mu * buf[i]);
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i] + wd * p[i];
    buf[i] = mu * buf[i] + gi;
    p[i] -= lr * buf[i];
  }
}

void validateOptimizer(const TrainConfig& t) {
  const auto fail = [](const std::string& key, double value, const std::string& expected) {
    throw ConfigError(fmt(key, " = ", value, ": ", expected));
  };
  if (!(t.beta1 >= 0.0 && t.beta1 < 1.0)) fail("train.beta1", t.beta1, "expected a number in [0, 1)");
  if (!(t.beta2 >= 0.0 && t.beta2 < 1.0)) fail("train.beta2", t.beta2, "expected a number in [0, 1)");
  if (!(t.eps >= 0.0)) fail("train.eps", t.eps, "expected a number >= 0");
  if (t.optimizer == OptimizerKind::Sgd) {
    if (t.nesterov && t.momentum <= 0.0)
      throw ConfigError(fmt("train.nesterov = true needs train.momentum > 0 (as in PyTorch), got train.momentum = ",
                            t.momentum));
    if (t.amsgrad)
      throw ConfigError("train.amsgrad = true applies to train.optimizer = adam or adamw, not sgd");
    return;
  }
  if (t.momentum != 0.0)
    throw ConfigError(fmt("train.momentum = ", t.momentum, " applies to train.optimizer = sgd only; ", t.optimizer,
                          " uses train.beta1 (set train.momentum = 0)"));
  if (t.nesterov)
    throw ConfigError(fmt("train.nesterov = true applies to train.optimizer = sgd only, not ", t.optimizer));
}

}  // namespace fedsilo
