#include "nn/conv2d.hpp"

#include <algorithm>
#include <type_traits>

#include "core/error.hpp"
#include "core/memory.hpp"

#include "nn/bf16.hpp"
#include "nn/conv2d_direct.hpp"
#include "nn/onednn_conv.hpp"

namespace fedsilo {

namespace {

// float runs the direct path (nn/conv2d_direct.*) on the active kernel set, unless the build routes
// products through BLAS (FEDSILO_GEMM=openblas) or the padding exceeds k - 1; double (the gradient
// tests' reference) and those cases run im2col + GemmWorkspace.
template <typename T>
constexpr bool kConvFast =
#ifdef FEDSILO_GEMM_OPENBLAS
    false;
#else
    std::is_same<T, float>::value;
#endif

// Output columns ow whose input column ow*s + kw - pad lies in [0, w): the half-open range [lo, hi).
inline void validRange(int outW, int w, int s, int kw, int pad, int& lo, int& hi) {
  const int shift = kw - pad;  // iw = ow*s + shift
  lo = shift >= 0 ? 0 : (-shift + s - 1) / s;
  const int last = w - 1 - shift;  // need ow*s <= last
  hi = last < 0 ? 0 : last / s + 1;
  lo = std::min(lo, outW);
  hi = std::max(lo, std::min(hi, outW));
}

// Geometry of the "same"-convolution fast path for one kernel offset (kh, kw), with output and
// input planes of the same size (oh = h, ow = w): output rows [rowLo, rowHi) read inside the input;
// the source index is the destination index + off; the flat destination range [p0, p1) is the part
// whose source lies inside the plane.
struct ShiftedPlane {
  int rowLo, rowHi;
  Index off, p0, p1;
};

inline ShiftedPlane shiftedPlane(int kh, int kw, int pad, int h, int w) {
  ShiftedPlane g;
  const int dh = kh - pad;
  const Index plane = static_cast<Index>(h) * w;
  g.rowLo = std::max(0, -dh);
  g.rowHi = std::min(h, h - dh);
  g.off = static_cast<Index>(dh) * w + (kw - pad);
  g.p0 = std::max<Index>(static_cast<Index>(g.rowLo) * w, -g.off);
  g.p1 = std::max(g.p0, std::min<Index>(static_cast<Index>(g.rowHi) * w, plane - g.off));
  return g;
}

// The layer's geometry, after checking that it describes a convolution.
ConvGeometry checkedGeometry(int inC, int h, int w, int outC, int k, int stride, int pad) {
  if (inC <= 0 || h <= 0 || w <= 0 || outC <= 0 || k <= 0 || stride <= 0 || pad < 0)
    throw ConfigError(fmt("conv2d: invalid geometry in=", inC, "x", h, "x", w, " out=", outC, " k=", k,
                          " stride=", stride, " pad=", pad));
  if (h + 2 * pad < k || w + 2 * pad < k)
    throw ConfigError(fmt("conv2d: kernel ", k, " larger than the padded input ", h + 2 * pad, "x", w + 2 * pad));
  return ConvGeometry(inC, h, w, outC, k, stride, pad);
}

}  // namespace

template <typename T>
Conv2DT<T>::Conv2DT(int inC, int h, int w, int outC, int k, int stride, int pad)
    : g_(checkedGeometry(inC, h, w, outC, k, stride, pad)) {
#ifdef FEDSILO_ONEDNN
  // train.precision = bf16 keeps its own kernels: oneDNN runs these products in fp32.
  if (kConvFast<T> && !bf16Active() && onednnConvChosen(k, stride, pad)) {
    onednn_ = std::make_unique<OnednnConv>(inC, h, w, outC, k, stride, pad);
    return;
  }
#endif
  if (kConvFast<T> && pad <= k - 1) direct_ = std::make_unique<ConvDirect>(g_);
}

template <typename T>
Conv2DT<T>::~Conv2DT() = default;

template <typename T>
std::vector<ParamSpec> Conv2DT<T>::paramSpecs() const {
  const int fanIn = static_cast<int>(g_.kdim);
  return {{"weight", g_.kdim * g_.outC, false, fanIn}, {"bias", g_.outC, true, fanIn}};
}

template <typename T>
void Conv2DT<T>::bind(T* params, T* grads) {
  wt_ = params;
  b_ = params + g_.kdim * g_.outC;
  dwt_ = grads;
  db_ = grads + g_.kdim * g_.outC;
}

template <typename T>
int Conv2DT<T>::chunkSamples(int batch) const {
  const Index perSample = g_.ohw * g_.kdim;
  const Index cap = std::max<Index>(1, chunkElems_ / std::max<Index>(perSample, 1));
  const Index chunks = (batch + cap - 1) / cap;
  return static_cast<int>((batch + chunks - 1) / chunks);
}

template <typename T>
void Conv2DT<T>::setMaxChunkElems(Index elems) {
  FEDSILO_ASSERT(elems > 0 && maxBatch_ == 0, "setMaxChunkElems must precede reserve()");
  chunkElems_ = elems;
}

template <typename T>
void Conv2DT<T>::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  maxBatch_ = maxBatch;
#ifdef FEDSILO_ONEDNN
  if (onednn_) {
    onednn_->reserve(maxBatch);
    return;
  }
#endif
  if (direct_) {
    direct_->reserve(maxBatch);
    direct_->reservePooled();
    return;
  }
  const Index cap = std::max<Index>(1, chunkElems_ / std::max<Index>(g_.ohw * g_.kdim, 1));
  maxChunk_ = static_cast<int>(std::min<Index>(maxBatch, cap));
  const Index n = static_cast<Index>(maxChunk_) * g_.ohw;
  const std::uint64_t values = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(g_.kdim + g_.outC);
  allocateOrFail(
      fmt("the conv2d ", g_.inC, "x", g_.h, "x", g_.w, " -> ", g_.outC, " workspace for ", maxChunk_, " samples"),
      bytesOf<T>(values), [&] {
        cols_.assign(static_cast<std::size_t>(n * g_.kdim), T(0));
        z_.assign(static_cast<std::size_t>(n * g_.outC), T(0));
      });
  gemmFwd_.reserve(n, g_.outC, g_.kdim);
  gemmWgrad_.reserve(g_.kdim, g_.outC, n);
  gemmDgrad_.reserve(n, g_.kdim, g_.outC);
  cachedB0_ = -1;
  cachedX_ = nullptr;
}

