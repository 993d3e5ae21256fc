#include "nn/dense.hpp"

#include <algorithm>
#include <type_traits>

#include "core/error.hpp"
#include "core/memory.hpp"

// The hand-written kernels are the default (FEDSILO_GEMM=eigen) float path; FEDSILO_GEMM=openblas
// builds keep every product on the configured backend (Eigen's products call sgemm) so that the two
// backends can be compared whole (docs/performance.md).
#include "nn/simd_avx512.hpp"

namespace fedsilo {

#if FEDSILO_NN_AVX512
namespace dense_kernels {

using simd::loadInRegister;
using simd::maskFor;
using simd::transpose16;

// Notation: K = in, N = out, B = batch. W row-major N x K (w[o*K + k]); x column-major K x B
// (x[b*K + k]); y, dy column-major N x B (y[b*N + o]); dx column-major K x B.
//
// Tiles at the edges (rows or samples beyond N or B) compute with a clamped (valid, repeated)
// pointer and drop the result, so every output element goes through the same sequence of
// operations wherever it sits: results do not depend on the tile grid, nor on the batch size,
// except that a forward chunk of fewer than 4 samples (a batch of 1-3, or the last 1-3 samples of
// a batch of 32k + 1..3) takes the dot-product path, whose sums round differently.

// Samples per forward chunk: the chunk of x is transposed to xt (K x 32, samples contiguous).
constexpr int kFwdChunk = 32;

// xt[k*32 + j] = x[(c0 + j)*K + k] for j < nb, 0 for nb <= j < 32.
inline void transposeChunk(const float* x, int K, int c0, int nb, float* xt) {
  for (int k0 = 0; k0 < K; k0 += 16) {
    const int kv = std::min(16, K - k0);
    const __mmask16 km = maskFor(kv);
    for (int jb = 0; jb < kFwdChunk; jb += 16) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = jb + i < nb ? _mm512_maskz_loadu_ps(km, x + static_cast<Index>(c0 + jb + i) * K + k0) : _mm512_setzero_ps();
      transpose16(r);
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c)
        if (c < kv) _mm512_storeu_ps(xt + static_cast<Index>(k0 + c) * kFwdChunk + jb, r[c]);
    }
  }
}

// Forward, outer-product form on the transposed chunk: a tile of 12 outputs x 32 samples
// (24 accumulators), over k in order; then bias (and ReLU) and a transposed store into y.
template <bool Relu>
void forwardTile(const float* w, const float* xt, const float* bias, float* y, int K, int N, int o0, int nO, int c0,
                 int nb) {
  constexpr int kR = 12;
  __m512 acc[2 * kR];
#pragma GCC unroll 24
  for (int a = 0; a < 2 * kR; ++a) acc[a] = _mm512_setzero_ps();
  const float* wr[kR];
#pragma GCC unroll 12
  for (int r = 0; r < kR; ++r) wr[r] = w + static_cast<Index>(o0 + std::min(r, nO - 1)) * K;
  const float* xk = xt;
  for (int k = 0; k < K; ++k, xk += kFwdChunk) {
    const __m512 x0 = loadInRegister(xk), x1 = loadInRegister(xk + 16);
#pragma GCC unroll 12
    for (int r = 0; r < kR; ++r) {
      const __m512 d = _mm512_set1_ps(wr[r][k]);
      acc[2 * r] = _mm512_fmadd_ps(d, x0, acc[2 * r]);
      acc[2 * r + 1] = _mm512_fmadd_ps(d, x1, acc[2 * r + 1]);
    }
  }
  const __mmask16 om = maskFor(nO);
  const __m512 b = _mm512_maskz_loadu_ps(om, bias + o0);
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    if (16 * h >= nb) break;
    __m512 r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) r[i] = i < kR ? acc[2 * i + h] : _mm512_setzero_ps();
    transpose16(r);  // r[j]: outputs o0.. of sample 16h + j
    const int nj = std::min(16, nb - 16 * h);
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      if (j >= nj) break;
      __m512 v = _mm512_add_ps(r[j], b);
      if (Relu) v = _mm512_max_ps(_mm512_setzero_ps(), v);  // max(0, NaN) = NaN and max(0, -0) = -0, as Eigen's cwiseMax
      _mm512_mask_storeu_ps(y + static_cast<Index>(c0 + 16 * h + j) * N + o0, om, v);
    }
  }
}

