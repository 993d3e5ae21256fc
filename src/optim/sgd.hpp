// Mini-batch SGD with momentum and weight decay (PyTorch semantics:
//   g <- g + wd * p;  v <- mu * v + g;  p <- p - lr * v), over the model's flat buffers.
// One optimiser serves every algorithm; algorithms change the objective through a GradientHook
// (core of the "decorate the objective, never copy the loop" rule).
#pragma once
#include <cstddef>
#include <vector>

#include "core/config.hpp"

namespace fedsilo {

class Sgd {
 public:
  Sgd(double lr, double momentum, double weightDecay) : lr_(lr), momentum_(momentum), weightDecay_(weightDecay) {}
  explicit Sgd(const TrainConfig& t) : Sgd(t.lr, t.momentum, t.weightDecay) {}
  // Drops the momentum state (a new local training run starts from zero velocity).
  void reset() { velocity_.assign(velocity_.size(), 0.0f); }
  void step(float* params, const float* grads, std::size_t n);
  double lr() const { return lr_; }
  void setLr(double lr) { lr_ = lr; }
  std::vector<float>& velocity() { return velocity_; }

 private:
  double lr_, momentum_, weightDecay_;
  std::vector<float> velocity_;
};

}  // namespace fedsilo