// Both transforms walk P column by column: column (c, kh, kw) holds, for every sample and output
// position, the input pixel (c, oh*s + kh - pad, ow*s + kw - pad) or 0 in the padding.
//
// Fast path for "same" convolutions (stride 1, 2*pad = k - 1, the presets' case): output and input
// planes have the same width, so a column segment is the input plane shifted by one flat offset.
// One long contiguous copy (or add) per plane then replaces oh short row loops, and only the
// |kw - pad| entries per row that wrapped around a row edge are fixed up.

template <typename T>
void Conv2DT<T>::im2col(const T* x, int b0, int nb) {
  const Index n = static_cast<Index>(nb) * g_.ohw;
  const Index plane = static_cast<Index>(g_.h) * g_.w;
  const bool same = g_.stride == 1 && g_.oh == g_.h && g_.ow == g_.w;
  for (int c = 0; c < g_.inC; ++c) {
    for (int kh = 0; kh < g_.k; ++kh) {
      for (int kw = 0; kw < g_.k; ++kw) {
        T* dst = cols_.data() + ((static_cast<Index>(c) * g_.k + kh) * g_.k + kw) * n;
        int lo, hi;
        validRange(g_.ow, g_.w, g_.stride, kw, g_.pad, lo, hi);
        const int shift = kw - g_.pad;
        if (same) {
          const auto [rowLo, rowHi, off, p0, p1] = shiftedPlane(kh, kw, g_.pad, g_.h, g_.w);
          for (int b = 0; b < nb; ++b, dst += g_.ohw) {
            const T* src = x + static_cast<Index>(b0 + b) * g_.inSize + c * plane;
            for (Index p = 0; p < p0; ++p) dst[p] = T(0);
            for (Index p = p0; p < p1; ++p) dst[p] = src[p + off];
            for (Index p = p1; p < g_.ohw; ++p) dst[p] = T(0);
            // Entries whose column fell off the left/right edge picked up a neighbouring row's pixel.
            for (int oh = rowLo; oh < rowHi; ++oh) {
              T* row = dst + static_cast<Index>(oh) * g_.ow;
              for (int ow = 0; ow < lo; ++ow) row[ow] = T(0);
              for (int ow = hi; ow < g_.ow; ++ow) row[ow] = T(0);
            }
          }
          continue;
        }
        for (int b = 0; b < nb; ++b) {
          const T* src = x + static_cast<Index>(b0 + b) * g_.inSize + c * plane;
          for (int oh = 0; oh < g_.oh; ++oh, dst += g_.ow) {
            const int ih = oh * g_.stride + kh - g_.pad;
            if (ih < 0 || ih >= g_.h) {
              for (int ow = 0; ow < g_.ow; ++ow) dst[ow] = T(0);
              continue;
            }
            const T* row = src + static_cast<Index>(ih) * g_.w;
            for (int ow = 0; ow < lo; ++ow) dst[ow] = T(0);
            if (g_.stride == 1) {
              for (int ow = lo; ow < hi; ++ow) dst[ow] = row[ow + shift];
            } else {
              for (int ow = lo; ow < hi; ++ow) dst[ow] = row[ow * g_.stride + shift];
            }
            for (int ow = hi; ow < g_.ow; ++ow) dst[ow] = T(0);
          }
        }
      }
    }
  }
}