// Forward of one sample (chunks of fewer than kFewSamples samples, e.g. the evaluation of a client
// with one test sample): dot products along k, 4 outputs at a time, instead of a 32-wide tile that
// would be almost all padding.
template <bool Relu>
void forwardOne(const float* w, const float* bias, const float* xj, float* yj, int K, int N) {
  for (int o0 = 0; o0 < N; o0 += 4) {
    const int nO = std::min(4, N - o0);
    const float* wr[4];
    for (int r = 0; r < 4; ++r) wr[r] = w + static_cast<Index>(o0 + std::min(r, nO - 1)) * K;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < K; k += 16) {
      const __mmask16 m = maskFor(K - k);
      const __m512 xv = _mm512_maskz_loadu_ps(m, xj + k);
      a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, wr[0] + k), xv, a0);
      a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, wr[1] + k), xv, a1);
      a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, wr[2] + k), xv, a2);
      a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, wr[3] + k), xv, a3);
    }
    const float sums[4] = {_mm512_reduce_add_ps(a0), _mm512_reduce_add_ps(a1), _mm512_reduce_add_ps(a2),
                           _mm512_reduce_add_ps(a3)};
    for (int r = 0; r < nO; ++r) {
      __m128 v = _mm_add_ss(_mm_set_ss(sums[r]), _mm_set_ss(bias[o0 + r]));
      if (Relu) v = _mm_max_ss(_mm_setzero_ps(), v);
      yj[o0 + r] = _mm_cvtss_f32(v);
    }
  }
}

constexpr int kFewSamples = 4;

template <bool Relu>
void forward(const float* w, const float* bias, const float* x, float* y, int K, int N, int B, float* xt) {
  for (int c0 = 0; c0 < B; c0 += kFwdChunk) {
    const int nb = std::min(kFwdChunk, B - c0);
    if (nb < kFewSamples) {
      for (int j = 0; j < nb; ++j)
        forwardOne<Relu>(w, bias, x + static_cast<Index>(c0 + j) * K, y + static_cast<Index>(c0 + j) * N, K, N);
      continue;
    }
    transposeChunk(x, K, c0, nb, xt);
    for (int o0 = 0; o0 < N; o0 += 12) forwardTile<Relu>(w, xt, bias, y, K, N, o0, std::min(12, N - o0), c0, nb);
  }
}

