// The bf16 dense kernels (nn/bf16_kernels.hpp: Bf16DenseKernels): DenseT's three products with bf16
// operands and fp32 accumulation on VDPBF16PS, compiled with AVX512-BF16 in this translation unit only
// (cmake/kernels.cmake). The tiles are those of the avx512 set's fp32 kernels (nn/dense_kernels.hpp),
// one VDPBF16PS over a pair of the reduction in place of each fused multiply-add:
//   forward       pairs along k:           (W[o][2q], W[o][2q+1]) . (x[b][2q], x[b][2q+1])
//   weight grad   pairs along the batch:   (dz[2p][o], dz[2p+1][o]) . (x[2p][k], x[2p+1][k])
//   input grad    pairs along the outputs: (W[2p][k], W[2p+1][k]) . (dz[b][2p], dz[b][2p+1])
// The weights are packed into pairs a block at a time (the forward tile's 12 rows, the input gradient's
// strip of 48 inputs) right before the block is used, so the fp32 master weights are read once per call
// as in the fp32 kernels, the packed block stays in cache, and nothing is kept between calls (the layer
// needs no notice when its weights change). Every output element is one chain of VDPBF16PS in a fixed
// order (over q, the batch pairs or the output pairs) whatever its place in the tile grid, so a sample's
// forward result does not depend on the batch it is in, nor on the rank. Everything but the table has
// internal linkage.
#include <immintrin.h>

#include <type_traits>

#include "nn/bf16_kernels.hpp"
#include "nn/conv_geometry.hpp"  // roundUp16
#include "nn/prefetch.hpp"
#include "nn/simd_bf16.hpp"
#include "nn/simd_avx512.hpp"

namespace fedsilo::kernels {
namespace {

using bf16simd::bcast;
using bf16simd::dot;
using bf16simd::load;
using bf16simd::pin;

using S = simd::Avx512;
using V = __m512;
using M = __mmask16;

constexpr int kFwdRows = 12;   // forward tile: outputs x up to 2 vectors of 16 samples
constexpr int kFwdChunk = 32;  // samples per forward chunk
constexpr int kWgradRows = 4;  // weight gradient tile: outputs x kWgradVecs vectors of 16 inputs
constexpr int kWgradVecs = 4;
constexpr int kDgradVecs = 3;  // input gradient tile: vectors of 16 inputs x kDgradSamples samples
constexpr int kDgradSamples = 8;
constexpr int kStrip = 16 * kDgradVecs;  // inputs per packed strip of weight pairs (input gradient)

inline int imin(int a, int b) { return a < b ? a : b; }
inline int pairsOf(int n) { return (n + 1) / 2; }

// 16 words (g[2i], g[2i+1]) from the n floats at g (n may be <= 0 or beyond 32): 0 past the n-th.
inline __m512i packAdjacent(const float* g, int n) {
  const V lo = _mm512_maskz_loadu_ps(S::mask(n), g), hi = _mm512_maskz_loadu_ps(S::mask(n - 16), g + 16);
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));  // bf16 i of the 32 from lo, 16 + i from hi
}

