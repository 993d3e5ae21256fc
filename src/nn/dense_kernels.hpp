// DenseT's float kernels, written once over SIMD traits S (simd_avx512.hpp, simd_avx2.hpp,
// simd_scalar.hpp) and instantiated by each kernels_<set>.cpp, each compiled for its instruction set.
// Everything is in an anonymous namespace: every translation unit gets its own copy, so no inline
// function compiled for one instruction set can be picked by the linker for another.
//
// Notation: K = in, N = out, B = batch. W row-major N x K (w[o*K + k]); x column-major K x B
// (x[b*K + k]); y, dy column-major N x B (y[b*N + o]); dx column-major K x B.
//
// Every output element is one chain of multiply-adds with one rounding each, in a fixed order:
// forward over k, the weight gradient over the batch, the input gradient over the outputs. The
// forward's last tile of outputs has exactly the rows left; other tiles at the edges (rows or samples
// beyond N or B) compute with a clamped (valid, repeated) pointer and drop the result. Either way an
// element's chain does not depend on where it sits in the tile grid, on the batch size or on the
// set's vector width: every set gives the same bits. The one exception is a forward
// chunk of fewer than 4 samples (a batch of 1-3, or the last 1-3 samples of a batch of 32k + 1..3):
// it takes a dot-product path along k (16 partial sums, then a fixed tree), which rounds
// differently, but again identically in every set.
#pragma once
#include <type_traits>

#include "nn/kernel_table.hpp"
#include "nn/prefetch.hpp"

namespace fedsilo::kernels {
namespace {

inline int imin(int a, int b) { return a < b ? a : b; }
inline int imax(int a, int b) { return a > b ? a : b; }
inline Index iminl(Index a, Index b) { return a < b ? a : b; }

// Calls f(std::integral_constant<int, v>) for the runtime v in [1, Max]: kernels templated on the
// number of vectors of a tile, chosen at the edge of a loop.
template <int Max, class F>
void withCount(int v, F&& f) {
  if constexpr (Max > 1) {
    if (v >= Max) return f(std::integral_constant<int, Max>{});
    withCount<Max - 1>(v, static_cast<F&&>(f));
  } else {
    f(std::integral_constant<int, 1>{});
  }
}

// The sum of 16 partial sums in the order of GCC's _mm512_reduce_add_ps (halves, quarters, pairs).
inline float reduce16(const float* s) {
  float t8[8], t4[4];
  for (int i = 0; i < 8; ++i) t8[i] = s[i + 8] + s[i];
  for (int i = 0; i < 4; ++i) t4[i] = t8[i + 4] + t8[i];
  const float a = t4[0] + t4[2], b = t4[1] + t4[3];
  return a + b;
}

constexpr int kFwdChunk = 32;   // samples per forward chunk (transposed into xt: K x 32)
constexpr int kFewSamples = 4;  // chunks with fewer samples take the dot-product path

template <class S>
struct DenseImpl {
  using V = typename S::V;
  using M = typename S::M;
  static constexpr int L = S::kLanes;

  // xt[k*32 + j] = x[(c0 + j)*K + k] for j < nb, 0 for nb <= j < 32 (L x L in-register transposes).
  static void transposeChunk(const float* x, int K, int c0, int nb, float* xt) {
    for (int k0 = 0; k0 < K; k0 += L) {
      const int kv = imin(L, K - k0);
      const M km = S::mask(kv);
      for (int jb = 0; jb < kFwdChunk; jb += L) {
        V r[L];
#pragma GCC unroll 16
        for (int i = 0; i < L; ++i)
          r[i] = jb + i < nb ? S::load(km, x + static_cast<Index>(c0 + jb + i) * K + k0) : S::zero();
        S::transpose(r);
#pragma GCC unroll 16
        for (int c = 0; c < L; ++c)
          if (c < kv) S::store(xt + static_cast<Index>(k0 + c) * kFwdChunk + jb, r[c]);
      }
    }
  }

