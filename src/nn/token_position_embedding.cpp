#include "nn/token_position_embedding.hpp"

#include <cmath>

#include <vector>

#include "core/error.hpp"
#include "nn/per_example.hpp"

namespace fedsilo {

template <typename T>
TokenPositionEmbeddingT<T>::TokenPositionEmbeddingT(int vocab, int dim, int seqLen, int maxLen,
                                                    std::shared_ptr<PaddingMask> mask)
    : vocab_(vocab), dim_(dim), seqLen_(seqLen), maxLen_(maxLen), mask_(std::move(mask)) {
  if (vocab <= 0 || dim <= 0 || seqLen <= 0)
    throw ConfigError(fmt("token/position embedding: vocab ", vocab, ", dim ", dim, ", sequence length ", seqLen,
                          " must be positive"));
  if (maxLen < seqLen)
    throw ConfigError(fmt("model.max_len = ", maxLen, ": the position table needs at least the dataset's ", seqLen,
                          " tokens per sample"));
}

template <typename T>
std::vector<ParamSpec> TokenPositionEmbeddingT<T>::paramSpecs() const {
  return {{"token", static_cast<Index>(vocab_) * dim_, false, dim_},
          {"position", static_cast<Index>(maxLen_) * dim_, false, dim_}};
}

template <typename T>
void TokenPositionEmbeddingT<T>::bind(T* params, T* grads) {
  tok_ = params;
  pos_ = tok_ + static_cast<Index>(vocab_) * dim_;
  dtok_ = grads;
  dpos_ = dtok_ + static_cast<Index>(vocab_) * dim_;
}

template <typename T>
void TokenPositionEmbeddingT<T>::initParams(Rng& rng, T* params) const {
  const Index rows = static_cast<Index>(vocab_) + maxLen_;
  for (Index r = 0; r < rows; ++r) {
    Eigen::Map<VecT<T>> row(params + r * dim_, dim_);
    for (Index j = 0; j < dim_; ++j) row(j) = static_cast<T>(rng.normal());
    const T n = row.norm();
    if (n > T(0)) row /= n;
  }
}

template <typename T>
void TokenPositionEmbeddingT<T>::reserve(int maxBatch) {
  if (!mask_) return;
  mask_->seqLen = seqLen_;
  if (mask_->real.size() < static_cast<std::size_t>(maxBatch) * seqLen_)
    mask_->real.assign(static_cast<std::size_t>(maxBatch) * seqLen_, 1);
}

template <typename T>
Index TokenPositionEmbeddingT<T>::tokenAt(const CMapT<T>& x, Index t, Index b) const {
  const T v = x(t, b);
  if (!(v >= T(0) && v < static_cast<T>(vocab_)) || std::floor(v) != v)  // NaN fails too
    throw DataError(fmt("embedding: token id ", v, " at position ", t, " of sample ", b, " is not an integer in [0, ",
                        vocab_, ")"));
  return static_cast<Index>(v);
}

template <typename T>
void TokenPositionEmbeddingT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  FEDSILO_ASSERT(x.rows() == seqLen_);
  FEDSILO_ASSERT(!mask_ || mask_->real.size() >= static_cast<std::size_t>(x.cols()) * seqLen_,
                 "token/position embedding: batch ", x.cols(), " exceeds the reserved batch");
  for (Index b = 0; b < x.cols(); ++b) {
    T* out = y.data() + b * y.rows();
    for (Index t = 0; t < seqLen_; ++t) {
      const Index id = tokenAt(x, t, b);
      Eigen::Map<VecT<T>>(out + t * dim_, dim_) =
          Eigen::Map<const VecT<T>>(tok_ + id * dim_, dim_) + Eigen::Map<const VecT<T>>(pos_ + t * dim_, dim_);
      if (mask_) mask_->real[static_cast<std::size_t>(b * seqLen_ + t)] = id != 0;
    }
  }
}

template <typename T>
void TokenPositionEmbeddingT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  std::fill(dtok_, dtok_ + static_cast<Index>(vocab_) * dim_, T(0));
  std::fill(dpos_, dpos_ + static_cast<Index>(maxLen_) * dim_, T(0));
  for (Index b = 0; b < x.cols(); ++b) {
    const T* g = dy.data() + b * dy.rows();
    for (Index t = 0; t < seqLen_; ++t) {
      Eigen::Map<const VecT<T>> gt(g + t * dim_, dim_);
      Eigen::Map<VecT<T>>(dtok_ + tokenAt(x, t, b) * dim_, dim_) += gt;  // a repeated token accumulates
      Eigen::Map<VecT<T>>(dpos_ + t * dim_, dim_) += gt;
    }
  }
  if (dx) dx->setZero();
}

template <typename T>
bool TokenPositionEmbeddingT<T>::backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx,
                                                    double* norms2) {
  VecT<T> row(dim_);
  std::vector<Index> tokens(static_cast<std::size_t>(seqLen_));
  for (Index b = 0; b < x.cols(); ++b) {
    for (Index t = 0; t < seqLen_; ++t) tokens[t] = tokenAt(x, t, b);
    const T* g = dz.data() + b * dz.rows();
    const double positions = static_cast<double>(Eigen::Map<const VecT<T>>(g, dz.rows()).squaredNorm());
    norms2[b] += tokenRowsNormSquared(g, tokens.data(), seqLen_, dim_, row) + positions;
  }
  if (dx) dx->setZero();
  return true;
}

template class TokenPositionEmbeddingT<float>;
template class TokenPositionEmbeddingT<double>;

}  // namespace fedsilo
