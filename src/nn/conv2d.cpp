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

}  // namespace

template <typename T>
Conv2DT<T>::Conv2DT(int inC, int h, int w, int outC, int k, int stride, int pad)
    : inC_(inC), h_(h), w_(w), outC_(outC), k_(k), stride_(stride), pad_(pad) {
  if (inC <= 0 || h <= 0 || w <= 0 || outC <= 0 || k <= 0 || stride <= 0 || pad < 0)
    throw ConfigError(fmt("conv2d: invalid geometry in=", inC, "x", h, "x", w, " out=", outC, " k=", k,
                          " stride=", stride, " pad=", pad));
  if (h + 2 * pad < k || w + 2 * pad < k)
    throw ConfigError(fmt("conv2d: kernel ", k, " larger than the padded input ", h + 2 * pad, "x", w + 2 * pad));
  oh_ = (h + 2 * pad - k) / stride + 1;
  ow_ = (w + 2 * pad - k) / stride + 1;
  ohw_ = static_cast<Index>(oh_) * ow_;
  kdim_ = static_cast<Index>(inC) * k * k;
  inSize_ = static_cast<Index>(inC) * h * w;
  outSize_ = static_cast<Index>(outC) * ohw_;
#ifdef FEDSILO_ONEDNN
  // train.precision = bf16 keeps its own kernels: oneDNN runs these products in fp32.
  if (kConvFast<T> && !bf16Active() && onednnConvChosen(k, stride, pad)) {
    onednn_ = std::make_unique<OnednnConv>(inC, h, w, outC, k, stride, pad);
    return;
  }
#endif
  if (kConvFast<T> && pad <= k - 1) direct_ = std::make_unique<ConvDirect>(inC, h, w, outC, k, stride, pad);
}

template <typename T>
Conv2DT<T>::~Conv2DT() = default;

template <typename T>
std::vector<ParamSpec> Conv2DT<T>::paramSpecs() const {
  const int fanIn = static_cast<int>(kdim_);
  return {{"weight", kdim_ * outC_, false, fanIn}, {"bias", outC_, true, fanIn}};
}

template <typename T>
void Conv2DT<T>::bind(T* params, T* grads) {
  wt_ = params;
  b_ = params + kdim_ * outC_;
  dwt_ = grads;
  db_ = grads + kdim_ * outC_;
}