// 16 words (lo[i], hi[i]).
inline __m512i interleave(V lo, V hi) {
  alignas(64) static const std::uint16_t kOrder[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                       8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i both = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
  return _mm512_permutexvar_epi16(_mm512_load_si512(kOrder), both);
}

// Calls f(std::integral_constant<int, v>) for the runtime v in [1, Max].
template <int Max, class F>
void withVecs(int v, F&& f) {
  if constexpr (Max > 1) {
    if (v >= Max) return f(std::integral_constant<int, Max>{});
    withVecs<Max - 1>(v, static_cast<F&&>(f));
  } else {
    f(std::integral_constant<int, 1>{});
  }
}

// ---- forward ----

// xt[q*32 + j] = (x[c0+j][2q], x[c0+j][2q+1]) for j < nb, 0 for nb <= j < 16 * vecs.
void transposePairs(const float* x, int K, int c0, int nb, int vecs, std::uint32_t* xt) {
  const int kp = pairsOf(K);
  for (int q0 = 0; q0 < kp; q0 += 16) {
    const int qv = imin(16, kp - q0);
    for (int jb = 0; jb < 16 * vecs; jb += 16) {
      V r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = jb + i < nb ? _mm512_castsi512_ps(packAdjacent(x + Index(c0 + jb + i) * K + 2 * q0, K - 2 * q0))
                           : S::zero();
      S::transpose(r);
#pragma GCC unroll 16
      for (int c = 0; c < 16; ++c)
        if (c < qv) _mm512_storeu_si512(xt + Index(q0 + c) * kFwdChunk + jb, _mm512_castps_si512(r[c]));
    }
  }
}

// rows[r*kp + q] = (W[o0+r][2q], W[o0+r][2q+1]) for r < nO.
void packRows(const float* w, int K, int o0, int nO, std::uint32_t* rows) {
  const int kp = pairsOf(K);
  for (int r = 0; r < nO; ++r) {
    const float* src = w + Index(o0 + r) * K;
    std::uint32_t* dst = rows + Index(r) * kp;
    for (int q = 0; q < kp; q += 16)
      _mm512_mask_storeu_epi32(dst + q, S::mask(kp - q), packAdjacent(src + 2 * q, K - 2 * q));
  }
}

// The fp32 rows of W that forwardTile requests: `rows` of them from w, K floats apart.
struct NextRows {
  const float* w;
  int rows, K;
};

// A tile of kFwdRows outputs (nO valid) x H vectors of samples (nj valid), over q in order; then bias
// (and ReLU) on a transposed store into y. next (w null: none): the fp32 rows of the next tile (next.rows of
// them, K floats apart), requested at the pace the tile walks its own (a line of each every 8 pairs), so
// that packRows finds them in cache: W2's fc1 reads 6.4 MB of them per call, from memory.
template <int H, bool Relu>
void forwardTile(const std::uint32_t* rows, int kp, const std::uint32_t* xt, const float* bias, float* y, int N, int o0,
                 int nO, int c0, int nj, NextRows next) {
  V acc[kFwdRows * H];
#pragma GCC unroll 24
  for (int a = 0; a < kFwdRows * H; ++a) acc[a] = S::zero();
  const std::uint32_t* wr[kFwdRows];
#pragma GCC unroll 12
  for (int r = 0; r < kFwdRows; ++r) wr[r] = rows + Index(imin(r, nO - 1)) * kp;
  const std::uint32_t* xq = xt;
  for (int q = 0; q < kp; ++q, xq += kFwdChunk) {
    if (next.w && (q & 7) == 0)
      for (int r = 0; r < next.rows; ++r) prefetchSpan<false>(next.w + Index(r) * next.K + 2 * q, 1);
    __m512i xv[H];
#pragma GCC unroll 2
    for (int h = 0; h < H; ++h) xv[h] = pin(load(xq + 16 * h));
#pragma GCC unroll 12
    for (int r = 0; r < kFwdRows; ++r) {
      const __m512i d = bcast(wr[r] + q);
#pragma GCC unroll 2
      for (int h = 0; h < H; ++h) acc[r * H + h] = dot(acc[r * H + h], d, xv[h]);
    }
  }
  const M om = S::mask(nO);
  const V b = S::load(om, bias + o0);
#pragma GCC unroll 2
  for (int h = 0; h < H; ++h) {
    if (16 * h >= nj) break;
    V t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) t[i] = i < kFwdRows ? acc[i * H + h] : S::zero();
    S::transpose(t);  // t[j]: outputs o0.. of sample c0 + 16 h + j
    const int nv = imin(16, nj - 16 * h);
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      if (j >= nv) break;
      V v = S::add(t[j], b);
      if (Relu) v = S::max0(v);
      S::store(y + Index(c0 + 16 * h + j) * N + o0, om, v);
    }
  }
}