// Scatter-adds dP (in cols_) into dx. Clobbers the padding entries of cols_ (the fast path zeroes
// the wrapped entries so that one contiguous add per plane is exact); dP is not needed afterwards.
template <typename T>
void Conv2DT<T>::col2im(T* dx, int b0, int nb) {
  const Index n = static_cast<Index>(nb) * g_.ohw;
  const Index plane = static_cast<Index>(g_.h) * g_.w;
  const bool same = g_.stride == 1 && g_.oh == g_.h && g_.ow == g_.w;
  for (int c = 0; c < g_.inC; ++c) {
    for (int kh = 0; kh < g_.k; ++kh) {
      for (int kw = 0; kw < g_.k; ++kw) {
        T* src = cols_.data() + ((static_cast<Index>(c) * g_.k + kh) * g_.k + kw) * n;
        int lo, hi;
        validRange(g_.ow, g_.w, g_.stride, kw, g_.pad, lo, hi);
        const int shift = kw - g_.pad;
        if (same) {
          const auto [rowLo, rowHi, off, p0, p1] = shiftedPlane(kh, kw, g_.pad, g_.h, g_.w);
          for (int b = 0; b < nb; ++b, src += g_.ohw) {
            T* dst = dx + static_cast<Index>(b0 + b) * g_.inSize + c * plane;
            for (int oh = rowLo; oh < rowHi; ++oh) {
              T* row = src + static_cast<Index>(oh) * g_.ow;
              for (int ow = 0; ow < lo; ++ow) row[ow] = T(0);
              for (int ow = hi; ow < g_.ow; ++ow) row[ow] = T(0);
            }
            for (Index p = p0; p < p1; ++p) dst[p + off] += src[p];
          }
          continue;
        }
        for (int b = 0; b < nb; ++b) {
          T* dst = dx + static_cast<Index>(b0 + b) * g_.inSize + c * plane;
          for (int oh = 0; oh < g_.oh; ++oh, src += g_.ow) {
            const int ih = oh * g_.stride + kh - g_.pad;
            if (ih < 0 || ih >= g_.h) continue;
            T* row = dst + static_cast<Index>(ih) * g_.w;
            if (g_.stride == 1) {
              for (int ow = lo; ow < hi; ++ow) row[ow + shift] += src[ow];
            } else {
              for (int ow = lo; ow < hi; ++ow) row[ow * g_.stride + shift] += src[ow];
            }
          }
        }
      }
    }
  }
}

template <typename T>
void Conv2DT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  forwardAct(x, y, false);
}

template <typename T>
void Conv2DT<T>::forwardRelu(const CMapT<T>& x, MapT<T>& y) {
  forwardAct(x, y, true);
}

template <typename T>
void Conv2DT<T>::forwardAct(const CMapT<T>& x, MapT<T>& y, bool relu) {
  const int batch = static_cast<int>(x.cols());
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  FEDSILO_ASSERT(x.rows() == g_.inSize && y.rows() == g_.outSize);
  if constexpr (kConvFast<T>) {
#ifdef FEDSILO_ONEDNN
    if (onednn_) {
      onednn_->forward(wt_, b_, x.data(), y.data(), batch, relu);
      return;
    }
#endif
    if (direct_) {
      direct_->forward(wt_, b_, x.data(), y.data(), batch, relu);
      return;
    }
  }
  const int chunk = chunkSamples(batch);
  for (int b0 = 0; b0 < batch; b0 += chunk) {
    const int nb = std::min(chunk, batch - b0);
    const Index n = static_cast<Index>(nb) * g_.ohw;
    im2col(x.data(), b0, nb);
    // Z (n x outC) = P (n x K) * Wt (K x outC); Wt is the row-major [outC][K] weight read column-major.
    gemmFwd_.run(GemmOp::N, GemmOp::N, n, g_.outC, g_.kdim, T(1), cols_.data(), n, wt_, g_.kdim, T(0), z_.data(), n);
    for (int b = 0; b < nb; ++b) {
      T* out = y.data() + static_cast<Index>(b0 + b) * g_.outSize;
      for (int c = 0; c < g_.outC; ++c) {
        const T* zc = z_.data() + c * n + b * g_.ohw;
        const T bias = b_[c];
        T* oc = out + c * g_.ohw;
        for (Index p = 0; p < g_.ohw; ++p) oc[p] = zc[p] + bias;
      }
    }
    cachedB0_ = b0;
    cachedNb_ = nb;
  }
  cachedX_ = x.data();
  if (relu) y = y.cwiseMax(T(0));  // exactly ReluT::forward
}

