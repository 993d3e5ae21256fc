#include "nn/loss.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "nn/focal_playerfl_loss.hpp"

namespace fedsilo {

namespace {

// sum_k exp(z_k - m), with each exp(z_k - m) stored in e[k] when e is given: the C library's exp per
// element and the sum in index order, so that a sample's softmax depends on its logits only, not on its
// column's place in the batch, and is the same in every build. (Eigen's exp runs the elements from the
// first aligned address on through its own polynomial and the rest through the C library, and its sum
// groups the terms by the build's vector width and the column's alignment.)
template <typename T, typename Col>
T sumOfShiftedExp(const Col& z, T m, T* e) {
  T s(0);
  for (Index k = 0; k < z.size(); ++k) {
    const T v = std::exp(z(k) - m);
    if (e) e[k] = v;
    s += v;
  }
  return s;
}

}  // namespace

template <typename T>
double SoftmaxCrossEntropyT<T>::forwardBackward(const CMapT<T>& logits, const std::int32_t* labels,
                                                MapT<T>& grad) {
  const Index C = logits.rows(), B = logits.cols();
  const T invB = T(1) / static_cast<T>(B);
  double total = 0.0;
  for (Index j = 0; j < B; ++j) {
    const T m = logits.col(j).maxCoeff();
    const T s = sumOfShiftedExp(logits.col(j), m, grad.col(j).data());
    const int y = labels[j];
    FEDSILO_ASSERT(y >= 0 && y < C, "label ", y, " outside [0, ", C, ")");
    total += static_cast<double>(std::log(s) - (logits(y, j) - m));
    grad.col(j) *= invB / s;
    grad(y, j) -= invB;
  }
  return total / static_cast<double>(B);
}

template <typename T>
double SoftmaxCrossEntropyT<T>::lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total) {
  const Index B = logits.cols();
  for (Index j = 0; j < B; ++j) {
    const T m = logits.col(j).maxCoeff();
    const T s = sumOfShiftedExp(logits.col(j), m, static_cast<T*>(nullptr));
    const int y = labels[j];
    FEDSILO_ASSERT(y >= 0 && y < logits.rows(), "label ", y, " outside [0, ", logits.rows(), ")");
    total += static_cast<double>(std::log(s) - (logits(y, j) - m));
  }
  return total;
}

template <typename T>
double MulticlassHingeT<T>::forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) {
  const Index C = logits.rows(), B = logits.cols();
  const T step = T(1) / static_cast<T>(C * B);  // d(mean over batch of sum / C) per violating class
  double total = 0.0;
  grad.setZero();
  for (Index j = 0; j < B; ++j) {
    const int y = labels[j];
    FEDSILO_ASSERT(y >= 0 && y < C, "label ", y, " outside [0, ", C, ")");
    const T sy = logits(y, j);
    double l = 0.0;
    for (Index k = 0; k < C; ++k) {
      if (k == y) continue;
      const T margin = T(1) - sy + logits(k, j);
      if (margin > T(0)) {
        l += static_cast<double>(margin);
        grad(k, j) += step;
        grad(y, j) -= step;
      }
    }
    total += l / static_cast<double>(C);
  }
  return total / static_cast<double>(B);
}

template <typename T>
double MulticlassHingeT<T>::lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total) {
  const Index C = logits.rows(), B = logits.cols();
  for (Index j = 0; j < B; ++j) {
    const int y = labels[j];
    FEDSILO_ASSERT(y >= 0 && y < C, "label ", y, " outside [0, ", C, ")");
    double l = 0.0;
    for (Index k = 0; k < C; ++k)
      if (k != y) l += std::max(0.0, 1.0 - static_cast<double>(logits(y, j)) + static_cast<double>(logits(k, j)));
    total += l / static_cast<double>(C);
  }
  return total;
}

template <typename T>
FocalLossT<T>::FocalLossT(double gamma, std::vector<double> alpha) : gamma_(gamma), alpha_(std::move(alpha)) {
  if (!(gamma >= 0.0) || !std::isfinite(gamma))
    throw ConfigError(fmt("focal loss: gamma ", gamma, " must be a finite value >= 0"));
  for (double a : alpha_)
    if (!(a >= 0.0) || !std::isfinite(a))
      throw ConfigError(fmt("focal loss: class weight alpha ", a, " must be a finite value >= 0"));
}

namespace {

// Softmax pieces of one column: probabilities into p (if given), log p_y and 1 - p_y (summed from
// the other classes).
template <typename T, typename Col, typename Out>
void softmaxParts(const Col& z, int y, Out* p, double& logPy, double& q) {
  const T m = z.maxCoeff();
  double s = 0.0, others = 0.0;
  for (Index k = 0; k < z.size(); ++k) {
    const double e = std::exp(static_cast<double>(z(k) - m));
    s += e;
    if (k != y) others += e;
    if (p) (*p)(k) = static_cast<T>(e);
  }
  if (p) *p /= static_cast<T>(s);
  logPy = static_cast<double>(z(y) - m) - std::log(s);
  q = others / s;
}

}  // namespace