template <int H>
void forwardTileAct(bool relu, const std::uint32_t* rows, int kp, const std::uint32_t* xt, const float* bias, float* y,
                    int N, int o0, int nO, int c0, int nj, NextRows next) {
  if (relu)
    forwardTile<H, true>(rows, kp, xt, bias, y, N, o0, nO, c0, nj, next);
  else
    forwardTile<H, false>(rows, kp, xt, bias, y, N, o0, nO, c0, nj, next);
}

// scratch: xt (kp x 32 words), then the packed rows of one tile (kFwdRows x kp).
void forward(const float* w, const float* bias, const float* x, float* y, int K, int N, int B, bool relu,
             std::uint32_t* scratch) {
  const int kp = pairsOf(K);
  std::uint32_t* xt = scratch;
  std::uint32_t* rows = scratch + Index(kp) * kFwdChunk;
  for (int c0 = 0; c0 < B; c0 += kFwdChunk) {
    const int nb = imin(kFwdChunk, B - c0);
    const int vecs = nb > 16 ? 2 : 1;  // a chunk of at most 16 samples runs half tiles
    transposePairs(x, K, c0, nb, vecs, xt);
    for (int o0 = 0; o0 < N; o0 += kFwdRows) {
      const int nO = imin(kFwdRows, N - o0);
      packRows(w, K, o0, nO, rows);
      const int o1 = o0 + kFwdRows;
      const NextRows next{o1 < N ? w + Index(o1) * K : nullptr, imin(kFwdRows, N - o1), K};
      if (vecs == 2)
        forwardTileAct<2>(relu, rows, kp, xt, bias, y, N, o0, nO, c0, nb, next);
      else
        forwardTileAct<1>(relu, rows, kp, xt, bias, y, N, o0, nO, c0, nb, next);
    }
  }
}

// ---- weight gradient ----

// d[p*ld + i] = (a[2p][i], a[2p+1][i]) for i < n (0 for n <= i < ld), a[B] (an odd batch's partner) = 0:
// a is column-major with columns of n values.
void pairSamples(const float* a, int n, int B, std::uint32_t* d, int ld) {
  for (int p = 0; p < pairsOf(B); ++p) {
    const float* g0 = a + Index(2 * p) * n;
    const float* g1 = 2 * p + 1 < B ? g0 + n : nullptr;
    for (int i = 0; i < ld; i += 16) {
      const M m = S::mask(n - i);
      const V lo = S::load(m, g0 + i), hi = g1 ? S::load(m, g1 + i) : S::zero();
      _mm512_mask_storeu_epi32(d + Index(p) * ld + i, S::mask(ld - i), interleave(lo, hi));
    }
  }
}

// A tile of kWgradRows outputs (nO valid) x V_ vectors of inputs from k0 (the last masked by `last`),
// over the P batch pairs in order. Sgd: out (the weights) updated to out - lr dW, else dW stored.
// next (null: none): the first row of a later tile of out, requested one row per batch pair.
template <int V_, bool Sgd>
void wgradTile(const std::uint32_t* dzp, const std::uint32_t* xp, int ldx, float* out, int K, int N, int P, int o0,
               int nO, int k0, M last, float lr, const float* next) {
  V acc[kWgradRows * V_];
#pragma GCC unroll 16
  for (int i = 0; i < kWgradRows * V_; ++i) acc[i] = S::zero();
  int row[kWgradRows];
#pragma GCC unroll 4
  for (int r = 0; r < kWgradRows; ++r) row[r] = o0 + imin(r, nO - 1);
  for (int p = 0; p < P; ++p) {
    if (next && p < kWgradRows) prefetchSpan<true>(next + Index(p) * K, 16 * V_);
    const std::uint32_t* xb = xp + Index(p) * ldx + k0;
    __m512i xv[V_];
#pragma GCC unroll 4
    for (int v = 0; v < V_; ++v) xv[v] = pin(load(xb + 16 * v));
    const std::uint32_t* dzb = dzp + Index(p) * N;
#pragma GCC unroll 4
    for (int r = 0; r < kWgradRows; ++r) {
      const __m512i d = bcast(dzb + row[r]);
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) acc[r * V_ + v] = dot(acc[r * V_ + v], d, xv[v]);
    }
  }
  const V lrv = S::set1(lr);
