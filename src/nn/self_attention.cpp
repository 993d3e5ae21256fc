#include "nn/self_attention.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/per_example.hpp"
#include "nn/token_columns.hpp"

namespace fedsilo {

template <typename T>
SelfAttentionT<T>::SelfAttentionT(int dim, int seqLen, std::shared_ptr<PaddingMask> mask)
    : dim_(dim), seqLen_(seqLen), mask_(std::move(mask)) {
  if (dim <= 0 || seqLen <= 0)
    throw ConfigError(fmt("self-attention: dim ", dim, ", sequence length ", seqLen, " must be positive"));
}

template <typename T>
std::vector<ParamSpec> SelfAttentionT<T>::paramSpecs() const {
  const Index dd = static_cast<Index>(dim_) * dim_;
  return {{"w_query", dd, false, dim_},
          {"w_key", dd, false, dim_},
          {"w_value", dd, false, dim_},
          {"w_proj", dd, false, dim_},
          {"b_proj", dim_, true, dim_}};
}

template <typename T>
void SelfAttentionT<T>::bind(T* params, T* grads) {
  const Index dd = static_cast<Index>(dim_) * dim_;
  wqkv_ = params;
  wo_ = wqkv_ + 3 * dd;
  bo_ = wo_ + dd;
  dwqkv_ = grads;
  dwo_ = dwqkv_ + 3 * dd;
  dbo_ = dwo_ + dd;
}

template <typename T>
void SelfAttentionT<T>::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  maxBatch_ = maxBatch;
  const Index d = dim_, L = seqLen_, TB = L * maxBatch;
  auto sized = [](AlignedVector<T>& v, Index n) { v.assign(static_cast<std::size_t>(n), T(0)); };
  const Index values = 3 * d * TB + L * L * maxBatch + d * TB + 3 * d * TB + L * L;
  allocateOrFail(fmt("the self-attention (dim ", d, ") workspace for batches of ", maxBatch, " sequences of ", L),
                 bytesOf<T>(static_cast<std::uint64_t>(values)), [&] {
                   sized(qkv_, 3 * d * TB);
                   sized(probs_, L * L * maxBatch);
                   sized(attn_, d * TB);
                   sized(dqkv_, 3 * d * TB);
                   sized(dprobs_, L * L);
                 });
  gemmQkv_.reserve(3 * d, TB, d);
  gemmScores_.reserve(L, L, d);
  gemmMix_.reserve(d, L, L);
  gemmProj_.reserve(d, TB, d);
  gemmProjBack_.reserve(d, TB, d);
  gemmDwo_.reserve(d, d, TB);
  gemmDwqkv_.reserve(d, 3 * d, TB);
  gemmDx_.reserve(d, TB, 3 * d);
}

template <typename T>
void SelfAttentionT<T>::maskedSoftmax(T* scores, Index b) const {
  const Index L = seqLen_;
  bool anyReal = !mask_;
  for (Index j = 0; j < L && !anyReal; ++j) anyReal = mask_->isReal(b, j);
  auto keep = [&](Index j) { return !mask_ || !anyReal || mask_->isReal(b, j); };
  for (Index i = 0; i < L; ++i) {
    T* s = scores + i * L;
    T m = -std::numeric_limits<T>::infinity();
    for (Index j = 0; j < L; ++j)
      if (keep(j)) m = std::max(m, s[j]);
    T sum = T(0);
    for (Index j = 0; j < L; ++j) {
      s[j] = keep(j) ? std::exp(s[j] - m) : T(0);
      sum += s[j];
    }
    const T inv = T(1) / sum;
    for (Index j = 0; j < L; ++j) s[j] *= inv;
  }
}

template <typename T>
void SelfAttentionT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  const Index B = x.cols(), d = dim_, L = seqLen_, TB = L * B, d3 = 3 * d;
  FEDSILO_ASSERT(B <= maxBatch_, "self-attention: batch ", B, " exceeds reserved ", maxBatch_);
  FEDSILO_ASSERT(x.rows() == L * d);
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  // [q; k; v] = W_qkv X (W_qkv row-major [3d][d], read column-major as its transpose).
  gemmQkv_.run(GemmOp::T, GemmOp::N, d3, TB, d, T(1), wqkv_, d, x.data(), d, T(0), qkv_.data(), d3);
  for (Index b = 0; b < B; ++b) {
    const T* q = qkv_.data() + b * L * d3;
    T* p = probs_.data() + b * L * L;
    // scores(j, i) = k_j . q_i / sqrt(d): column i holds query i's scores.
    gemmScores_.run(GemmOp::T, GemmOp::N, L, L, d, scale, q + d, d3, q, d3, T(0), p, L);
    maskedSoftmax(p, b);
    // a_i = sum_j p(j, i) v_j.
    gemmMix_.run(GemmOp::N, GemmOp::N, d, L, L, T(1), q + 2 * d, d3, p, L, T(0), attn_.data() + b * L * d, d);
  }
  y = x;
  gemmProj_.run(GemmOp::T, GemmOp::N, d, TB, d, T(1), wo_, d, attn_.data(), d, T(1), y.data(), d);
  addBiasToColumns(y.data(), d, TB, bo_);
}

