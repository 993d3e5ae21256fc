#include "nn/focal_playerfl_loss.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace fedsilo {

template <typename T>
FocalPlayerFlLossT<T>::FocalPlayerFlLossT(double gamma, std::vector<double> alpha)
    : gamma_(gamma), alpha_(std::move(alpha)) {
  if (!(gamma >= 0.0) || !std::isfinite(gamma))
    throw ConfigError(fmt("focal_playerfl loss: gamma ", gamma, " must be a finite value >= 0"));
  for (double a : alpha_)
    if (!(a >= 0.0 && a <= 1.0))
      throw ConfigError(fmt("focal_playerfl loss: class weight alpha ", a,
                            " must lie in [0, 1] (the other classes are weighted by 1 - alpha)"));
}

// With L = -log p_y, W = alpha_y q^g + sum_{c != y} (1 - alpha_c) p_c^g (q = 1 - p_y, g = gamma) and
// l = k L W (k = 10 / C): dl/dz_j = k ((p_j - [j = y]) W + L dW/dz_j), where dp_c/dz_j = p_c ([c = j] - p_j):
//   dW/dz_j = alpha_y g q^(g-1) p_y (p_j - [j = y]) + g ((1 - alpha_j) p_j^g [j != y] - p_j S),
// S = sum_{c != y} (1 - alpha_c) p_c^g. q^(g-1) p_y (p_j - [j = y]) is bounded (|p_j - [j = y]| <= q), and
// is taken as 0 where q = 0.
template <typename T>
double FocalPlayerFlLossT<T>::sample(const T* z, Index C, int y, T* dz, double scale) const {
  FEDSILO_ASSERT(y >= 0 && y < C, "label ", y, " outside [0, ", C, ")");
  FEDSILO_ASSERT(alpha_.empty() || static_cast<Index>(alpha_.size()) == C, "focal_playerfl loss: ", alpha_.size(),
                 " class weights for ", C, " classes");
  // The probabilities are recomputed where needed rather than stored: no allocation in a training step.
  const double m = static_cast<double>(*std::max_element(z, z + C));
  double s = 0.0, others = 0.0;
  for (Index c = 0; c < C; ++c) {
    const double e = std::exp(static_cast<double>(z[c]) - m);
    s += e;
    if (c != y) others += e;
  }
  auto prob = [&](Index c) { return std::exp(static_cast<double>(z[c]) - m) / s; };
  const double L = std::log(s) - (static_cast<double>(z[y]) - m), q = others / s, g = gamma_;
  double S = 0.0;
  for (Index c = 0; c < C; ++c)
    if (c != y) S += (1.0 - alpha(c)) * std::pow(prob(c), g);
  const double k = 10.0 / static_cast<double>(C), ay = alpha(y), W = ay * std::pow(q, g) + S;
  if (dz) {
    const double qTerm = q > 0.0 ? ay * g * std::pow(q, g - 1.0) * prob(y) : 0.0;
    for (Index j = 0; j < C; ++j) {
      const double pj = prob(j), d = pj - (j == y ? 1.0 : 0.0);
      const double own = j == y ? 0.0 : (1.0 - alpha(j)) * std::pow(pj, g);
      const double dW = qTerm * d + g * (own - pj * S);
      dz[j] = static_cast<T>(scale * k * (d * W + L * dW));
    }
  }
  return k * L * W;
}

template <typename T>
double FocalPlayerFlLossT<T>::forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) {
  const Index C = logits.rows(), B = logits.cols();
  const double invB = 1.0 / static_cast<double>(B);
  double total = 0.0;
  for (Index j = 0; j < B; ++j) total += sample(logits.col(j).data(), C, labels[j], grad.col(j).data(), invB);
  return total * invB;
}

template <typename T>
double FocalPlayerFlLossT<T>::lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total) {
  const Index C = logits.rows(), B = logits.cols();
  for (Index j = 0; j < B; ++j) total += sample(logits.col(j).data(), C, labels[j], nullptr, 1.0);
  return total;
}

template class FocalPlayerFlLossT<float>;
template class FocalPlayerFlLossT<double>;

}  // namespace fedsilo
