// SIMD traits for the AVX-512 kernel set: 16 float lanes in a zmm register, __mmask16 masks.
// Included only by kernels_avx512.cpp and the bf16 kernels (kernels_bf16*.cpp), which cmake/kernels.cmake
// compiles with the AVX-512 flags whatever the rest of the build targets: the kernels are chosen at run time
// (nn/kernels.hpp). Everything here is internal to the including translation unit.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace fedsilo::simd {
namespace {

struct Avx512 {
  static constexpr int kLanes = 16;
  using V = __m512;
  using M = __mmask16;
  // Register blocking of the kernels (nn/dense_kernels.hpp, nn/conv_kernels.hpp): 32 zmm registers.
  static constexpr int kDenseRows = 12;    // dense forward: outputs x 2 vectors of samples
  static constexpr int kWgradRows = 4;    // dense weight gradient: output rows x kWgradVecs vectors of inputs (6 x 4
                                         // measured 5-15% slower: dW is written to memory, 6 row streams)
  static constexpr int kWgradVecs = 4;
  static constexpr int kWgradVecsMax = 5;
  static constexpr int kDgradVecs = 3;     // dense input gradient: this many vectors x kDgradSamples
  static constexpr int kDgradSamples = 8;
  static constexpr int kConvVecs = 4;      // convolution: channel vectors x kConvRows positions (or taps)
  static constexpr int kConvRows = 6;
  static constexpr int kGemmCols = 12;      // packed GEMM (nn/gemm_kernels.hpp): columns x 2 vectors of rows

  static M mask(std::int64_t n) {
    return n >= 16 ? M(0xFFFF) : M((1u << static_cast<unsigned>(n > 0 ? n : 0)) - 1u);
  }
  static M full() { return M(0xFFFF); }
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load(M m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void store(float* p, M m, V v) { _mm512_mask_storeu_ps(p, m, v); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V bcast(const float* p) { return _mm512_set1_ps(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a * b, one rounding
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V max0(V v) { return _mm512_max_ps(_mm512_setzero_ps(), v); }  // max(0, NaN) = NaN, max(0, -0) = -0
  // v where positive, else 0 (the ReLU's backward rule y > 0 ? dy : 0).
  static V selectPositive(V y, V dy) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_GT_OQ), dy); }
  // A loaded vector kept in a register: GCC otherwise folds the load into every FMA that uses it
  // (one load per use instead of one per vector), which makes the tiles load-port bound.
  static V pin(V v) {
    asm("" : "+v"(v));
    return v;
  }
  static void lanes(float* out, V v) { _mm512_storeu_ps(out, v); }
  // In-register transpose of a 16 x 16 block: r[i] = row i on entry, column i on exit (64 shuffles).
  static void transpose(V (&r)[16]);
};

inline void Avx512::transpose(V (&r)[16]) {
  V t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
  // r[4i + j], 128-bit lane L: rows 4i..4i+3 of column 4L + j
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
    t[8 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD);
    r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
    r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xDD);
  }
}

}  // namespace
}  // namespace fedsilo::simd
