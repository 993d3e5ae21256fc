// The focal loss as the PLayer-FL authors compute it (`model.loss = focal_playerfl`; their
// MulticlassFocalLoss, code/evaluation/losses.py of github.com/gaiters-aerials/player_fl, used for
// their Heart, ISIC and MIMIC-III runs). Every class c of a sample contributes a term, and the mean
// runs over the batch x classes matrix, times 10:
//   l = (10 / C) (-log p_y) [ alpha_y (1 - p_y)^gamma + sum over c != y of (1 - alpha_c) p_c^gamma ]
// per sample (p = softmax), averaged over the batch. Beside the standard form (FocalLossT, Lin et al.
// 2017, `model.loss = focal`: -alpha_y (1 - p_y)^gamma log p_y), it weights the other classes'
// probabilities with 1 - alpha_c and scales the loss by 10 / C. alpha defaults to 1 for every class
// (theirs), which leaves (10 / C) (1 - p_y)^gamma (-log p_y); each alpha_c must lie in [0, 1].
#pragma once
#include <vector>

#include "nn/loss.hpp"

namespace fedsilo {

template <typename T>
class FocalPlayerFlLossT : public LossT<T> {
 public:
  // Throws ConfigError for a gamma that is not finite and >= 0 or an alpha_c outside [0, 1].
  explicit FocalPlayerFlLossT(double gamma, std::vector<double> alpha = {});
  std::string kind() const override { return "focal_playerfl"; }
  double forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) override;
  double lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total = 0.0) override;

 private:
  double alpha(Index c) const { return alpha_.empty() ? 1.0 : alpha_[static_cast<std::size_t>(c)]; }
  // One sample's loss; with dz, its gradient with respect to the logits (scaled by `scale`).
  double sample(const T* z, Index C, int y, T* dz, double scale) const;
  double gamma_;
  std::vector<double> alpha_;
};

}  // namespace fedsilo