template <typename T>
double FocalLossT<T>::forwardBackward(const CMapT<T>& logits, const std::int32_t* labels, MapT<T>& grad) {
  const Index C = logits.rows(), B = logits.cols();
  const double invB = 1.0 / static_cast<double>(B);
  double total = 0.0;
  for (Index j = 0; j < B; ++j) {
    const int y = labels[j];
    FEDSILO_ASSERT(y >= 0 && y < C, "label ", y, " outside [0, ", C, ")");
    FEDSILO_ASSERT(alpha_.empty() || static_cast<Index>(alpha_.size()) == C, "focal loss: ", alpha_.size(),
                   " class weights for ", C, " classes");
    auto p = grad.col(j);
    double logPy, q;
    softmaxParts<T>(logits.col(j), y, &p, logPy, q);
    const double py = std::exp(logPy);
    const double a = weight(y);
    const double qg = std::pow(q, gamma_);  // pow(0, 0) = 1: gamma = 0 is cross-entropy
    total += -a * qg * logPy;
    // dl/dz = G (e_y - p) with G = dl/dp_y * p_y = gamma q^(gamma-1) p_y log p_y - q^gamma. The first
    // term tends to 0 as q -> 0 (log p_y ~ -q), so it is dropped there instead of computing 0 * inf.
    const double first = q > 0.0 ? gamma_ * qg / q * py * logPy : 0.0;
    const double G = a * (first - qg) * invB;
    p *= static_cast<T>(-G);
    p(y) += static_cast<T>(G);
  }
  return total * invB;
}

template <typename T>
double FocalLossT<T>::lossSum(const CMapT<T>& logits, const std::int32_t* labels, double total) {
  const Index C = logits.rows(), B = logits.cols();
  for (Index j = 0; j < B; ++j) {
    const int y = labels[j];
    FEDSILO_ASSERT(y >= 0 && y < C, "label ", y, " outside [0, ", C, ")");
    double logPy, q;
    softmaxParts<T>(logits.col(j), y, static_cast<VecT<T>*>(nullptr), logPy, q);
    FEDSILO_ASSERT(alpha_.empty() || static_cast<Index>(alpha_.size()) == C, "focal loss: ", alpha_.size(),
                   " class weights for ", C, " classes");
    total += -weight(y) * std::pow(q, gamma_) * logPy;
  }
  return total;
}

template class SoftmaxCrossEntropyT<float>;
template class SoftmaxCrossEntropyT<double>;
template class MulticlassHingeT<float>;
template class MulticlassHingeT<double>;
template class FocalLossT<float>;
template class FocalLossT<double>;

std::vector<std::string> lossNames() {
  std::vector<std::string> names;
  for (const auto& entry : enumNames<LossKind>()) names.push_back(entry.name);
  return names;
}

template <typename T>
std::unique_ptr<LossT<T>> makeLoss(LossKind kind, double param, const std::vector<double>& alpha) {
  switch (kind) {
    case LossKind::CrossEntropy: return std::make_unique<SoftmaxCrossEntropyT<T>>();
    case LossKind::Hinge: return std::make_unique<MulticlassHingeT<T>>();
    case LossKind::Focal:
      if (!(param >= 0.0) || !std::isfinite(param))
        throw ConfigError(fmt("model.focal_gamma = ", param, ": focal loss needs a finite gamma >= 0"));
      return std::make_unique<FocalLossT<T>>(param, alpha);
    case LossKind::FocalPlayerFl:
      if (!(param >= 0.0) || !std::isfinite(param))
        throw ConfigError(fmt("model.focal_gamma = ", param, ": focal loss needs a finite gamma >= 0"));
      return std::make_unique<FocalPlayerFlLossT<T>>(param, alpha);
  }
  throw RuntimeError(fmt("internal error: no loss for enumerator ", static_cast<int>(kind)));
}

template <typename T>
std::unique_ptr<LossT<T>> makeLoss(const std::string& name, double param) {
  return makeLoss<T>(parseEnum<LossKind>("model.loss", name), param);
}

template std::unique_ptr<LossT<float>> makeLoss<float>(LossKind, double, const std::vector<double>&);
template std::unique_ptr<LossT<double>> makeLoss<double>(LossKind, double, const std::vector<double>&);
template std::unique_ptr<LossT<float>> makeLoss<float>(const std::string&, double);
template std::unique_ptr<LossT<double>> makeLoss<double>(const std::string&, double);

}  // namespace fedsilo