template <typename T>
void Conv2DT<T>::backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) {
  if (!backwardFast(x, y, dy, dx, false)) backwardIm2col(x, dy, dx);
}

// The float paths (oneDNN where it was chosen, else ConvDirect), with or without the ReLU folded in;
// false when neither exists and the im2col path must run.
template <typename T>
bool Conv2DT<T>::backwardFast(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx, bool relu) {
  if constexpr (kConvFast<T>) {
#ifdef FEDSILO_ONEDNN
    if (onednn_) {
      onednn_->backward(wt_, dwt_, db_, x.data(), y.data(), dy.data(), dx ? dx->data() : nullptr,
                        static_cast<int>(x.cols()), relu);
      return true;
    }
#endif
    if (direct_) {
      direct_->backward(wt_, dwt_, db_, x.data(), y.data(), dy.data(), dx ? dx->data() : nullptr,
                        static_cast<int>(x.cols()), relu);
      return true;
    }
  }
  return false;
}

template <typename T>
void Conv2DT<T>::backwardRelu(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) {
  if (backwardFast(x, y, dy, dx, true)) return;
  const int batch = static_cast<int>(x.cols());
  if (static_cast<Index>(dz_.size()) < g_.outSize * batch)
    dz_.assign(static_cast<std::size_t>(g_.outSize * batch), T(0));
  MapT<T> dz(dz_.data(), g_.outSize, batch);
  dz = (y.array() > T(0)).select(dy, T(0));  // exactly ReluT::backward
  backwardIm2col(x, CMapT<T>(dz_.data(), g_.outSize, batch), dx);
}

template <typename T>
bool Conv2DT<T>::poolFusable() const {
  if constexpr (kConvFast<T>) return direct_ != nullptr;
  return false;
}

template <typename T>
void Conv2DT<T>::forwardReluPool(const CMapT<T>& x, MapT<T>& yPool, std::uint8_t* pos) {
  FEDSILO_ASSERT(poolFusable(), "conv2d: forwardReluPool without the direct path");
  if constexpr (kConvFast<T>) {
    const int batch = static_cast<int>(x.cols());
    FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
    FEDSILO_ASSERT(x.rows() == g_.inSize && yPool.rows() == Index(g_.outC) * (g_.oh / 2) * (g_.ow / 2));
    direct_->forwardPooled(wt_, b_, x.data(), yPool.data(), pos, batch);
  }
}

template <typename T>
void Conv2DT<T>::backwardReluPool(const CMapT<T>& x, const T* yPool, const T* dyPool, const std::uint8_t* pos,
                                  MapT<T>* dx) {
  FEDSILO_ASSERT(poolFusable(), "conv2d: backwardReluPool without the direct path");
  if constexpr (kConvFast<T>) {
    const int batch = static_cast<int>(x.cols());
    FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
    direct_->backwardPooled(wt_, dwt_, db_, x.data(), yPool, dyPool, pos, dx ? dx->data() : nullptr, batch);
  }
}

