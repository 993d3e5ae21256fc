// Loss functions over logits (classes x batch).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "nn/layer.hpp"

namespace fedsilo {

template <typename T>
class LossT {
 public:
  virtual ~LossT() = default;
  virtual std::string kind() const = 0;
  // Mean loss over the batch; writes dL/dlogits (including the 1/B of the mean) into grad.
  virtual double forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) = 0;
  // total + the per-sample losses (no gradient), added one by one in sample order, for evaluation:
  // a batch evaluated in chunks, each chunk's call continuing from the previous total, gives the same
  // sum as one call.
  virtual double lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total = 0.0) = 0;
};

// Softmax cross-entropy (numerically stable log-sum-exp).
template <typename T>
class SoftmaxCrossEntropyT : public LossT<T> {
 public:
  std::string kind() const override { return "cross_entropy"; }
  double forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) override;
  double lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total = 0.0) override;
};

// Multiclass hinge loss, Weston-Watkins form with margin 1, normalised by the number of classes C
// exactly as PyTorch's nn.MultiMarginLoss (p = 1, margin = 1):
//   l = sum_{j != y} max(0, 1 - s_y + s_j) / C.
// Weston-Watkins (every violating class contributes) rather than Crammer-Singer (only the worst)
// because it matches the PyTorch loss people compare against and spreads the gradient over all
// violators. At a margin of exactly 0 the subgradient 0 is used (PyTorch's choice).
template <typename T>
class MulticlassHingeT : public LossT<T> {
 public:
  std::string kind() const override { return "hinge"; }
  double forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) override;
  double lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total = 0.0) override;
};

// Multiclass focal loss (Lin et al. 2017): l = -alpha_y (1 - p_y)^gamma log p_y, p = softmax, with
// per-class weights alpha (empty: all 1). gamma = 0 with alpha = 1 is cross-entropy. 1 - p_y is summed from the other classes' probabilities, so a
// confident correct prediction does not lose its (tiny) gradient to cancellation.
template <typename T>
class FocalLossT : public LossT<T> {
 public:
  // Throws ConfigError for a gamma or an alpha_c that is not finite and >= 0.
  explicit FocalLossT(double gamma, std::vector<double> alpha = {});
  std::string kind() const override { return "focal"; }
  double forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) override;
  double lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total = 0.0) override;
  double gamma() const { return gamma_; }
  const std::vector<double>& alpha() const { return alpha_; }

 private:
  double weight(int y) const { return alpha_.empty() ? 1.0 : alpha_[static_cast<std::size_t>(y)]; }
  double gamma_;
  std::vector<double> alpha_;
};

using Loss = LossT<float>;

// Factory (param = the focal loss's gamma, >= 0, alpha its per-class weights; both ignored by the
// others). Throws ConfigError on a bad parameter.
template <typename T>
std::unique_ptr<LossT<T>> makeLoss(LossKind kind, double param = 0.0, const std::vector<double>& alpha = {});
// The same by name ("cross_entropy", "hinge", "focal"); ConfigError on an unknown name.
template <typename T>
std::unique_ptr<LossT<T>> makeLoss(const std::string& name, double param = 0.0);

// Names accepted by makeLoss (from the one table of LossKind, core/config.hpp).
std::vector<std::string> lossNames();

}  // namespace fedsilo