// Weight gradient dW = dz x^T (outer-product form, vectorised along k; dW written once): a tile of
// 4 output rows x V vectors of 16 inputs, accumulated over the batch in order. Accumulators are a
// flat array indexed only by constants after unrolling, so that GCC keeps them in registers.
template <int V>
void wgradTile(const float* dz, const float* x, float* dw, int K, int N, int B, int o0, int nO, int k0,
               __mmask16 last) {
  __m512 acc[4 * V];
#pragma GCC unroll 32
  for (int i = 0; i < 4 * V; ++i) acc[i] = _mm512_setzero_ps();
  const int r1 = o0 + std::min(1, nO - 1), r2 = o0 + std::min(2, nO - 1), r3 = o0 + std::min(3, nO - 1);
  for (int b = 0; b < B; ++b) {
    const float* xb = x + static_cast<Index>(b) * K + k0;
    __m512 xv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V - 1; ++v) xv[v] = loadInRegister(xb + 16 * v);
    xv[V - 1] = _mm512_maskz_loadu_ps(last, xb + 16 * (V - 1));
    const float* dzb = dz + static_cast<Index>(b) * N;
    const __m512 d0 = _mm512_set1_ps(dzb[o0]), d1 = _mm512_set1_ps(dzb[r1]);
    const __m512 d2 = _mm512_set1_ps(dzb[r2]), d3 = _mm512_set1_ps(dzb[r3]);
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      acc[v] = _mm512_fmadd_ps(d0, xv[v], acc[v]);
      acc[V + v] = _mm512_fmadd_ps(d1, xv[v], acc[V + v]);
      acc[2 * V + v] = _mm512_fmadd_ps(d2, xv[v], acc[2 * V + v]);
      acc[3 * V + v] = _mm512_fmadd_ps(d3, xv[v], acc[3 * V + v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    if (r >= nO) break;
    float* out = dw + static_cast<Index>(o0 + r) * K + k0;
#pragma GCC unroll 8
    for (int v = 0; v < V - 1; ++v) _mm512_storeu_ps(out + 16 * v, acc[r * V + v]);
    _mm512_mask_storeu_ps(out + 16 * (V - 1), last, acc[r * V + V - 1]);
  }
}

void wgrad(const float* dz, const float* x, float* dw, int K, int N, int B) {
  constexpr int kV = 4;
  const int vecs = (K + 15) / 16;
  for (int v0 = 0; v0 < vecs; v0 += kV) {
    const int nv = std::min(kV, vecs - v0);
    const int k0 = v0 * 16;
    const __mmask16 last = maskFor(K - (k0 + 16 * (nv - 1)));
    for (int o0 = 0; o0 < N; o0 += 4) {
      const int nO = std::min(4, N - o0);
      switch (nv) {
        case 4: wgradTile<4>(dz, x, dw, K, N, B, o0, nO, k0, last); break;
        case 3: wgradTile<3>(dz, x, dw, K, N, B, o0, nO, k0, last); break;
        case 2: wgradTile<2>(dz, x, dw, K, N, B, o0, nO, k0, last); break;
        default: wgradTile<1>(dz, x, dw, K, N, B, o0, nO, k0, last); break;
      }
    }
  }
}

// Input gradient dx = W^T dz (outer-product form, vectorised along k; dx written once): a tile of
// V vectors of 16 inputs x 8 samples, accumulated over the outputs in order.
template <int V>
void dgradTile(const float* w, const float* dz, float* dx, int K, int N, int k0, __mmask16 last, int b0, int nB) {
  constexpr int kB = 8;
  __m512 acc[V * kB];
#pragma GCC unroll 32
  for (int i = 0; i < V * kB; ++i) acc[i] = _mm512_setzero_ps();
  const float* dzc[kB];
#pragma GCC unroll 8
  for (int j = 0; j < kB; ++j) dzc[j] = dz + static_cast<Index>(b0 + std::min(j, nB - 1)) * N;
  for (int o = 0; o < N; ++o) {
    const float* wo = w + static_cast<Index>(o) * K + k0;
    __m512 wv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V - 1; ++v) wv[v] = loadInRegister(wo + 16 * v);
    wv[V - 1] = loadInRegister(last, wo + 16 * (V - 1));
#pragma GCC unroll 8
    for (int j = 0; j < kB; ++j) {
      const __m512 d = _mm512_set1_ps(dzc[j][o]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[j * V + v] = _mm512_fmadd_ps(wv[v], d, acc[j * V + v]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kB; ++j) {
    if (j >= nB) break;
    float* out = dx + static_cast<Index>(b0 + j) * K + k0;
#pragma GCC unroll 4
    for (int v = 0; v < V - 1; ++v) _mm512_storeu_ps(out + 16 * v, acc[j * V + v]);
    _mm512_mask_storeu_ps(out + 16 * (V - 1), last, acc[j * V + V - 1]);
  }
}

void dgrad(const float* w, const float* dz, float* dx, int K, int N, int B) {
  constexpr int kV = 3, kB = 8;
  const int vecs = (K + 15) / 16;
  for (int v0 = 0; v0 < vecs; v0 += kV) {
    const int nv = std::min(kV, vecs - v0);
    const int k0 = v0 * 16;
    const __mmask16 last = maskFor(K - (k0 + 16 * (nv - 1)));
    for (int b0 = 0; b0 < B; b0 += kB) {
      const int nB = std::min(kB, B - b0);
      switch (nv) {
        case 3: dgradTile<3>(w, dz, dx, K, N, k0, last, b0, nB); break;
        case 2: dgradTile<2>(w, dz, dx, K, N, k0, last, b0, nB); break;
        default: dgradTile<1>(w, dz, dx, K, N, k0, last, b0, nB); break;
      }
    }
  }
}

// db[o] = sum over the batch, in order.
void biasGrad(const float* dz, float* db, int N, int B) {
  std::fill(db, db + N, 0.0f);
  for (int b = 0; b < B; ++b) {
    const float* d = dz + static_cast<Index>(b) * N;
    for (int o = 0; o < N; ++o) db[o] += d[o];
  }
}

// dz = dy where y > 0, else 0 (ReluT::backward's rule).
void reluMask(const float* y, const float* dy, float* dz, Index n) {
  for (Index i = 0; i < n; ++i) dz[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

}  // namespace dense_kernels

namespace {
template <typename T>
constexpr bool kFast = std::is_same<T, float>::value;
}
#else
namespace {
template <typename T>
constexpr bool kFast = false;
}
#endif

template <typename T>
DenseT<T>::DenseT(int in, int out) : in_(in), out_(out) {
  FEDSILO_ASSERT(in > 0 && out > 0);
}

template <typename T>
std::vector<ParamSpec> DenseT<T>::paramSpecs() const {
  return {{"weight", static_cast<Index>(in_) * out_, false, in_}, {"bias", out_, true, in_}};
}

template <typename T>
void DenseT<T>::bind(T* params, T* grads) {
  w_ = params;
  b_ = params + static_cast<Index>(in_) * out_;
  dw_ = grads;
  db_ = grads + static_cast<Index>(in_) * out_;
}

template <typename T>
void DenseT<T>::reserve(int maxBatch) {
  const std::size_t need = static_cast<std::size_t>(out_) * static_cast<std::size_t>(std::max(maxBatch, 1));
  if (dz_.size() < need)
    allocateOrFail(fmt("the dense ", in_, " -> ", out_, " workspace for batches of ", maxBatch, " samples"),
                   bytesOf<T>(need), [&] { dz_.assign(need, T(0)); });
#if FEDSILO_NN_AVX512
  if constexpr (kFast<T>) scratch();
#endif
}

template <typename T>
T* DenseT<T>::scratch() {
  const std::size_t need = static_cast<std::size_t>(in_) * 32;  // dense_kernels::kFwdChunk samples
  if (xt_.size() < need) xt_.assign(need, T(0));               // reserve() did it unless skipped
  return xt_.data();
}

template <typename T>
void DenseT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
#if FEDSILO_NN_AVX512
  if constexpr (kFast<T>) {
    dense_kernels::forward<false>(w_, b_, x.data(), y.data(), in_, out_, static_cast<int>(x.cols()), scratch());
    return;
  }
#endif
  CMapRMT<T> w(w_, out_, in_);
  Eigen::Map<const VecT<T>> b(b_, out_);
  y.noalias() = w * x;
  y.colwise() += b;
}

template <typename T>
void DenseT<T>::forwardRelu(const CMapT<T>& x, MapT<T>& y) {
#if FEDSILO_NN_AVX512
  if constexpr (kFast<T>) {
    dense_kernels::forward<true>(w_, b_, x.data(), y.data(), in_, out_, static_cast<int>(x.cols()), scratch());
    return;
  }
#endif
  forward(x, y, true);
  y = y.cwiseMax(T(0));  // exactly ReluT::forward
}

template <typename T>
void DenseT<T>::backwardFrom(const CMapT<T>& x, const T* dzp, int batch, MapT<T>* dx) {
#if FEDSILO_NN_AVX512
  if constexpr (kFast<T>) {
    dense_kernels::wgrad(dzp, x.data(), dw_, in_, out_, batch);
    dense_kernels::biasGrad(dzp, db_, out_, batch);
    if (dx) dense_kernels::dgrad(w_, dzp, dx->data(), in_, out_, batch);
    return;
  }
#endif
  CMapT<T> dy(dzp, out_, batch);
  MapRMT<T> dw(dw_, out_, in_);
  Eigen::Map<VecT<T>> db(db_, out_);
  dw.noalias() = dy * x.transpose();
  db.noalias() = dy.rowwise().sum();
  if (dx) {
    CMapRMT<T> w(w_, out_, in_);
    dx->noalias() = w.transpose() * dy;
  }
}

template <typename T>
void DenseT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  backwardFrom(x, dy.data(), static_cast<int>(dy.cols()), dx);
}

template <typename T>
void DenseT<T>::backwardRelu(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) {
  const int batch = static_cast<int>(dy.cols());
  const Index n = static_cast<Index>(out_) * batch;
  if (static_cast<Index>(dz_.size()) < n) reserve(batch);  // only when reserve() was skipped
#if FEDSILO_NN_AVX512
  if constexpr (kFast<T>) {
    dense_kernels::reluMask(y.data(), dy.data(), dz_.data(), n);
    backwardFrom(x, dz_.data(), batch, dx);
    return;
  }
#endif
  MapT<T> dz(dz_.data(), out_, batch);
  dz = (y.array() > T(0)).select(dy, T(0));  // exactly ReluT::backward
  backwardFrom(x, dz_.data(), batch, dx);
}

template <typename T>
void ReluT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  y = x.cwiseMax(T(0));
}

template <typename T>
void ReluT<T>::backward(const CMapT<T>&, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) {
  if (dx) *dx = (y.array() > T(0)).select(dy, T(0));
}

template class DenseT<float>;
template class DenseT<double>;
template class ReluT<float>;
template class ReluT<double>;

}  // namespace fedsilo
