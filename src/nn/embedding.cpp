#include "nn/embedding.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "nn/per_example.hpp"

namespace fedsilo {

template <typename T>
EmbeddingT<T>::EmbeddingT(int vocab, int dim, int seqLen) : vocab_(vocab), dim_(dim), seqLen_(seqLen) {
  if (vocab <= 0 || dim <= 0 || seqLen <= 0)
    throw ConfigError(fmt("embedding: vocab ", vocab, ", dim ", dim, ", sequence length ", seqLen, " must be positive"));
}

template <typename T>
std::vector<ParamSpec> EmbeddingT<T>::paramSpecs() const {
  return {{"weight", static_cast<Index>(vocab_) * dim_, false, dim_}};
}

template <typename T>
void EmbeddingT<T>::bind(T* params, T* grads) {
  w_ = params;
  dw_ = grads;
}

template <typename T>
void EmbeddingT<T>::initParams(Rng& rng, T* params) const {
  const Index n = static_cast<Index>(vocab_) * dim_;
  for (Index i = 0; i < n; ++i) params[i] = static_cast<T>(rng.normal());
}

template <typename T>
Index EmbeddingT<T>::tokenAt(const CMapT<T>& x, Index t, Index b) const {
  const T v = x(t, b);
  // Written so that NaN fails too.
  if (!(v >= T(0) && v < static_cast<T>(vocab_)) || std::floor(v) != v)
    throw DataError(fmt("embedding: token id ", v, " at position ", t, " of sample ", b, " is not an integer in [0, ",
                        vocab_, ")"));
  return static_cast<Index>(v);
}

template <typename T>
void EmbeddingT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  FEDSILO_ASSERT(x.rows() == seqLen_);
  for (Index b = 0; b < x.cols(); ++b) {
    T* out = y.data() + b * y.rows();
    for (Index t = 0; t < seqLen_; ++t) {
      const T* row = w_ + tokenAt(x, t, b) * dim_;
      std::copy(row, row + dim_, out + t * dim_);
    }
  }
}

template <typename T>
void EmbeddingT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  std::fill(dw_, dw_ + static_cast<Index>(vocab_) * dim_, T(0));
  for (Index b = 0; b < x.cols(); ++b) {
    const T* g = dy.data() + b * dy.rows();
    for (Index t = 0; t < seqLen_; ++t) {
      // Scatter-add: a token repeated in the batch accumulates.
      T* row = dw_ + tokenAt(x, t, b) * dim_;
      const T* gt = g + t * dim_;
      for (int j = 0; j < dim_; ++j) row[j] += gt[j];
    }
  }
  if (dx) dx->setZero();
}

template <typename T>
bool EmbeddingT<T>::backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) {
  VecT<T> row(dim_);
  std::vector<Index> tokens(static_cast<std::size_t>(seqLen_));
  for (Index b = 0; b < x.cols(); ++b) {
    for (Index t = 0; t < seqLen_; ++t) tokens[t] = tokenAt(x, t, b);
    norms2[b] += tokenRowsNormSquared(dz.data() + b * dz.rows(), tokens.data(), seqLen_, dim_, row);
  }
  if (dx) dx->setZero();
  return true;
}

template class EmbeddingT<float>;
template class EmbeddingT<double>;

}  // namespace fedsilo
