#include "nn/lstm.hpp"

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/elementwise.hpp"

namespace fedsilo {

template <typename T>
LstmT<T>::LstmT(int inputDim, int hidden, int seqLen, bool returnSequences)
    : in_(inputDim), hidden_(hidden), seqLen_(seqLen), returnSeq_(returnSequences) {
  if (inputDim <= 0 || hidden <= 0 || seqLen <= 0)
    throw ConfigError(fmt("lstm: input ", inputDim, ", hidden ", hidden, ", sequence length ", seqLen,
                          " must be positive"));
}

template <typename T>
std::vector<ParamSpec> LstmT<T>::paramSpecs() const {
  const Index g = 4 * static_cast<Index>(hidden_);
  return {{"w_ih", g * in_, false, hidden_},
          {"w_hh", g * hidden_, false, hidden_},
          {"b_ih", g, true, hidden_},
          {"b_hh", g, true, hidden_}};
}

template <typename T>
void LstmT<T>::bind(T* params, T* grads) {
  const Index g = 4 * static_cast<Index>(hidden_);
  wih_ = params;
  whh_ = wih_ + g * in_;
  bih_ = whh_ + g * hidden_;
  bhh_ = bih_ + g;
  dwih_ = grads;
  dwhh_ = dwih_ + g * in_;
  dbih_ = dwhh_ + g * hidden_;
  dbhh_ = dbih_ + g;
}

template <typename T>
void LstmT<T>::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  maxBatch_ = maxBatch;
  const Index H = hidden_, G = 4 * H, TB = static_cast<Index>(seqLen_) * maxBatch;
  auto sized = [](AlignedVector<T>& v, Index n) { v.assign(static_cast<std::size_t>(n), T(0)); };
  const Index values = in_ * TB + 2 * G * TB + 2 * H * (TB + maxBatch) + H * TB + 2 * H * maxBatch + G;
  allocateOrFail(fmt("the lstm ", in_, " -> ", hidden_, " workspace for batches of ", maxBatch, " sequences of ",
                     seqLen_),
                 bytesOf<T>(static_cast<std::uint64_t>(values)), [&] {
                   sized(xtb_, in_ * TB);
                   sized(gates_, G * TB);
                   sized(hs_, H * (TB + maxBatch));
                   sized(cs_, H * (TB + maxBatch));
                   sized(tc_, H * TB);
                   sized(dz_, G * TB);
                   sized(dh_, H * maxBatch);
                   sized(dc_, H * maxBatch);
                   sized(bsum_, G);
                 });
  gemmIn_.reserve(G, TB, in_);
  gemmRec_.reserve(G, maxBatch, H);
  gemmBackH_.reserve(H, maxBatch, G);
  gemmWih_.reserve(in_, G, TB);
  gemmWhh_.reserve(H, G, TB);
  gemmDx_.reserve(in_, TB, G);
  xtbValid_ = false;
}

template <typename T>
void LstmT<T>::reorderInput(const CMapT<T>& x) {
  const Index B = x.cols();
  for (Index b = 0; b < B; ++b)
    for (Index t = 0; t < seqLen_; ++t) {
      const T* src = x.data() + b * x.rows() + t * in_;
      std::copy(src, src + in_, xtb_.data() + (t * B + b) * in_);
    }
  xtbValid_ = true;
}

template <typename T>
void LstmT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  const Index B = x.cols(), H = hidden_, G = 4 * H, TB = seqLen_ * B;
  FEDSILO_ASSERT(B <= maxBatch_, "lstm: batch ", B, " exceeds reserved ", maxBatch_);
  FEDSILO_ASSERT(x.rows() == static_cast<Index>(seqLen_) * in_);
  reorderInput(x);
  // Input projections of every step at once: gates = W_ih X (W_ih row-major = (in x 4H)^T).
  gemmIn_.run(GemmOp::T, GemmOp::N, G, TB, in_, T(1), wih_, in_, xtb_.data(), in_, T(0), gates_.data(), G);
  Eigen::Map<VecT<T>> bsum(bsum_.data(), G);
  bsum = Eigen::Map<const VecT<T>>(bih_, G) + Eigen::Map<const VecT<T>>(bhh_, G);
  std::fill(hs_.data(), hs_.data() + H * B, T(0));
  std::fill(cs_.data(), cs_.data() + H * B, T(0));
  for (Index t = 0; t < seqLen_; ++t) {
    T* gt = gates_.data() + t * G * B;
    MapT<T> z(gt, G, B);
    z.colwise() += bsum;
    if (t > 0)  // h_{-1} = 0: nothing to add at t = 0
      gemmRec_.run(GemmOp::T, GemmOp::N, G, B, H, T(1), whh_, H, hs_.data() + t * H * B, H, T(1), gt, G);
    // The gates through nn/elementwise.hpp: a gate's bits depend on its pre-activation only, not on its
    // row, the batch size or the buffer's alignment.
    for (Index b = 0; b < B; ++b) {
      T* col = gt + b * G;
      logisticOf(col, col, 2 * H);              // i, f
      tanhOf(col + 2 * H, col + 2 * H, H);      // g
      logisticOf(col + 3 * H, col + 3 * H, H);  // o
    }
    CMapT<T> cprev(cs_.data() + t * H * B, H, B);
    MapT<T> c(cs_.data() + (t + 1) * H * B, H, B);
    MapT<T> tc(tc_.data() + t * H * B, H, B);
    MapT<T> h(hs_.data() + (t + 1) * H * B, H, B);
    c.array() = z.middleRows(H, H).array() * cprev.array() + z.topRows(H).array() * z.middleRows(2 * H, H).array();
    tanhOf(c.data(), tc.data(), H * B);
    h.array() = z.bottomRows(H).array() * tc.array();
  }
  if (returnSeq_) {
    for (Index b = 0; b < B; ++b)
      for (Index t = 0; t < seqLen_; ++t) {
        const T* src = hs_.data() + ((t + 1) * B + b) * H;
        std::copy(src, src + H, y.data() + b * y.rows() + t * H);
      }
  } else {
    y = CMapT<T>(hs_.data() + seqLen_ * H * B, H, B);
  }
}

