#include "fl/gradient_hooks.hpp"

namespace fedsilo {

GradientHook proximalHook(double mu, const float* ref) {
  const float m = static_cast<float>(mu);
  return [m, ref](const float* params, float* grads, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) grads[i] += m * (params[i] - ref[i]);
  };
}

GradientHook freezeOutsideHook(std::size_t begin, std::size_t end, double weightDecay) {
  const float wd = static_cast<float>(weightDecay);
  GradientHook hook([begin, end, wd](const float* params, float* grads, std::size_t n) {
    for (std::size_t i = 0; i < begin && i < n; ++i) grads[i] = -(wd * params[i]);
    for (std::size_t i = end; i < n; ++i) grads[i] = -(wd * params[i]);
  });
  hook.trainBegin = begin;
  hook.trainEnd = end;
  return hook;
}

}  // namespace fedsilo
