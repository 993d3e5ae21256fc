#include "nn/loss.hpp"

#include <cmath>

#include "core/error.hpp"

namespace fedsilo {

template <typename T>
double SoftmaxCrossEntropyT<T>::forwardBackward(const CMapT<T>& logits, const std::int32_t* labels,
                                                MapT<T>& grad) {
  const Index C = logits.rows(), B = logits.cols();
  const T invB = T(1) / static_cast<T>(B);
  double total = 0.0;
  for (Index j = 0; j < B; ++j) {
    const T m = logits.col(j).maxCoeff();
    grad.col(j) = (logits.col(j).array() - m).exp();
    const T s = grad.col(j).sum();
    const int y = labels[j];
    FEDSILO_ASSERT(y >= 0 && y < C, "label ", y, " outside [0, ", C, ")");
    total += static_cast<double>(std::log(s) - (logits(y, j) - m));
    grad.col(j) *= invB / s;
    grad(y, j) -= invB;
  }
  return total / static_cast<double>(B);
}

template <typename T>
double SoftmaxCrossEntropyT<T>::lossSum(const CMapT<T>& logits, const std::int32_t* labels) {
  const Index B = logits.cols();
  double total = 0.0;
  for (Index j = 0; j < B; ++j) {
    const T m = logits.col(j).maxCoeff();
    const T s = (logits.col(j).array() - m).exp().sum();
    total += static_cast<double>(std::log(s) - (logits(labels[j], j) - m));
  }
  return total;
}

template class SoftmaxCrossEntropyT<float>;
template class SoftmaxCrossEntropyT<double>;

}  // namespace fedsilo
