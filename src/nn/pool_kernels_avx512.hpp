// The 2 x 2, stride 2 max pool of nn/pool_kernels.hpp for the avx512 kernel set: the same layout,
// positions and rules, the same bits. Included only by kernels_avx512.cpp (compiled with the AVX-512
// flags); internal to that translation unit.
//
// A vector holds 16 windows: two vectors of one input row (32 values) split into the even and odd
// columns by one permute each, so the lanes of a0, a1, b0, b1 are the four elements of each window.
// MAXPS returns its first operand where it is greater, else its second, so max(a1, a0) is the plain
// loops' a1 > a0 ? a1 : a0, bit for bit. Rows of at most 8 outputs (the second pool of cnn_mcmahan:
// 7) go two to a vector (the low and high 8 lanes), compacted for the store. A vector with a NaN
// in a used lane sends its rows to the plain loops.
#pragma once
#include <immintrin.h>

#include "nn/pool_kernels.hpp"

namespace fedsilo::kernels {
namespace {

struct PoolAvx512 {
  static __mmask16 lanes(int n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16(n > 0 ? (1u << n) - 1u : 0u); }
  static __m512i evenIdx() { return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); }
  static __m512i oddIdx() { return _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31); }

  struct Windows {
    __m512 a0, a1, b0, b1;
  };
  // The windows of the input values (t0, t1) of the top row and (u0, u1) of the bottom row.
  static Windows split(__m512 t0, __m512 t1, __m512 u0, __m512 u1) {
    const __m512i e = evenIdx(), o = oddIdx();
    return {_mm512_permutex2var_ps(t0, e, t1), _mm512_permutex2var_ps(t0, o, t1), _mm512_permutex2var_ps(u0, e, u1),
            _mm512_permutex2var_ps(u0, o, u1)};
  }
  static bool hasNaN(const Windows& x, __mmask16 used) {
    return (used & (_mm512_cmp_ps_mask(x.a0, x.a1, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(x.b0, x.b1, _CMP_UNORD_Q))) != 0;
  }
  static __m512 maxima(const Windows& x) {
    return _mm512_max_ps(_mm512_max_ps(x.b1, x.b0), _mm512_max_ps(x.a1, x.a0));
  }
  static __m512i positions(const Windows& x, __m512 v) {
    __m512i p = _mm512_set1_epi32(3);
    p = _mm512_mask_mov_epi32(p, _mm512_cmp_ps_mask(v, x.b0, _CMP_EQ_OQ), _mm512_set1_epi32(2));
    p = _mm512_mask_mov_epi32(p, _mm512_cmp_ps_mask(v, x.a1, _CMP_EQ_OQ), _mm512_set1_epi32(1));
    return _mm512_mask_mov_epi32(p, _mm512_cmp_ps_mask(v, x.a0, _CMP_EQ_OQ), _mm512_setzero_si512());
  }
  static void store(float* y, std::uint8_t* pos, __mmask16 m, __m512 v, __m512i p) {
    _mm512_mask_storeu_ps(y, m, v);
    _mm_mask_storeu_epi8(pos, m, _mm512_cvtepi32_epi8(p));
  }

  // One output row of ow > 8 outputs, 16 at a time.
  static void row(const float* a, int w, int ow, float* y, std::uint8_t* pos) {
    const float* d = a + w;
    for (int j = 0; j < ow; j += 16) {
      const int n = ow - j < 16 ? ow - j : 16;
      const __mmask16 lo = lanes(2 * n), hi = lanes(2 * n - 16);
      const Windows x = split(_mm512_maskz_loadu_ps(lo, a + 2 * j), _mm512_maskz_loadu_ps(hi, a + 2 * j + 16),
                              _mm512_maskz_loadu_ps(lo, d + 2 * j), _mm512_maskz_loadu_ps(hi, d + 2 * j + 16));
      const __mmask16 used = lanes(n);
      if (hasNaN(x, used)) return maxPoolRowPlain(a, w, ow, y, pos);
      const __m512 v = maxima(x);
      store(y + j, pos + j, used, v, positions(x, v));
    }
  }

  // Two output rows of ow <= 8 outputs (a1 null: one row) into 2 ow consecutive outputs.
  static void rowPair(const float* a0, const float* a1, int w, int ow, float* y, std::uint8_t* pos) {
    const __mmask16 in = lanes(2 * ow), one = lanes(ow);
    const __mmask16 used = a1 ? __mmask16(one | (one << 8)) : one;
    const Windows x = split(_mm512_maskz_loadu_ps(in, a0), a1 ? _mm512_maskz_loadu_ps(in, a1) : _mm512_setzero_ps(),
                            _mm512_maskz_loadu_ps(in, a0 + w),
                            a1 ? _mm512_maskz_loadu_ps(in, a1 + w) : _mm512_setzero_ps());
    if (hasNaN(x, used)) {
      maxPoolRowPlain(a0, w, ow, y, pos);
      if (a1) maxPoolRowPlain(a1, w, ow, y + ow, pos + ow);
      return;
    }
    const __m512 v = maxima(x);
    const __m512i p = positions(x, v);
    if (ow == 8) return store(y, pos, used, v, p);
    store(y, pos, lanes(a1 ? 2 * ow : ow), _mm512_maskz_compress_ps(used, v), _mm512_maskz_compress_epi32(used, p));
  }

  static void forward(const float* x, Index planes, int h, int w, float* y, std::uint8_t* pos) {
    const int oh = h / 2, ow = w / 2;
    const Index rows = planes * oh;
    auto top = [&](Index q) { return x + (q / oh) * h * w + Index(2 * (q % oh)) * w; };
    if (ow > 8) {
      for (Index q = 0; q < rows; ++q) row(top(q), w, ow, y + q * ow, pos + q * ow);
      return;
    }
    for (Index q = 0; q < rows; q += 2)
      rowPair(top(q), q + 1 < rows ? top(q + 1) : nullptr, w, ow, y + q * ow, pos + q * ow);
  }

  // dx of one output row: 16 outputs at a time, each gradient routed to one of the four lanes of its
  // window and the even and odd columns interleaved back by one permute each.
  static void backwardRow(const float* dy, const std::uint8_t* pos, int w, int ow, float* top) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    float* bottom = top + w;
    for (int j = 0; j < ow; j += 16) {
      const int n = ow - j < 16 ? ow - j : 16;
      const __mmask16 m = lanes(n), m0 = lanes(2 * n), m1 = lanes(2 * n - 16);
      const __m512 g = _mm512_add_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(m, dy + j));
      const __m512i p = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, pos + j));
      __m512 at[4];
      for (int k = 0; k < 4; ++k) at[k] = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(p, _mm512_set1_epi32(k)), g);
      _mm512_mask_storeu_ps(top + 2 * j, m0, _mm512_permutex2var_ps(at[0], lo, at[1]));
      _mm512_mask_storeu_ps(top + 2 * j + 16, m1, _mm512_permutex2var_ps(at[0], hi, at[1]));
      _mm512_mask_storeu_ps(bottom + 2 * j, m0, _mm512_permutex2var_ps(at[2], lo, at[3]));
      _mm512_mask_storeu_ps(bottom + 2 * j + 16, m1, _mm512_permutex2var_ps(at[2], hi, at[3]));
    }
  }

  static void backward(const float* dy, const std::uint8_t* pos, Index planes, int h, int w, float* dx) {
    const int oh = h / 2, ow = w / 2;
    for (Index p = 0; p < planes; ++p) {
      float* plane = dx + p * h * w;
      for (int r = 0; r < oh; ++r) {
        const Index o = (p * oh + r) * ow;
        backwardRow(dy + o, pos + o, w, ow, plane + Index(2 * r) * w);
      }
      zeroUncovered(plane, h, w);
    }
  }
};

}  // namespace
}  // namespace fedsilo::kernels