#pragma GCC unroll 4
  for (int r = 0; r < kWgradRows; ++r) {
    if (r >= nO) break;
    float* o = out + Index(o0 + r) * K + k0;
#pragma GCC unroll 4
    for (int v = 0; v < V_; ++v) {
      const M m = v == V_ - 1 ? last : S::full();
      V g = acc[r * V_ + v];
      if (Sgd) g = S::fnma(lrv, g, S::load(m, o + 16 * v));
      S::store(o + 16 * v, m, g);
    }
  }
}

// The first row of the tile kWgradAhead after the one at (o0, strip at k0), down the strip then at the
// top of the next one, or null past the last: the tiles walk W down its rows, 12 KB apart for W2's
// fc1, where the hardware prefetchers do not keep up.
constexpr int kWgradAhead = 4;
const float* wgradAhead(const float* out, int K, int N, int o0, int k0) {
  constexpr int kStripK = 16 * kWgradVecs;
  const int ahead = o0 + kWgradAhead * kWgradRows;
  if (ahead + kWgradRows <= N) return out + Index(ahead) * K + k0;
  const int wrapped = ahead - N;
  if (wrapped < 0 || wrapped + kWgradRows > N || k0 + kStripK >= K) return nullptr;
  return out + Index(wrapped) * K + k0 + kStripK;
}

// scratch: the input pairs (P x roundUp16(K) words, zero beyond K), then the gradient pairs (P x N).
void wgrad(const float* dz, const float* x, float* out, int K, int N, int B, bool sgd, float lr,
           std::uint32_t* scratch) {
  const int P = pairsOf(B), ldx = roundUp16(K);
  std::uint32_t* xp = scratch;
  std::uint32_t* dzp = scratch + Index(P) * ldx;
  pairSamples(x, K, B, xp, ldx);
  pairSamples(dz, N, B, dzp, N);
  const int vecs = (K + 15) / 16;
  for (int v0 = 0; v0 < vecs; v0 += kWgradVecs) {
    const int nv = imin(kWgradVecs, vecs - v0), k0 = 16 * v0;
    const M last = S::mask(K - (k0 + 16 * (nv - 1)));
    for (int o0 = 0; o0 < N; o0 += kWgradRows) {
      const float* next = wgradAhead(out, K, N, o0, k0);
      withVecs<kWgradVecs>(nv, [&](auto v) {
        constexpr int kV = decltype(v)::value;
        if (sgd)
          wgradTile<kV, true>(dzp, xp, ldx, out, K, N, P, o0, imin(kWgradRows, N - o0), k0, last, lr, next);
        else
          wgradTile<kV, false>(dzp, xp, ldx, out, K, N, P, o0, imin(kWgradRows, N - o0), k0, last, lr, next);
      });
    }
  }
}

// ---- input gradient ----

// strip[p*kStrip + j] = (W[2p][k0+j], W[2p+1][k0+j]) for j < width (0 up to kStrip), W[N] = 0.
void packStrip(const float* w, int K, int N, int k0, int width, std::uint32_t* strip) {
  for (int p = 0; p < pairsOf(N); ++p) {
    const float* w0 = w + Index(2 * p) * K + k0;
    const float* w1 = 2 * p + 1 < N ? w0 + K : nullptr;
#pragma GCC unroll 3
    for (int j = 0; j < kStrip; j += 16) {
      const M m = S::mask(width - j);
      const V lo = S::load(m, w0 + j), hi = w1 ? S::load(m, w1 + j) : S::zero();
      _mm512_storeu_si512(strip + Index(p) * kStrip + j, interleave(lo, hi));
    }
  }
}

