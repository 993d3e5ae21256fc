// The bf16 kernels (nn/bf16_kernels.hpp): AVX-512F + AVX512-BF16, compiled with those flags in this
// translation unit only (cmake/kernels.cmake). Tiles as the fp32 convolution kernels
// (nn/conv_kernels.hpp): kR positions (or taps) x V vectors of 16 channels, 24 accumulators; every
// output element is one chain of VDPBF16PS in a fixed order, so results do not depend on the chunk,
// the tile grid or the rank. Everything but the table has internal linkage.
#include <immintrin.h>

#include <type_traits>

#include "nn/bf16_kernels.hpp"
#include "nn/simd_avx512.hpp"
#include "nn/simd_bf16.hpp"

namespace fedsilo::kernels {
namespace {

using bf16simd::bcast;
using bf16simd::dot;
using bf16simd::load;
using bf16simd::pin;

constexpr int kR = 6;        // positions (gemm) or taps (wgrad) per tile
constexpr int kV = 4;        // vectors of 16 channels per tile
constexpr int kBlockK = 128;  // pairs of taps per pass over a chunk's positions (32 KiB of weights)

inline int imin(int a, int b) { return a < b ? a : b; }
inline Index iminl(Index a, Index b) { return a < b ? a : b; }

template <int V_>
void gemmTile(const std::uint32_t* x, const std::int32_t* rowBase, Index i0, int nr, const std::int32_t* tap, int k0,
              int k1, const std::uint32_t* wt, int ldw, int c0, float* z, int ldz) {
  __m512 acc[kR * V_];
  if (k0 == 0) {
#pragma GCC unroll 32
    for (int a = 0; a < kR * V_; ++a) acc[a] = _mm512_setzero_ps();
  } else {  // continue the chains of the previous block of taps
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) acc[r * V_ + v] = _mm512_loadu_ps(z + (i0 + imin(r, nr - 1)) * ldz + c0 + 16 * v);
  }
  const std::uint32_t* xr[kR];
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) xr[r] = x + rowBase[i0 + imin(r, nr - 1)];
  const std::uint32_t* wk = wt + static_cast<Index>(k0) * ldw + c0;
  for (int k = k0; k < k1; ++k, wk += ldw) {
    const Index o = tap[k];
    __m512i wv[V_];
#pragma GCC unroll 4
    for (int v = 0; v < V_; ++v) wv[v] = pin(load(wk + 16 * v));
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r) {
      const __m512i d = bcast(xr[r] + o);
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) acc[r * V_ + v] = dot(acc[r * V_ + v], d, wv[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
    if (r >= nr) break;
#pragma GCC unroll 4
    for (int v = 0; v < V_; ++v) _mm512_storeu_ps(z + (i0 + r) * ldz + c0 + 16 * v, acc[r * V_ + v]);
  }
}

template <int V_>
void wgradTile(const std::uint32_t* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int k0, int nk,
               const std::uint32_t* dz, int ldz, int c0, float* dwt, int ldw, bool accumulate) {
  __m512 acc[kR * V_];
  if (accumulate) {
#pragma GCC unroll 8
    for (int j = 0; j < kR; ++j)
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v)
        acc[j * V_ + v] = _mm512_loadu_ps(dwt + static_cast<Index>(k0 + imin(j, nk - 1)) * ldw + c0 + 16 * v);
  } else {
#pragma GCC unroll 32
    for (int a = 0; a < kR * V_; ++a) acc[a] = _mm512_setzero_ps();
  }
  Index t[kR];
#pragma GCC unroll 8
  for (int j = 0; j < kR; ++j) t[j] = tap[k0 + imin(j, nk - 1)];
  const std::uint32_t* dzi = dz + c0;
  for (Index i = 0; i < n; ++i, dzi += ldz) {
    const std::uint32_t* xb = x + rowBase[i];
    __m512i zv[V_];
#pragma GCC unroll 4
    for (int v = 0; v < V_; ++v) zv[v] = pin(load(dzi + 16 * v));
#pragma GCC unroll 8
    for (int j = 0; j < kR; ++j) {
      const __m512i d = bcast(xb + t[j]);
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) acc[j * V_ + v] = dot(acc[j * V_ + v], d, zv[v]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kR; ++j) {
    if (j >= nk) break;
#pragma GCC unroll 4
    for (int v = 0; v < V_; ++v)
      _mm512_storeu_ps(dwt + static_cast<Index>(k0 + j) * ldw + c0 + 16 * v, acc[j * V_ + v]);
  }
}

// Calls f(std::integral_constant<int, v>) for the runtime v in [1, kV].
template <class F>
void withVecs(int v, F&& f) {
  if (v >= 4) return f(std::integral_constant<int, 4>{});
  if (v == 3) return f(std::integral_constant<int, 3>{});
  if (v == 2) return f(std::integral_constant<int, 2>{});
  f(std::integral_constant<int, 1>{});
}

void gemm(const std::uint32_t* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int K,
          const std::uint32_t* wt, int ldw, int C, float* z, int ldz) {
  const int cvecs = (C + 15) / 16;
  for (int cv = 0; cv < cvecs; cv += kV) {
    const int nv = imin(kV, cvecs - cv);
    for (int k0 = 0; k0 < K; k0 += kBlockK) {
      const int k1 = imin(K, k0 + kBlockK);
      for (Index i0 = 0; i0 < n; i0 += kR)
        withVecs(nv, [&](auto v) {
          gemmTile<decltype(v)::value>(x, rowBase, i0, static_cast<int>(iminl(kR, n - i0)), tap, k0, k1, wt, ldw,
                                       cv * 16, z, ldz);
        });
    }
  }
}

void wgrad(const std::uint32_t* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int K,
           const std::uint32_t* dz, int ldz, int C, float* dwt, int ldw, bool accumulate) {
  const int cvecs = (C + 15) / 16;
  for (int cv = 0; cv < cvecs; cv += kV) {
    const int nv = imin(kV, cvecs - cv);
    for (int k0 = 0; k0 < K; k0 += kR)
      withVecs(nv, [&](auto v) {
        wgradTile<decltype(v)::value>(x, rowBase, n, tap, k0, imin(kR, K - k0), dz, ldz, cv * 16, dwt, ldw,
                                      accumulate);
      });
  }
}

__m512 masked(__mmask16 m, const float* g, const float* mask) {
  const __m512 v = _mm512_maskz_loadu_ps(m, g);
  if (!mask) return v;
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(m, mask), _mm512_setzero_ps(), _CMP_GT_OQ), v);
}