template <typename T>
void SelfAttentionT<T>::queryKeyValueGradient(const T* da, Index B) {
  const Index d = dim_, L = seqLen_, d3 = 3 * d;
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  for (Index b = 0; b < B; ++b) {
    const T* q = qkv_.data() + b * L * d3;
    const T* p = probs_.data() + b * L * L;
    const T* dab = da + b * L * d;
    T* dq = dqkv_.data() + b * L * d3;
    T* dp = dprobs_.data();
    // dv_j = sum_i p(j, i) da_i;  dp(j, i) = v_j . da_i.
    gemmMix_.run(GemmOp::N, GemmOp::T, d, L, L, T(1), dab, d, p, L, T(0), dq + 2 * d, d3);
    gemmScores_.run(GemmOp::T, GemmOp::N, L, L, d, T(1), q + 2 * d, d3, dab, d, T(0), dp, L);
    // Softmax backward per column: ds = p .* (dp - p . dp); padded keys have p = 0, so ds = 0.
    for (Index i = 0; i < L; ++i) {
      Eigen::Map<VecT<T>> dpi(dp + i * L, L);
      Eigen::Map<const VecT<T>> pi(p + i * L, L);
      const T dot = pi.dot(dpi);
      dpi = pi.cwiseProduct((dpi.array() - dot).matrix());
    }
    // dq_i = sum_j ds(j, i) k_j / sqrt(d);  dk_j = sum_i ds(j, i) q_i / sqrt(d).
    gemmMix_.run(GemmOp::N, GemmOp::N, d, L, L, scale, q + d, d3, dp, L, T(0), dq, d3);
    gemmMix_.run(GemmOp::N, GemmOp::T, d, L, L, scale, q, d3, dp, L, T(0), dq + d, d3);
  }
}

template <typename T>
void SelfAttentionT<T>::inputGradient(const CMapT<T>& dy, Index TB, MapT<T>& dx) {
  const Index d = dim_, d3 = 3 * d;
  dx = dy;  // the residual
  gemmDx_.run(GemmOp::N, GemmOp::N, d, TB, d3, T(1), wqkv_, d, dqkv_.data(), d3, T(1), dx.data(), d);
}

template <typename T>
void SelfAttentionT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  const Index B = x.cols(), d = dim_, L = seqLen_, TB = L * B, d3 = 3 * d;
  FEDSILO_ASSERT(B <= maxBatch_);
  sumColumnsInto(dy.data(), d, TB, dbo_);
  // dW_o (row-major [out][in] = column-major in x out) = A dY^T.
  gemmDwo_.run(GemmOp::N, GemmOp::T, d, d, TB, T(1), attn_.data(), d, dy.data(), d, T(0), dwo_, d);
  T* da = attn_.data();  // A is no longer needed: dL/dA = W_o^T dY overwrites it
  gemmProjBack_.run(GemmOp::N, GemmOp::N, d, TB, d, T(1), wo_, d, dy.data(), d, T(0), da, d);
  queryKeyValueGradient(da, B);
  gemmDwqkv_.run(GemmOp::N, GemmOp::T, d, d3, TB, T(1), x.data(), d, dqkv_.data(), d3, T(0), dwqkv_, d);
  if (dx) inputGradient(dy, TB, *dx);
}

template <typename T>
bool SelfAttentionT<T>::backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) {
  const Index B = x.cols(), d = dim_, L = seqLen_, TB = L * B, d3 = 3 * d;
  FEDSILO_ASSERT(B <= maxBatch_);
  if (dattn_.size() < static_cast<std::size_t>(d * L * maxBatch_))
    dattn_.assign(static_cast<std::size_t>(d * L * maxBatch_), T(0));
  const PerExampleMethod proj = perExampleMethod(L, d, d), qkv = perExampleMethod(L, d, d3);
  for (Index b = 0; b < B; ++b) {
    CMapT<T> ab(attn_.data() + b * L * d, d, L), dyb(dz.data() + b * L * d, d, L);
    norms2[b] += outerSumNormSquared(ab, dyb, proj) + biasNormSquared(dyb);
  }
  gemmProjBack_.run(GemmOp::N, GemmOp::N, d, TB, d, T(1), wo_, d, dz.data(), d, T(0), dattn_.data(), d);
  queryKeyValueGradient(dattn_.data(), B);
  for (Index b = 0; b < B; ++b) {
    CMapT<T> xb(x.data() + b * L * d, d, L), dqkvb(dqkv_.data() + b * L * d3, d3, L);
    norms2[b] += outerSumNormSquared(xb, dqkvb, qkv);
  }
  if (dx) inputGradient(dz, TB, *dx);
  return true;
}

template class SelfAttentionT<float>;
template class SelfAttentionT<double>;

}  // namespace fedsilo
