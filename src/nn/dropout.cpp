#include "nn/dropout.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/memory.hpp"

namespace fedsilo {

template <typename T>
DropoutT<T>::DropoutT(Shape shape, double p) : shape_(shape), p_(p) {
  if (!(p >= 0.0 && p < 1.0)) throw ConfigError(fmt("dropout rate ", p, " outside [0, 1)"));
}

template <typename T>
void DropoutT<T>::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  maxBatch_ = maxBatch;
  const std::size_t values = static_cast<std::size_t>(shape_.size()) * static_cast<std::size_t>(maxBatch);
  allocateOrFail(fmt("the dropout mask for batches of ", maxBatch, " samples"), bytesOf<T>(values),
                 [&] { mask_.assign(values, T(0)); });
}

template <typename T>
void DropoutT<T>::setRandomContext(std::uint64_t seed, std::int64_t client, std::int64_t round, int layerIndex) {
  seed_ = seed;
  client_ = client;
  round_ = round;
  layerIndex_ = layerIndex;
  counter_ = 0;
}

template <typename T>
void DropoutT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool training) {
  lastTraining_ = training && p_ > 0.0;
  if (!lastTraining_) {
    y = x;
    return;
  }
  FEDSILO_ASSERT(x.cols() <= maxBatch_, "dropout: batch ", x.cols(), " exceeds reserved ", maxBatch_);
  const std::uint64_t extra = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(layerIndex_)) << 32) | counter_;
  ++counter_;
  Rng rng(seed_, client_, round_, Purpose::Dropout, extra);
  const T scale = static_cast<T>(1.0 / (1.0 - p_));
  const Index n = x.size();
  // rng.uniform() < p, without the conversion: uniform() is (next() >> 11) 2^-53 exactly, and for an integer
  // u, u 2^-53 < p exactly when u < ceil(p 2^53); the same draws, the same mask.
  const std::uint64_t below = static_cast<std::uint64_t>(std::ceil(std::ldexp(p_, 53)));
  T* m = mask_.data();
  const T* xi = x.data();
  T* yi = y.data();
  for (Index i = 0; i < n; ++i) {
    m[i] = (rng.next() >> 11) < below ? T(0) : scale;
    yi[i] = xi[i] * m[i];
  }
}

template <typename T>
void DropoutT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  if (!dx) return;
  if (!lastTraining_) {
    *dx = dy;
    return;
  }
  dx->array() = dy.array() * Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic>>(mask_.data(), x.rows(), x.cols());
}

template class DropoutT<float>;
template class DropoutT<double>;

}  // namespace fedsilo
