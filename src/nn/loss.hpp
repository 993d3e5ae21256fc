// Loss functions over logits (classes x batch).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "nn/layer.hpp"

namespace fedsilo {

template <typename T>
class LossT {
 public:
  virtual ~LossT() = default;
  virtual std::string kind() const = 0;
  // Mean loss over the batch; writes dL/dlogits (including the 1/B of the mean) into grad.
  virtual double forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) = 0;
  // Sum of per-sample losses (no gradient), for evaluation.
  virtual double lossSum(const CMapT<T>& logits, const std::int32_t* labels) = 0;
};

// Softmax cross-entropy (numerically stable log-sum-exp).
template <typename T>
class SoftmaxCrossEntropyT : public LossT<T> {
 public:
  std::string kind() const override { return "cross_entropy"; }
  double forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) override;
  double lossSum(const CMapT<T>& logits, const std::int32_t* labels) override;
};

using Loss = LossT<float>;

// Factory: "cross_entropy" (others are added by the model zoo). Throws ConfigError on unknown names.
template <typename T>
std::unique_ptr<LossT<T>> makeLoss(const std::string& name, double param = 0.0);

}  // namespace fedsilo