// A tile of V_ vectors of inputs from k0 (the last masked by `last`) x kDgradSamples samples from b0
// (nB valid), over the np output pairs in order; dx written once. next (null: none): the next strip's
// columns of W's first row, requested two rows (one pair) at a time: the rows are K floats apart, where
// the hardware prefetchers do not keep up with packStrip.
template <int V_>
void dgradTile(const std::uint32_t* strip, const std::uint32_t* dza, int np, float* dx, int K, int N, int k0, M last,
               int b0, int nB, const float* next) {
  V acc[V_ * kDgradSamples];
#pragma GCC unroll 24
  for (int i = 0; i < V_ * kDgradSamples; ++i) acc[i] = S::zero();
  const std::uint32_t* dzc[kDgradSamples];
#pragma GCC unroll 8
  for (int j = 0; j < kDgradSamples; ++j) dzc[j] = dza + Index(b0 + imin(j, nB - 1)) * np;
  for (int p = 0; p < np; ++p) {
    if (next) {
      prefetchSpan<false>(next + Index(2 * p) * K, kStrip);
      if (2 * p + 1 < N) prefetchSpan<false>(next + Index(2 * p + 1) * K, kStrip);
    }
    const std::uint32_t* wp = strip + Index(p) * kStrip;
    __m512i wv[V_];
#pragma GCC unroll 3
    for (int v = 0; v < V_; ++v) wv[v] = pin(load(wp + 16 * v));
#pragma GCC unroll 8
    for (int j = 0; j < kDgradSamples; ++j) {
      const __m512i d = bcast(dzc[j] + p);
#pragma GCC unroll 3
      for (int v = 0; v < V_; ++v) acc[j * V_ + v] = dot(acc[j * V_ + v], wv[v], d);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kDgradSamples; ++j) {
    if (j >= nB) break;
    float* o = dx + Index(b0 + j) * K + k0;
#pragma GCC unroll 3
    for (int v = 0; v < V_; ++v) S::store(o + 16 * v, v == V_ - 1 ? last : S::full(), acc[j * V_ + v]);
  }
}

// scratch: the gradient pairs along the outputs (B x np words), then one strip of weight pairs (np x kStrip).
void dgrad(const float* w, const float* dz, float* dx, int K, int N, int B, std::uint32_t* scratch) {
  const int np = pairsOf(N);
  std::uint32_t* dza = scratch;
  std::uint32_t* strip = scratch + Index(B) * np;
  for (int b = 0; b < B; ++b)
    for (int p = 0; p < np; p += 16)
      _mm512_mask_storeu_epi32(dza + Index(b) * np + p, S::mask(np - p),
                               packAdjacent(dz + Index(b) * N + 2 * p, N - 2 * p));
  const int vecs = (K + 15) / 16;
  for (int v0 = 0; v0 < vecs; v0 += kDgradVecs) {
    const int nv = imin(kDgradVecs, vecs - v0), k0 = 16 * v0;
    const M last = S::mask(K - (k0 + 16 * (nv - 1)));
    packStrip(w, K, N, k0, imin(kStrip, K - k0), strip);
    const float* next = k0 + kStrip < K ? w + k0 + kStrip : nullptr;
    for (int b0 = 0; b0 < B; b0 += kDgradSamples)
      withVecs<kDgradVecs>(nv, [&](auto v) {
        dgradTile<decltype(v)::value>(strip, dza, np, dx, K, N, k0, last, b0, imin(kDgradSamples, B - b0),
                                      b0 == 0 ? next : nullptr);
      });
  }
}

Index scratchWords(int K, int N, int B) {
  const Index kp = pairsOf(K), np = pairsOf(N), P = pairsOf(B);
  const Index forwardWords = kp * (kFwdChunk + kFwdRows);
  const Index wgradWords = P * (roundUp16(K) + N);
  const Index dgradWords = Index(B) * np + np * kStrip;
  const Index most = forwardWords > wgradWords ? forwardWords : wgradWords;
  return (most > dgradWords ? most : dgradWords) + 16;  // + 16: a full-vector load never leaves the buffer
}

}  // namespace

const Bf16DenseKernels& bf16DenseKernels() {
  static const Bf16DenseKernels table{forward, wgrad, dgrad, scratchWords};
  return table;
}

}  // namespace fedsilo::kernels