__m512i widen(__m512 v) {
  return _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
}

void pairRows(const float* g0, const float* m0, const float* g1, const float* m1, Index n, std::uint32_t* d) {
  for (Index j = 0; j < n; j += 16) {
    const __mmask16 m = n - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1u);
    const __m512i lo = widen(masked(m, g0 + j, m0 ? m0 + j : nullptr));
    const __m512i hi = g1 ? widen(masked(m, g1 + j, m1 ? m1 + j : nullptr)) : _mm512_setzero_si512();
    _mm512_mask_storeu_epi32(d + j, m, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
  }
}

__mmask16 laneMask(int n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16(n > 0 ? (1u << n) - 1u : 0u); }

// Lane l = row[start + l] where 0 <= start + l < n, else 0 (a negative start by an expand, so that no
// address before the row is formed).
__m512 rowSlice(const float* row, int n, int start) {
  const auto m = static_cast<__mmask16>(laneMask(n - start) & ~laneMask(-start));
  if (start >= 0) return _mm512_maskz_loadu_ps(m, row + start);
  return _mm512_maskz_expand_ps(m, _mm512_maskz_loadu_ps(laneMask(n), row));
}

void pairShiftedRows(const float* src, int h, int w, int pad, int shift, int cols, std::uint32_t* d) {
  for (int r = 0; r < h; ++r, src += w, d += cols)
    for (int j = 0; j < cols; j += 16) {
      const __m512i lo = widen(rowSlice(src, w, j - pad)), hi = widen(rowSlice(src, w, j + shift - pad));
      _mm512_mask_storeu_epi32(d + j, laneMask(cols - j), _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
}

// One block of 16 channels x 16 positions of sample planes (masked by the ReLU's output), transposed to
// r[j] = position p0 + j across the channels.
void loadBlock(const float* src, const float* mask, Index P, int nc, int np, __m512 (&r)[16]) {
  const __mmask16 pm = np >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << np) - 1u);
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = i < nc ? masked(pm, src + i * P, mask ? mask + i * P : nullptr) : _mm512_setzero_ps();
  simd::Avx512::transpose(r);
}

void planesToPairs(const float* src, const float* mask, int nb, int C, Index P, Index srcStride, std::uint32_t* d,
                   int ldd, float* db) {
  for (int b = 0; b < nb; ++b) {
    const Index sb = b * srcStride;
    std::uint32_t* dstb = d + b * (P / 2) * ldd;
    for (int c0 = 0; c0 < C; c0 += 16) {
      const int nc = imin(16, C - c0);
      const __mmask16 cm = nc >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << nc) - 1u);
      __m512 bias = _mm512_maskz_loadu_ps(cm, db + c0);
      for (Index p0 = 0; p0 < P; p0 += 16) {
        const int np = static_cast<int>(iminl(16, P - p0));
        __m512 r[16];
        const Index at = sb + c0 * P + p0;
        loadBlock(src + at, mask ? mask + at : nullptr, P, nc, np, r);
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j)
          if (j < np) bias = _mm512_add_ps(bias, r[j]);
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j)
          if (2 * j < np)
            _mm512_mask_storeu_epi32(dstb + (p0 / 2 + j) * ldd + c0, cm,
                                     _mm512_or_si512(widen(r[2 * j]), _mm512_slli_epi32(widen(r[2 * j + 1]), 16)));
      }
      _mm512_mask_storeu_ps(db + c0, cm, bias);
    }
  }
}

}  // namespace

const Bf16ConvKernels& bf16ConvKernels() {
  static const Bf16ConvKernels table{gemm, wgrad, pairRows, planesToPairs, pairShiftedRows};
  return table;
}

}  // namespace fedsilo::kernels
