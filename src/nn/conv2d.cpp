#include "nn/conv2d.hpp"

#include <algorithm>
#include <type_traits>

#include "core/error.hpp"
#include "core/memory.hpp"

// Float builds with AVX-512 (and the default FEDSILO_GEMM=eigen) run the three products of a chunk
// with register-blocked kernels that read P, dZ and W where they lie (no packing copies) and write
// every output once (dP is not zero-filled first); everything else uses GemmWorkspace (Eigen's
// GEBP, or sgemm with FEDSILO_GEMM=openblas). docs/performance.md has the figures.
#include "nn/simd_avx512.hpp"

namespace fedsilo {

#if FEDSILO_NN_AVX512
namespace conv_kernels {

using simd::loadInRegister;
using simd::maskFor;
using simd::transpose16;

// Notation for one chunk: n rows (sample-major output positions), K = inC*k*k, C = outC.
// P, dP: n x K column-major (p[i + k*n]); Z, dZ: n x C column-major; W: [C][K] row-major.
// Tiles at the edges repeat a valid row/column and drop the result, so every output element goes
// through the same operations wherever it sits.

// Z = P W^T, vectorised along the rows: V vectors of 16 rows x 8 output channels, over k.
template <int V>
void fwdTile(const float* p, Index n, const float* w, Index K, float* z, Index i0, __mmask16 last, int c0, int nC) {
  __m512 acc[8 * V];
#pragma GCC unroll 32
  for (int a = 0; a < 8 * V; ++a) acc[a] = _mm512_setzero_ps();
  const float* wr[8];
#pragma GCC unroll 8
  for (int r = 0; r < 8; ++r) wr[r] = w + static_cast<Index>(c0 + std::min(r, nC - 1)) * K;
  const float* pc = p + i0;
  for (Index k = 0; k < K; ++k, pc += n) {
    __m512 pv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) pv[v] = loadInRegister(v == V - 1 ? last : __mmask16(0xFFFF), pc + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) {
      const __m512 d = _mm512_set1_ps(wr[r][k]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r * V + v] = _mm512_fmadd_ps(pv[v], d, acc[r * V + v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < 8; ++r) {
    if (r >= nC) break;
    float* out = z + static_cast<Index>(c0 + r) * n + i0;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) _mm512_mask_storeu_ps(out + 16 * v, v == V - 1 ? last : __mmask16(0xFFFF), acc[r * V + v]);
  }
}

void forward(const float* p, Index n, const float* w, Index K, int C, float* z) {
  constexpr int kV = 3;
  const Index vecs = (n + 15) / 16;
  for (int c0 = 0; c0 < C; c0 += 8) {  // W rows of the tile stay in L1 while P streams
    const int nC = std::min(8, C - c0);
    for (Index v0 = 0; v0 < vecs; v0 += kV) {
      const int nv = static_cast<int>(std::min<Index>(kV, vecs - v0));
      const Index i0 = v0 * 16;
      const __mmask16 last = maskFor(n - (i0 + 16 * (nv - 1)));
      switch (nv) {
        case 3: fwdTile<3>(p, n, w, K, z, i0, last, c0, nC); break;
        case 2: fwdTile<2>(p, n, w, K, z, i0, last, c0, nC); break;
        default: fwdTile<1>(p, n, w, K, z, i0, last, c0, nC); break;
      }
    }
  }
}

// zt[(b*ohw + p)*C + c] = dy_b[c*ohw + p] for the nb samples of a chunk: dZ with the channels of a
// row contiguous, by 16 x 16 block transposes.
void transposeDy(const float* dy, Index outSize, Index ohw, int C, int nb, float* zt) {
  for (int b = 0; b < nb; ++b) {
    const float* src = dy + static_cast<Index>(b) * outSize;
    float* dst = zt + static_cast<Index>(b) * ohw * C;
    for (int c0 = 0; c0 < C; c0 += 16) {
      const int nc = std::min(16, C - c0);
      for (Index p0 = 0; p0 < ohw; p0 += 16) {
        const int np = static_cast<int>(std::min<Index>(16, ohw - p0));
        const __mmask16 pm = maskFor(np), cm = maskFor(nc);
        __m512 r[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i)
          r[i] = i < nc ? _mm512_maskz_loadu_ps(pm, src + static_cast<Index>(c0 + i) * ohw + p0) : _mm512_setzero_ps();
        transpose16(r);
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j)
          if (j < np) _mm512_mask_storeu_ps(dst + (p0 + j) * C + c0, cm, r[j]);
      }
    }
  }
}

// dW[c][k] (+)= sum_i dZ[i, c] P[i, k], outer-product form on dZ transposed: a tile of R columns k
// x V vectors of 16 channels, over the rows in order (per i: V loads, R broadcasts, RV FMAs); the
// R x 16V tile is transposed once to write (or add to) R consecutive k of each channel.
template <int V, int kR>
void wgradTile(const float* zt, int C, const float* p, Index n, float* dw, Index K, int c0, __mmask16 lastC, Index k0,
               int nK, bool accumulate) {
  __m512 acc[kR * V];
#pragma GCC unroll 32
  for (int a = 0; a < kR * V; ++a) acc[a] = _mm512_setzero_ps();
  const float* pc[kR];
#pragma GCC unroll 16
  for (int r = 0; r < kR; ++r) pc[r] = p + (k0 + std::min(r, nK - 1)) * n;
  const float* zr = zt + c0;
  for (Index i = 0; i < n; ++i, zr += C) {
    __m512 zv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) zv[v] = loadInRegister(v == V - 1 ? lastC : __mmask16(0xFFFF), zr + 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      const __m512 d = _mm512_set1_ps(pc[r][i]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r * V + v] = _mm512_fmadd_ps(zv[v], d, acc[r * V + v]);
    }
  }
  const __mmask16 km = maskFor(nK);
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    __m512 t[16];
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) t[r] = r < kR ? acc[r * V + v] : _mm512_setzero_ps();
    transpose16(t);  // t[l]: the 6 columns k0.. of channel c0 + 16v + l
    const int nl = std::min(16, C - (c0 + 16 * v));
#pragma GCC unroll 16
    for (int l = 0; l < 16; ++l) {
      if (l >= nl) break;
      float* out = dw + static_cast<Index>(c0 + 16 * v + l) * K + k0;
      const __m512 val = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(km, out), t[l]) : t[l];
      _mm512_mask_storeu_ps(out, km, val);
    }
  }
}