  // A tile of kR outputs x 2 vectors of samples (columns j0.. of the chunk at c0, nj of them valid),
  // over k in order; then bias (and ReLU) on a transposed store into y. kR is the full height
  // (S::kDenseRows) but in a layer's last tile, which has exactly the rows left.
  template <bool Relu, int kR>
  static void forwardTile(const float* w, const float* xt, const float* bias, float* y, int K, int N, int o0, int c0,
                          int j0, int nj) {
    static_assert(kR <= L, "the transposed store holds at most L rows");
    V acc[2 * kR];
#pragma GCC unroll 24
    for (int a = 0; a < 2 * kR; ++a) acc[a] = S::zero();
    const float* wr[kR];
#pragma GCC unroll 12
    for (int r = 0; r < kR; ++r) wr[r] = w + static_cast<Index>(o0 + r) * K;
    const float* xk = xt + j0;
    for (int k = 0; k < K; ++k, xk += kFwdChunk) {
      const V x0 = S::pin(S::load(xk)), x1 = S::pin(S::load(xk + L));
#pragma GCC unroll 12
      for (int r = 0; r < kR; ++r) {
        const V d = S::bcast(wr[r] + k);
        acc[2 * r] = S::fma(d, x0, acc[2 * r]);
        acc[2 * r + 1] = S::fma(d, x1, acc[2 * r + 1]);
      }
    }
    const M om = S::mask(kR);
    const V b = S::load(om, bias + o0);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      if (L * h >= nj) break;
      V r[L];
#pragma GCC unroll 16
      for (int i = 0; i < L; ++i) r[i] = i < kR ? acc[2 * i + h] : S::zero();
      S::transpose(r);  // r[j]: outputs o0.. of sample j0 + L*h + j
      const int nv = imin(L, nj - L * h);
#pragma GCC unroll 16
      for (int j = 0; j < L; ++j) {
        if (j >= nv) break;
        V v = S::add(r[j], b);
        if (Relu) v = S::max0(v);
        S::store(y + static_cast<Index>(c0 + j0 + L * h + j) * N + o0, om, v);
      }
    }
  }

  // Forward of one sample (chunks of fewer than kFewSamples samples): dot products along k, 4 outputs
  // at a time, 16 partial sums each (lane l sums k = l mod 16), reduced by reduce16.
  template <bool Relu>
  static void forwardOne(const float* w, const float* bias, const float* xj, float* yj, int K, int N) {
    constexpr int kV = 16 / L;
    for (int o0 = 0; o0 < N; o0 += 4) {
      const int nO = imin(4, N - o0);
      const float* wr[4];
      for (int r = 0; r < 4; ++r) wr[r] = w + static_cast<Index>(o0 + imin(r, nO - 1)) * K;
      V a[4][kV];
      for (int r = 0; r < 4; ++r)
        for (int v = 0; v < kV; ++v) a[r][v] = S::zero();
      for (int k = 0; k < K; k += 16) {
#pragma GCC unroll 16
        for (int v = 0; v < kV; ++v) {
          const M m = S::mask(K - k - L * v);
          const V xv = S::load(m, xj + k + L * v);
#pragma GCC unroll 4
          for (int r = 0; r < 4; ++r) a[r][v] = S::fma(S::load(m, wr[r] + k + L * v), xv, a[r][v]);
        }
      }
      for (int r = 0; r < nO; ++r) {
        float s[16];
        for (int v = 0; v < kV; ++v) S::lanes(s + L * v, a[r][v]);
        float out = reduce16(s) + bias[o0 + r];
        if (Relu) out = 0.0f > out ? 0.0f : out;  // as maxss(0, v): NaN and -0 pass through
        yj[o0 + r] = out;
      }
    }
  }

  template <bool Relu>
  static void forwardImpl(const float* w, const float* bias, const float* x, float* y, int K, int N, int B, float* xt) {
    constexpr int kR = S::kDenseRows;
    for (int c0 = 0; c0 < B; c0 += kFwdChunk) {
      const int nb = imin(kFwdChunk, B - c0);
      if (nb < kFewSamples) {
        for (int j = 0; j < nb; ++j)
          forwardOne<Relu>(w, bias, x + static_cast<Index>(c0 + j) * K, y + static_cast<Index>(c0 + j) * N, K, N);
        continue;
      }
      transposeChunk(x, K, c0, nb, xt);
      for (int o0 = 0; o0 < N; o0 += kR)  // the tile's W rows stay in L1 over the chunk's sample tiles
        withCount<kR>(imin(kR, N - o0), [&](auto rows) {
          for (int j0 = 0; j0 < nb; j0 += 2 * L)
            forwardTile<Relu, decltype(rows)::value>(w, xt, bias, y, K, N, o0, c0, j0, imin(2 * L, nb - j0));
        });
    }
  }