template <typename T>
void Conv2DT<T>::backwardIm2col(const CMapT<T>& x, const CMapT<T>& dy, MapT<T>* dx) {
  const int batch = static_cast<int>(x.cols());
  FEDSILO_ASSERT(batch <= maxBatch_ && dy.cols() == batch);
  // Bias gradient straight from dy: sum over samples and positions of each output plane.
  for (int c = 0; c < g_.outC; ++c) db_[c] = T(0);
  for (int b = 0; b < batch; ++b) {
    const T* g = dy.data() + static_cast<Index>(b) * g_.outSize;
    for (int c = 0; c < g_.outC; ++c) {
      T s(0);
      const T* gc = g + c * g_.ohw;
      for (Index p = 0; p < g_.ohw; ++p) s += gc[p];
      db_[c] += s;
    }
  }
  const int chunk = chunkSamples(batch);
  const int chunks = (batch + chunk - 1) / chunk;
  // Reverse order: the chunk forward left in cols_ is handled first, without a second im2col.
  for (int ci = chunks - 1; ci >= 0; --ci) {
    const int b0 = ci * chunk;
    const int nb = std::min(chunk, batch - b0);
    const Index n = static_cast<Index>(nb) * g_.ohw;
    if (!(cachedX_ == x.data() && cachedB0_ == b0 && cachedNb_ == nb)) {
      im2col(x.data(), b0, nb);
      cachedX_ = x.data();
      cachedB0_ = b0;
      cachedNb_ = nb;
    }
    for (int b = 0; b < nb; ++b) {
      const T* g = dy.data() + static_cast<Index>(b0 + b) * g_.outSize;
      for (int c = 0; c < g_.outC; ++c) std::copy(g + c * g_.ohw, g + (c + 1) * g_.ohw, z_.data() + c * n + b * g_.ohw);
    }
    // dW^T (K x outC) = P^T dZ, written straight into the row-major [outC][K] gradient.
    gemmWgrad_.run(GemmOp::T, GemmOp::N, g_.kdim, g_.outC, n, T(1), cols_.data(), n, z_.data(), n,
                   ci == chunks - 1 ? T(0) : T(1), dwt_, g_.kdim);
    if (dx) {
      // dP (n x K) = dZ (n x outC) * W (outC x K); W is Wt (K x outC column-major) transposed.
      gemmDgrad_.run(GemmOp::N, GemmOp::T, n, g_.kdim, g_.outC, T(1), z_.data(), n, wt_, g_.kdim, T(0), cols_.data(),
                     n);
      cachedB0_ = -1;
      dx->middleCols(b0, nb).setZero();
      col2im(dx->data(), b0, nb);
    }
  }
}

template <typename T>
void Conv2DT<T>::samplePatches(const T* x, T* p) const {
  for (int c = 0; c < g_.inC; ++c)
    for (int kh = 0; kh < g_.k; ++kh)
      for (int kw = 0; kw < g_.k; ++kw) {
        T* col = p + ((static_cast<Index>(c) * g_.k + kh) * g_.k + kw) * g_.ohw;
        const T* plane = x + static_cast<Index>(c) * g_.h * g_.w;
        for (int oh = 0; oh < g_.oh; ++oh) {
          const int ih = oh * g_.stride + kh - g_.pad;
          T* out = col + static_cast<Index>(oh) * g_.ow;
          if (ih < 0 || ih >= g_.h) {
            std::fill(out, out + g_.ow, T(0));
            continue;
          }
          const T* row = plane + static_cast<Index>(ih) * g_.w;
          for (int ow = 0; ow < g_.ow; ++ow) {
            const int iw = ow * g_.stride + kw - g_.pad;
            out[ow] = iw >= 0 && iw < g_.w ? row[iw] : T(0);
          }
        }
      }
}

template <typename T>
PerExampleMethod Conv2DT<T>::perExampleNormMethod() const {
  return perExampleMethod(g_.ohw, g_.kdim, g_.outC);
}

template <typename T>
bool Conv2DT<T>::backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) {
  const int batch = static_cast<int>(x.cols());
  FEDSILO_ASSERT(x.rows() == g_.inSize && dz.rows() == g_.outSize && dz.cols() == batch);
  const PerExampleMethod method = perExampleNormMethod();
  if constexpr (kConvFast<T>) {
    // The float direct path forms each sample's gradient with its own weight-gradient kernel.
    if (direct_ && method == PerExampleMethod::Materialise && !bf16Active()) {
      direct_->backwardPerExample(wt_, x.data(), dz.data(), dx ? dx->data() : nullptr, batch, norms2);
      return true;
    }
  }
  const std::size_t patchValues = static_cast<std::size_t>(g_.ohw * g_.kdim);
  if (patches_.size() < patchValues) patches_.assign(patchValues, T(0));
  for (int b = 0; b < batch; ++b) {
    samplePatches(x.data() + static_cast<Index>(b) * g_.inSize, patches_.data());
    CMapT<T> p(patches_.data(), g_.ohw, g_.kdim);                                // row t: a_t
    CMapT<T> d(dz.data() + static_cast<Index>(b) * g_.outSize, g_.ohw, g_.outC);  // row t: d_t
    norms2[b] += outerSumNormSquared(p.transpose(), d.transpose(), method) +
                 static_cast<double>(d.colwise().sum().squaredNorm());
  }
  if (dx) backward(x, dz, dz, dx);
  return true;
}

template class Conv2DT<float>;
template class Conv2DT<double>;

}  // namespace fedsilo