template <int V, int R>
void wgradBlock(const float* zt, int C, const float* p, Index n, float* dw, Index K, int c0, __mmask16 lastC,
                bool accumulate) {
  for (Index k0 = 0; k0 < K; k0 += R)
    wgradTile<V, R>(zt, C, p, n, dw, K, c0, lastC, k0, static_cast<int>(std::min<Index>(R, K - k0)), accumulate);
}

// Channel blocks of up to 64 (4 vectors); fewer channels get more columns per tile (up to 26
// accumulators), e.g. W2's conv1 (32 channels, K = 25): 2 tiles of 13 columns.
void wgrad(const float* zt, const float* p, Index n, float* dw, Index K, int C, bool accumulate) {
  for (int c0 = 0; c0 < C; c0 += 64) {
    const int nc = std::min(64, C - c0);
    const int nv = (nc + 15) / 16;
    const __mmask16 lastC = maskFor(nc - 16 * (nv - 1));
    switch (nv) {
      case 4: wgradBlock<4, 6>(zt, C, p, n, dw, K, c0, lastC, accumulate); break;
      case 3: wgradBlock<3, 8>(zt, C, p, n, dw, K, c0, lastC, accumulate); break;
      case 2: wgradBlock<2, 13>(zt, C, p, n, dw, K, c0, lastC, accumulate); break;
      default: wgradBlock<1, 16>(zt, C, p, n, dw, K, c0, lastC, accumulate); break;
    }
  }
}

// dP = dZ W, vectorised along the rows: V vectors of 16 rows x 8 columns k, over the channels.
template <int V>
void dgradTile(const float* dz, Index n, const float* w, Index K, int C, float* dp, Index i0, __mmask16 last, Index k0,
               int nK) {
  __m512 acc[8 * V];
#pragma GCC unroll 32
  for (int a = 0; a < 8 * V; ++a) acc[a] = _mm512_setzero_ps();
  Index cols[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) cols[j] = k0 + std::min(j, nK - 1);
  for (int c = 0; c < C; ++c) {
    const float* zc = dz + static_cast<Index>(c) * n + i0;
    __m512 zv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) zv[v] = loadInRegister(v == V - 1 ? last : __mmask16(0xFFFF), zc + 16 * v);
    const float* wc = w + static_cast<Index>(c) * K;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m512 d = _mm512_set1_ps(wc[cols[j]]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[j * V + v] = _mm512_fmadd_ps(zv[v], d, acc[j * V + v]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    if (j >= nK) break;
    float* out = dp + (k0 + j) * n + i0;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) _mm512_mask_storeu_ps(out + 16 * v, v == V - 1 ? last : __mmask16(0xFFFF), acc[j * V + v]);
  }
}

