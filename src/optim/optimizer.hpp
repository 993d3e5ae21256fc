// The client optimizers over the model's flat buffers, with torch.optim's update rules (PyTorch 1.13,
// single-tensor code path, float32 state; scalar coefficients are computed in double and rounded to
// float once, as PyTorch passes Python floats to its float kernels):
//
//   sgd    d = g + wd p;  momentum mu > 0: b <- mu b + d (b = d on the first step);
//          d = b, or d + mu b with nesterov;  p <- p - lr d
//   adam   g <- g + wd p (L2);  m <- beta1 m + (1 - beta1) g;  v <- beta2 v + (1 - beta2) g^2;
//          amsgrad: vmax <- max(vmax, v) replaces v below;
//          p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//   adamw  as adam without the L2 term, after p <- p (1 - lr wd) (decoupled weight decay)
//
// t counts the steps of each parameter TENSOR (PyTorch keeps a step per parameter): a tensor that a
// training run leaves frozen (FedBABU's head) keeps its count and moments untouched, exactly as a
// PyTorch parameter without gradient is skipped by its optimizer.
// The state lives outside the optimizer (OptimizerState), so that a client's moments can persist
// across rounds (train.optimizer_state = keep, optim/optimizer_state_store.hpp) or restart.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/config.hpp"

namespace fedsilo {

// The moments of one model's parameters (sized by Optimizer::prepare).
struct OptimizerState {
  std::vector<float> first;         // sgd: momentum buffer; adam(w): exp_avg
  std::vector<float> second;        // adam(w): exp_avg_sq
  std::vector<float> maxSecond;     // amsgrad: running max of exp_avg_sq
  std::vector<std::int64_t> steps;  // per parameter tensor: steps taken
  // Back to "no step taken" (sizes kept, so that restarting allocates nothing).
  void clear();
  bool empty() const { return first.empty() && second.empty() && maxSecond.empty() && steps.empty(); }
};

// A parameter tensor, [begin, end) of the flat buffer, and its index among the model's tensors.
struct ParamSegment {
  std::size_t begin = 0, end = 0;
  std::size_t tensor = 0;
};

class Optimizer {
 public:
  explicit Optimizer(const OptimizerSettings& settings) : s_(settings) {}
  // Sizes `state` for a model of n parameters in `tensors` tensors; a state of another size (another
  // model) starts from zero.
  void prepare(OptimizerState& state, std::size_t n, std::size_t tensors) const;
  // One step of the parameters in `segments` (ascending, disjoint); every other parameter and its
  // state are left untouched. `state` must have been prepared for this model.
  void step(float* params, const float* grads, const std::vector<ParamSegment>& segments,
            OptimizerState& state) const;
  const OptimizerSettings& settings() const { return s_; }

 private:
  void sgdStep(float* p, const float* g, float* buf, std::size_t n) const;
  void adamStep(float* p, const float* g, float* m, float* v, float* vmax, std::size_t n, std::int64_t t) const;
  bool usesFirst() const { return s_.optimizer != OptimizerKind::Sgd || s_.momentum != 0.0; }
  bool usesSecond() const { return s_.optimizer != OptimizerKind::Sgd; }

  OptimizerSettings s_;
};

// Throws ConfigError for train.* settings that PyTorch refuses (nesterov without momentum, betas
// outside [0, 1)) or that do not apply to the chosen optimizer (momentum or nesterov with adam).
void validateOptimizer(const TrainConfig& t);

}  // namespace fedsilo