  static void forward(const float* w, const float* bias, const float* x, float* y, int K, int N, int B, bool relu,
                      float* xt) {
    if (relu)
      forwardImpl<true>(w, bias, x, y, K, N, B, xt);
    else
      forwardImpl<false>(w, bias, x, y, K, N, B, xt);
  }

  // Weight gradient, outer-product form vectorised along k: a tile of kR output rows x V vectors of
  // inputs, accumulated over the batch in order. Accumulators are a flat array indexed only by
  // constants after unrolling, so that GCC keeps them in registers. Sgd: instead of storing dW,
  // update W in place (w - lr * dW with one rounding). next: the first of the kR rows of the tile
  // kWgradAhead tiles on (null: none), requested one row per sample while this tile accumulates.
  template <int V_, bool Sgd>
  static void wgradTile(const float* dz, const float* x, float* out0, int K, int N, int B, int o0, int nO, int k0,
                        M last, float lr, const float* next) {
    constexpr int kR = S::kWgradRows;
    V acc[kR * V_];
#pragma GCC unroll 32
    for (int i = 0; i < kR * V_; ++i) acc[i] = S::zero();
    int row[kR];
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r) row[r] = o0 + imin(r, nO - 1);
    for (int b = 0; b < B; ++b) {
      if (next && b < kR) prefetchSpan<true>(next + static_cast<Index>(b) * K, V_ * L);
      const float* xb = x + static_cast<Index>(b) * K + k0;
      V xv[V_];
#pragma GCC unroll 8
      for (int v = 0; v < V_ - 1; ++v) xv[v] = S::pin(S::load(xb + L * v));
      xv[V_ - 1] = S::pin(S::load(last, xb + L * (V_ - 1)));
      const float* dzb = dz + static_cast<Index>(b) * N;
#pragma GCC unroll 8
      for (int r = 0; r < kR; ++r) {
        const V d = S::bcast(dzb + row[r]);
#pragma GCC unroll 8
        for (int v = 0; v < V_; ++v) acc[r * V_ + v] = S::fma(d, xv[v], acc[r * V_ + v]);
      }
    }
    const V lrv = S::set1(lr);
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r) {
      if (r >= nO) break;
      float* out = out0 + static_cast<Index>(o0 + r) * K + k0;
#pragma GCC unroll 8
      for (int v = 0; v < V_; ++v) {
        const M m = v == V_ - 1 ? last : S::full();
        V g = acc[r * V_ + v];
        if (Sgd) g = S::fnma(lrv, g, S::load(m, out + L * v));
        S::store(out + L * v, m, g);
      }
    }
  }

  // Tiles run down the rows of one strip of inputs, then the next strip; the tile kWgradAhead on
  // (further down the strip, or at the top of the next one) is requested while one runs.
  static constexpr int kWgradAhead = 4;
  // The first row of the tile kWgradAhead after the one at (o0, strip of nv vectors at k0), or null
  // past the last.
  static const float* wgradAhead(const float* out, int K, int N, int o0, int k0, int nv) {
    constexpr int kR = S::kWgradRows;
    const int ahead = o0 + kWgradAhead * kR;
    if (ahead + kR <= N) return out + static_cast<Index>(ahead) * K + k0;
    const int wrapped = ahead - N;  // a row of the next strip
    if (wrapped < 0 || wrapped + kR > N || k0 + nv * L >= K) return nullptr;
    return out + static_cast<Index>(wrapped) * K + k0 + nv * L;
  }

  template <bool Sgd>
  static void wgradImpl(const float* dz, const float* x, float* out, int K, int N, int B, float lr) {
    constexpr int kV = S::kWgradVecs, kR = S::kWgradRows, kMax = S::kWgradVecsMax;
    const int vecs = (K + L - 1) / L;
    for (int v0 = 0, nv = 0; v0 < vecs; v0 += nv) {
      // A remainder that fits the widest tile joins the last strip: a narrow strip keeps few
      // accumulators and loads almost once per FMA.
      nv = vecs - v0 <= kMax ? vecs - v0 : kV;
      const int k0 = v0 * L;
      const M last = S::mask(K - (k0 + L * (nv - 1)));
      for (int o0 = 0; o0 < N; o0 += kR) {
        const float* next = wgradAhead(out, K, N, o0, k0, nv);
        withCount<kMax>(nv, [&](auto v) {
          wgradTile<decltype(v)::value, Sgd>(dz, x, out, K, N, B, o0, imin(kR, N - o0), k0, last, lr, next);
        });
      }
    }
  }

  static void wgrad(const float* dz, const float* x, float* dw, int K, int N, int B) {
    wgradImpl<false>(dz, x, dw, K, N, B, 0.0f);
  }
  static void wgradSgd(const float* dz, const float* x, float* w, int K, int N, int B, float lr) {
    wgradImpl<true>(dz, x, w, K, N, B, lr);
  }

  // Input gradient dx = W^T dz, vectorised along k: a tile of V vectors of inputs x kB samples,
  // accumulated over the outputs in order; dx written once. next (null: none): the same columns of W's
  // next strip, requested row by row (the first tile of a strip reads its W columns from memory, the
  // others from cache).
  template <int V_>
  static void dgradTile(const float* w, const float* dz, float* dx, int K, int N, int k0, M last, int b0, int nB,
                        const float* next) {
    constexpr int kB = S::kDgradSamples;
    V acc[V_ * kB];
#pragma GCC unroll 32
    for (int i = 0; i < V_ * kB; ++i) acc[i] = S::zero();
    const float* dzc[kB];
#pragma GCC unroll 8
    for (int j = 0; j < kB; ++j) dzc[j] = dz + static_cast<Index>(b0 + imin(j, nB - 1)) * N;
    for (int o = 0; o < N; ++o) {
      const float* wo = w + static_cast<Index>(o) * K + k0;
      if (next) prefetchSpan<false>(next + static_cast<Index>(o) * K, V_ * L);
      V wv[V_];
#pragma GCC unroll 4
      for (int v = 0; v < V_ - 1; ++v) wv[v] = S::pin(S::load(wo + L * v));
      wv[V_ - 1] = S::pin(S::load(last, wo + L * (V_ - 1)));
#pragma GCC unroll 8
      for (int j = 0; j < kB; ++j) {
        const V d = S::bcast(dzc[j] + o);
#pragma GCC unroll 4
        for (int v = 0; v < V_; ++v) acc[j * V_ + v] = S::fma(wv[v], d, acc[j * V_ + v]);
      }
    }
#pragma GCC unroll 8
    for (int j = 0; j < kB; ++j) {
      if (j >= nB) break;
      float* out = dx + static_cast<Index>(b0 + j) * K + k0;
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) S::store(out + L * v, v == V_ - 1 ? last : S::full(), acc[j * V_ + v]);
    }
  }

  static void dgrad(const float* w, const float* dz, float* dx, int K, int N, int B) {
    constexpr int kV = S::kDgradVecs, kB = S::kDgradSamples;
    const int vecs = (K + L - 1) / L;
    for (int v0 = 0; v0 < vecs; v0 += kV) {
      const int nv = imin(kV, vecs - v0);
      const int k0 = v0 * L;
      const M last = S::mask(K - (k0 + L * (nv - 1)));
      const float* next = v0 + kV < vecs ? w + k0 + kV * L : nullptr;
      for (int b0 = 0; b0 < B; b0 += kB)
        withCount<kV>(nv, [&](auto v) {
          dgradTile<decltype(v)::value>(w, dz, dx, K, N, k0, last, b0, imin(kB, B - b0), b0 == 0 ? next : nullptr);
        });
    }
  }

  static void reluMask(const float* y, const float* dy, float* dz, Index n) {
    Index i = 0;
    for (; i + L <= n; i += L) S::store(dz + i, S::selectPositive(S::load(y + i), S::load(dy + i)));
    if (i < n) {
      const M m = S::mask(n - i);
      S::store(dz + i, m, S::selectPositive(S::load(m, y + i), S::load(m, dy + i)));
    }
  }

  static void sgd(float* p, const float* g, Index n, float lr) {
    const V l = S::set1(lr);
    Index i = 0;
    for (; i + L <= n; i += L) S::store(p + i, S::fnma(l, S::load(g + i), S::load(p + i)));
    if (i < n) {
      const M m = S::mask(n - i);
      S::store(p + i, m, S::fnma(l, S::load(m, g + i), S::load(m, p + i)));
    }
  }
};

}  // namespace
}  // namespace fedsilo::kernels