void dgrad(const float* dz, Index n, const float* w, Index K, int C, float* dp) {
  constexpr int kV = 3;
  const Index vecs = (n + 15) / 16;
  for (Index v0 = 0; v0 < vecs; v0 += kV) {  // the dZ rows of the tile stay in L1 over all k
    const int nv = static_cast<int>(std::min<Index>(kV, vecs - v0));
    const Index i0 = v0 * 16;
    const __mmask16 last = maskFor(n - (i0 + 16 * (nv - 1)));
    for (Index k0 = 0; k0 < K; k0 += 8) {
      const int nK = static_cast<int>(std::min<Index>(8, K - k0));
      switch (nv) {
        case 3: dgradTile<3>(dz, n, w, K, C, dp, i0, last, k0, nK); break;
        case 2: dgradTile<2>(dz, n, w, K, C, dp, i0, last, k0, nK); break;
        default: dgradTile<1>(dz, n, w, K, C, dp, i0, last, k0, nK); break;
      }
    }
  }
}

}  // namespace conv_kernels
#endif

namespace {

template <typename T>
constexpr bool kConvFast =
#if FEDSILO_NN_AVX512
    std::is_same<T, float>::value;
#else
    false;
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
}

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
  const Index cap = std::max<Index>(1, chunkElems_ / std::max<Index>(ohw_ * kdim_, 1));
  maxChunk_ = static_cast<int>(std::min<Index>(maxBatch, cap));
  const Index n = static_cast<Index>(maxChunk_) * ohw_;
  const std::uint64_t values = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(kdim_ + 2 * outC_);
  allocateOrFail(fmt("the conv2d ", inC_, "x", h_, "x", w_, " -> ", outC_, " workspace for ", maxChunk_, " samples"),
                 bytesOf<T>(values), [&] {
                   cols_.assign(static_cast<std::size_t>(n * kdim_), T(0));
                   z_.assign(static_cast<std::size_t>(n * outC_), T(0));
#if FEDSILO_NN_AVX512
                   if constexpr (kConvFast<T>) zt_.assign(static_cast<std::size_t>(n * outC_), T(0));
#endif
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
  const int batch = static_cast<int>(x.cols());
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  FEDSILO_ASSERT(x.rows() == inSize_ && y.rows() == outSize_);
  const int chunk = chunkSamples(batch);
  for (int b0 = 0; b0 < batch; b0 += chunk) {
    const int nb = std::min(chunk, batch - b0);
    const Index n = static_cast<Index>(nb) * ohw_;
    im2col(x.data(), b0, nb);
    // Z (n x outC) = P (n x K) * Wt (K x outC); Wt is the row-major [outC][K] weight read column-major.
#if FEDSILO_NN_AVX512
    if constexpr (kConvFast<T>)
      conv_kernels::forward(cols_.data(), n, wt_, kdim_, outC_, z_.data());
    else
#endif
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
}

template <typename T>
void Conv2DT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
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
#if FEDSILO_NN_AVX512
    if constexpr (kConvFast<T>) {
      conv_kernels::transposeDy(dy.data() + static_cast<Index>(b0) * outSize_, outSize_, ohw_, outC_, nb, zt_.data());
      conv_kernels::wgrad(zt_.data(), cols_.data(), n, dwt_, kdim_, outC_, ci != chunks - 1);
    } else
#endif
      gemmWgrad_.run(GemmOp::T, GemmOp::N, kdim_, outC_, n, T(1), cols_.data(), n, z_.data(), n,
                     ci == chunks - 1 ? T(0) : T(1), dwt_, kdim_);
    if (dx) {
      // dP (n x K) = dZ (n x outC) * W (outC x K); W is Wt (K x outC column-major) transposed.
#if FEDSILO_NN_AVX512
      if constexpr (kConvFast<T>)
        conv_kernels::dgrad(z_.data(), n, wt_, kdim_, outC_, cols_.data());
      else
#endif
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
