#include "nn/feed_forward.hpp"

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/per_example.hpp"
#include "nn/token_columns.hpp"

namespace fedsilo {

template <typename T>
FeedForwardT<T>::FeedForwardT(int dim, int hidden, int seqLen) : dim_(dim), hidden_(hidden), seqLen_(seqLen) {
  if (dim <= 0 || hidden <= 0 || seqLen <= 0)
    throw ConfigError(fmt("feed-forward: dim ", dim, ", hidden ", hidden, ", sequence length ", seqLen,
                          " must be positive"));
}

template <typename T>
std::vector<ParamSpec> FeedForwardT<T>::paramSpecs() const {
  const Index dh = static_cast<Index>(dim_) * hidden_;
  return {{"w1", dh, false, dim_}, {"b1", hidden_, true, dim_}, {"w2", dh, false, hidden_}, {"b2", dim_, true, hidden_}};
}

template <typename T>
void FeedForwardT<T>::bind(T* params, T* grads) {
  const Index dh = static_cast<Index>(dim_) * hidden_;
  w1_ = params;
  b1_ = w1_ + dh;
  w2_ = b1_ + hidden_;
  b2_ = w2_ + dh;
  dw1_ = grads;
  db1_ = dw1_ + dh;
  dw2_ = db1_ + hidden_;
  db2_ = dw2_ + dh;
}

template <typename T>
void FeedForwardT<T>::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  maxBatch_ = maxBatch;
  const Index d = dim_, H = hidden_, TB = static_cast<Index>(seqLen_) * maxBatch;
  allocateOrFail(fmt("the feed-forward (", d, " -> ", H, ") workspace for batches of ", maxBatch, " sequences of ",
                     seqLen_),
                 bytesOf<T>(static_cast<std::uint64_t>(2 * H * TB)), [&] {
                   h_.assign(static_cast<std::size_t>(H * TB), T(0));
                   dh_.assign(static_cast<std::size_t>(H * TB), T(0));
                 });
  gemmUp_.reserve(H, TB, d);
  gemmDown_.reserve(d, TB, H);
  gemmDw1_.reserve(d, H, TB);
  gemmDw2_.reserve(H, d, TB);
  gemmBackH_.reserve(H, TB, d);
  gemmDx_.reserve(d, TB, H);
}

template <typename T>
void FeedForwardT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  const Index B = x.cols(), d = dim_, H = hidden_, TB = seqLen_ * B;
  FEDSILO_ASSERT(B <= maxBatch_, "feed-forward: batch ", B, " exceeds reserved ", maxBatch_);
  FEDSILO_ASSERT(x.rows() == seqLen_ * d);
  gemmUp_.run(GemmOp::T, GemmOp::N, H, TB, d, T(1), w1_, d, x.data(), d, T(0), h_.data(), H);
  MapT<T> h(h_.data(), H, TB);
  h = (h.colwise() + Eigen::Map<const VecT<T>>(b1_, H)).cwiseMax(T(0));
  y = x;  // the residual
  gemmDown_.run(GemmOp::T, GemmOp::N, d, TB, H, T(1), w2_, H, h_.data(), H, T(1), y.data(), d);
  addBiasToColumns(y.data(), d, TB, b2_);
}

template <typename T>
void FeedForwardT<T>::hiddenGradient(const CMapT<T>& dy, Index TB) {
  const Index d = dim_, H = hidden_;
  gemmBackH_.run(GemmOp::N, GemmOp::N, H, TB, d, T(1), w2_, H, dy.data(), d, T(0), dh_.data(), H);
  MapT<T> dh(dh_.data(), H, TB);
  dh = (MapT<T>(h_.data(), H, TB).array() > T(0)).select(dh, T(0));  // h > 0 exactly where the pre-activation is
}

template <typename T>
void FeedForwardT<T>::inputGradient(const CMapT<T>& dy, Index TB, MapT<T>& dx) {
  const Index d = dim_, H = hidden_;
  dx = dy;  // the residual
  gemmDx_.run(GemmOp::N, GemmOp::N, d, TB, H, T(1), w1_, d, dh_.data(), H, T(1), dx.data(), d);
}

template <typename T>
void FeedForwardT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  const Index B = x.cols(), d = dim_, H = hidden_, TB = seqLen_ * B;
  FEDSILO_ASSERT(B <= maxBatch_);
  sumColumnsInto(dy.data(), d, TB, db2_);
  // dW_2 (row-major [d][H] = column-major H x d) = relu(.) dY^T.
  gemmDw2_.run(GemmOp::N, GemmOp::T, H, d, TB, T(1), h_.data(), H, dy.data(), d, T(0), dw2_, H);
  hiddenGradient(dy, TB);
  sumColumnsInto(dh_.data(), H, TB, db1_);
  gemmDw1_.run(GemmOp::N, GemmOp::T, d, H, TB, T(1), x.data(), d, dh_.data(), H, T(0), dw1_, d);
  if (dx) inputGradient(dy, TB, *dx);
}

template <typename T>
bool FeedForwardT<T>::backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) {
  const Index B = x.cols(), d = dim_, H = hidden_, L = seqLen_, TB = L * B;
  FEDSILO_ASSERT(B <= maxBatch_);
  hiddenGradient(dz, TB);
  const PerExampleMethod up = perExampleMethod(L, d, H), down = perExampleMethod(L, H, d);
  for (Index b = 0; b < B; ++b) {
    CMapT<T> xb(x.data() + b * L * d, d, L), dyb(dz.data() + b * L * d, d, L);
    CMapT<T> hb(h_.data() + b * L * H, H, L), dhb(dh_.data() + b * L * H, H, L);
    norms2[b] += outerSumNormSquared(xb, dhb, up) + biasNormSquared(dhb) + outerSumNormSquared(hb, dyb, down) +
                 biasNormSquared(dyb);
  }
  if (dx) inputGradient(dz, TB, *dx);
  return true;
}

template class FeedForwardT<float>;
template class FeedForwardT<double>;

}  // namespace fedsilo