template <typename T>
int Conv2DT<T>::chunkSamples(int batch) const {
  const Index perSample = ohw_ * kdim_;
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
    return;
  }
  const Index cap = std::max<Index>(1, chunkElems_ / std::max<Index>(ohw_ * kdim_, 1));
  maxChunk_ = static_cast<int>(std::min<Index>(maxBatch, cap));
  const Index n = static_cast<Index>(maxChunk_) * ohw_;
  const std::uint64_t values = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(kdim_ + outC_);
  allocateOrFail(fmt("the conv2d ", inC_, "x", h_, "x", w_, " -> ", outC_, " workspace for ", maxChunk_, " samples"),
                 bytesOf<T>(values), [&] {
                   cols_.assign(static_cast<std::size_t>(n * kdim_), T(0));
                   z_.assign(static_cast<std::size_t>(n * outC_), T(0));
                 });
  gemmFwd_.reserve(n, outC_, kdim_);
  gemmWgrad_.reserve(kdim_, outC_, n);
  gemmDgrad_.reserve(n, kdim_, outC_);
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
  const Index n = static_cast<Index>(nb) * ohw_;
  const Index plane = static_cast<Index>(h_) * w_;
  const bool same = stride_ == 1 && oh_ == h_ && ow_ == w_;
  for (int c = 0; c < inC_; ++c) {
    for (int kh = 0; kh < k_; ++kh) {
      for (int kw = 0; kw < k_; ++kw) {
        T* dst = cols_.data() + ((static_cast<Index>(c) * k_ + kh) * k_ + kw) * n;
        int lo, hi;
        validRange(ow_, w_, stride_, kw, pad_, lo, hi);
        const int shift = kw - pad_;
        if (same) {
          const auto [rowLo, rowHi, off, p0, p1] = shiftedPlane(kh, kw, pad_, h_, w_);
          for (int b = 0; b < nb; ++b, dst += ohw_) {
            const T* src = x + static_cast<Index>(b0 + b) * inSize_ + c * plane;
            for (Index p = 0; p < p0; ++p) dst[p] = T(0);
            for (Index p = p0; p < p1; ++p) dst[p] = src[p + off];
            for (Index p = p1; p < ohw_; ++p) dst[p] = T(0);
            // Entries whose column fell off the left/right edge picked up a neighbouring row's pixel.
            for (int oh = rowLo; oh < rowHi; ++oh) {
              T* row = dst + static_cast<Index>(oh) * ow_;
              for (int ow = 0; ow < lo; ++ow) row[ow] = T(0);
              for (int ow = hi; ow < ow_; ++ow) row[ow] = T(0);
            }
          }
          continue;
        }
        for (int b = 0; b < nb; ++b) {
          const T* src = x + static_cast<Index>(b0 + b) * inSize_ + c * plane;
          for (int oh = 0; oh < oh_; ++oh, dst += ow_) {
            const int ih = oh * stride_ + kh - pad_;
            if (ih < 0 || ih >= h_) {
              for (int ow = 0; ow < ow_; ++ow) dst[ow] = T(0);
              continue;
            }
            const T* row = src + static_cast<Index>(ih) * w_;
            for (int ow = 0; ow < lo; ++ow) dst[ow] = T(0);
            if (stride_ == 1) {
              for (int ow = lo; ow < hi; ++ow) dst[ow] = row[ow + shift];
            } else {
              for (int ow = lo; ow < hi; ++ow) dst[ow] = row[ow * stride_ + shift];
            }
            for (int ow = hi; ow < ow_; ++ow) dst[ow] = T(0);
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
  const Index n = static_cast<Index>(nb) * ohw_;
  const Index plane = static_cast<Index>(h_) * w_;
  const bool same = stride_ == 1 && oh_ == h_ && ow_ == w_;
  for (int c = 0; c < inC_; ++c) {
    for (int kh = 0; kh < k_; ++kh) {
      for (int kw = 0; kw < k_; ++kw) {
        T* src = cols_.data() + ((static_cast<Index>(c) * k_ + kh) * k_ + kw) * n;
        int lo, hi;
        validRange(ow_, w_, stride_, kw, pad_, lo, hi);
        const int shift = kw - pad_;
        if (same) {
          const auto [rowLo, rowHi, off, p0, p1] = shiftedPlane(kh, kw, pad_, h_, w_);
          for (int b = 0; b < nb; ++b, src += ohw_) {
            T* dst = dx + static_cast<Index>(b0 + b) * inSize_ + c * plane;
            for (int oh = rowLo; oh < rowHi; ++oh) {
              T* row = src + static_cast<Index>(oh) * ow_;
              for (int ow = 0; ow < lo; ++ow) row[ow] = T(0);
              for (int ow = hi; ow < ow_; ++ow) row[ow] = T(0);
            }
            for (Index p = p0; p < p1; ++p) dst[p + off] += src[p];
          }
          continue;
        }
        for (int b = 0; b < nb; ++b) {
          T* dst = dx + static_cast<Index>(b0 + b) * inSize_ + c * plane;
          for (int oh = 0; oh < oh_; ++oh, src += ow_) {
            const int ih = oh * stride_ + kh - pad_;
            if (ih < 0 || ih >= h_) continue;
            T* row = dst + static_cast<Index>(ih) * w_;
            if (stride_ == 1) {
              for (int ow = lo; ow < hi; ++ow) row[ow + shift] += src[ow];
            } else {
              for (int ow = lo; ow < hi; ++ow) row[ow * stride_ + shift] += src[ow];
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
  FEDSILO_ASSERT(x.rows() == inSize_ && y.rows() == outSize_);
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
    const Index n = static_cast<Index>(nb) * ohw_;
    im2col(x.data(), b0, nb);
    // Z (n x outC) = P (n x K) * Wt (K x outC); Wt is the row-major [outC][K] weight read column-major.
    gemmFwd_.run(GemmOp::N, GemmOp::N, n, outC_, kdim_, T(1), cols_.data(), n, wt_, kdim_, T(0), z_.data(), n);
    for (int b = 0; b < nb; ++b) {
      T* out = y.data() + static_cast<Index>(b0 + b) * outSize_;
      for (int c = 0; c < outC_; ++c) {
        const T* zc = z_.data() + c * n + b * ohw_;
        const T bias = b_[c];
        T* oc = out + c * ohw_;
        for (Index p = 0; p < ohw_; ++p) oc[p] = zc[p] + bias;
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
  if constexpr (kConvFast<T>) {
#ifdef FEDSILO_ONEDNN
    if (onednn_) {
      onednn_->backward(wt_, dwt_, db_, x.data(), y.data(), dy.data(), dx ? dx->data() : nullptr,
                        static_cast<int>(x.cols()), false);
      return;
    }
#endif
    if (direct_) {
      direct_->backward(wt_, dwt_, db_, x.data(), y.data(), dy.data(), dx ? dx->data() : nullptr,
                        static_cast<int>(x.cols()), false);
      return;
    }
  }
  backwardIm2col(x, dy, dx);
}

template <typename T>
void Conv2DT<T>::backwardRelu(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) {
  if constexpr (kConvFast<T>) {
#ifdef FEDSILO_ONEDNN
    if (onednn_) {
      onednn_->backward(wt_, dwt_, db_, x.data(), y.data(), dy.data(), dx ? dx->data() : nullptr,
                        static_cast<int>(x.cols()), true);
      return;
    }
#endif
    if (direct_) {
      direct_->backward(wt_, dwt_, db_, x.data(), y.data(), dy.data(), dx ? dx->data() : nullptr,
                        static_cast<int>(x.cols()), true);
      return;
    }
  }
  const int batch = static_cast<int>(x.cols());
  if (static_cast<Index>(dz_.size()) < outSize_ * batch) dz_.assign(static_cast<std::size_t>(outSize_ * batch), T(0));
  MapT<T> dz(dz_.data(), outSize_, batch);
  dz = (y.array() > T(0)).select(dy, T(0));  // exactly ReluT::backward
  backwardIm2col(x, CMapT<T>(dz_.data(), outSize_, batch), dx);
}

template <typename T>
void Conv2DT<T>::backwardIm2col(const CMapT<T>& x, const CMapT<T>& dy, MapT<T>* dx) {
  const int batch = static_cast<int>(x.cols());
  FEDSILO_ASSERT(batch <= maxBatch_ && dy.cols() == batch);
  // Bias gradient straight from dy: sum over samples and positions of each output plane.
  for (int c = 0; c < outC_; ++c) db_[c] = T(0);
  for (int b = 0; b < batch; ++b) {
    const T* g = dy.data() + static_cast<Index>(b) * outSize_;
    for (int c = 0; c < outC_; ++c) {
      T s(0);
      const T* gc = g + c * ohw_;
      for (Index p = 0; p < ohw_; ++p) s += gc[p];
      db_[c] += s;
    }
  }
  const int chunk = chunkSamples(batch);
  const int chunks = (batch + chunk - 1) / chunk;
  // Reverse order: the chunk forward left in cols_ is handled first, without a second im2col.
  for (int ci = chunks - 1; ci >= 0; --ci) {
    const int b0 = ci * chunk;
    const int nb = std::min(chunk, batch - b0);
    const Index n = static_cast<Index>(nb) * ohw_;
    if (!(cachedX_ == x.data() && cachedB0_ == b0 && cachedNb_ == nb)) {
      im2col(x.data(), b0, nb);
      cachedX_ = x.data();
      cachedB0_ = b0;
      cachedNb_ = nb;
    }
    for (int b = 0; b < nb; ++b) {
      const T* g = dy.data() + static_cast<Index>(b0 + b) * outSize_;
      for (int c = 0; c < outC_; ++c) std::copy(g + c * ohw_, g + (c + 1) * ohw_, z_.data() + c * n + b * ohw_);
    }
    // dW^T (K x outC) = P^T dZ, written straight into the row-major [outC][K] gradient.
    gemmWgrad_.run(GemmOp::T, GemmOp::N, kdim_, outC_, n, T(1), cols_.data(), n, z_.data(), n,
                     ci == chunks - 1 ? T(0) : T(1), dwt_, kdim_);
    if (dx) {
      // dP (n x K) = dZ (n x outC) * W (outC x K); W is Wt (K x outC column-major) transposed.
      gemmDgrad_.run(GemmOp::N, GemmOp::T, n, kdim_, outC_, T(1), z_.data(), n, wt_, kdim_, T(0), cols_.data(), n);
      cachedB0_ = -1;
      dx->middleCols(b0, nb).setZero();
      col2im(dx->data(), b0, nb);
    }
  }
}

template class Conv2DT<float>;
template class Conv2DT<double>;

}  // namespace fedsilo