template <typename T>
void LstmT<T>::backpropagateThroughTime(const CMapT<T>& dy) {
  const Index B = dy.cols(), H = hidden_, G = 4 * H;
  FEDSILO_ASSERT(B <= maxBatch_);
  MapT<T> dh(dh_.data(), H, B);
  MapT<T> dc(dc_.data(), H, B);
  dh.setZero();
  dc.setZero();
  for (Index t = seqLen_ - 1; t >= 0; --t) {
    if (returnSeq_)
      dh += dy.middleRows(t * H, H);
    else if (t == seqLen_ - 1)
      dh = dy;
    CMapT<T> a(gates_.data() + t * G * B, G, B);
    const auto i = a.topRows(H).array();
    const auto f = a.middleRows(H, H).array();
    const auto g = a.middleRows(2 * H, H).array();
    const auto o = a.bottomRows(H).array();
    const auto tc = CMapT<T>(tc_.data() + t * H * B, H, B).array();
    const auto cprev = CMapT<T>(cs_.data() + t * H * B, H, B).array();
    MapT<T> dz(dz_.data() + t * G * B, G, B);
    dz.bottomRows(H).array() = dh.array() * tc * o * (T(1) - o);
    dc.array() += dh.array() * o * (T(1) - tc.square());
    dz.topRows(H).array() = dc.array() * g * i * (T(1) - i);
    dz.middleRows(H, H).array() = dc.array() * cprev * f * (T(1) - f);
    dz.middleRows(2 * H, H).array() = dc.array() * i * (T(1) - g.square());
    dc.array() *= f;
    // dh_{t-1} = W_hh^T dz_t (W_hh row-major [4H][H] read column-major is W_hh^T).
    if (t > 0) gemmBackH_.run(GemmOp::N, GemmOp::N, H, B, G, T(1), whh_, H, dz.data(), G, T(0), dh.data(), H);
  }
}

template <typename T>
void LstmT<T>::inputGradient(MapT<T>& dx) {
  const Index B = dx.cols(), G = 4 * static_cast<Index>(hidden_), TB = seqLen_ * B;
  gemmDx_.run(GemmOp::N, GemmOp::N, in_, TB, G, T(1), wih_, in_, dz_.data(), G, T(0), xtb_.data(), in_);
  xtbValid_ = false;
  for (Index b = 0; b < B; ++b)
    for (Index t = 0; t < seqLen_; ++t) {
      const T* src = xtb_.data() + (t * B + b) * in_;
      std::copy(src, src + in_, dx.data() + b * dx.rows() + t * in_);
    }
}

template <typename T>
void LstmT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  const Index B = x.cols(), G = 4 * static_cast<Index>(hidden_), H = hidden_, TB = seqLen_ * B;
  backpropagateThroughTime(dy);
  // Bias gradients: column sums in column order (element-wise adds only, so the result does not
  // depend on buffer alignment).
  Eigen::Map<VecT<T>> dbih(dbih_, G), dbhh(dbhh_, G);
  dbih.setZero();
  for (Index n = 0; n < TB; ++n) dbih += CMapT<T>(dz_.data() + n * G, G, 1);
  dbhh = dbih;
  // Weight gradients over all steps at once, written transposed into the row-major [4H][*] storage.
  if (!xtbValid_) reorderInput(x);
  gemmWih_.run(GemmOp::N, GemmOp::T, in_, G, TB, T(1), xtb_.data(), in_, dz_.data(), G, T(0), dwih_, in_);
  gemmWhh_.run(GemmOp::N, GemmOp::T, H, G, TB, T(1), hs_.data(), H, dz_.data(), G, T(0), dwhh_, H);
  if (dx) inputGradient(*dx);
}

template <typename T>
bool LstmT<T>::backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) {
  const Index B = x.cols(), H = hidden_, G = 4 * H;
  backpropagateThroughTime(dz);
  if (!xtbValid_) reorderInput(x);
  using Steps = Eigen::Map<const MatT<T>, 0, Eigen::OuterStride<>>;  // one sample's column at every step
  const PerExampleMethod inMethod = perExampleMethod(seqLen_, in_, G);
  const PerExampleMethod recMethod = perExampleMethod(seqLen_, H, G);
  for (Index b = 0; b < B; ++b) {
    Steps d(dz_.data() + b * G, G, seqLen_, Eigen::OuterStride<>(G * B));
    Steps xs(xtb_.data() + b * in_, in_, seqLen_, Eigen::OuterStride<>(in_ * B));
    Steps hprev(hs_.data() + b * H, H, seqLen_, Eigen::OuterStride<>(H * B));  // slab t holds h_{t-1}
    const double bias = static_cast<double>(d.rowwise().sum().squaredNorm());    // b_ih and b_hh alike
    norms2[b] += outerSumNormSquared(xs, d, inMethod) + outerSumNormSquared(hprev, d, recMethod) + 2.0 * bias;
  }
  if (dx) inputGradient(*dx);
  return true;
}

template class LstmT<float>;
template class LstmT<double>;

}  // namespace fedsilo
