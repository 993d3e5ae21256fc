// AVX-512 helpers shared by the hand-written float kernels of DenseT (dense.cpp) and Conv2DT
// (conv2d.cpp). Internal to src/nn: include it only under FEDSILO_NN_AVX512 (defined here when the
// compiler targets AVX-512F and the build keeps the default FEDSILO_GEMM=eigen; FEDSILO_GEMM=openblas
// builds route every product through the configured BLAS so that the backends can be compared whole).
#pragma once

#if defined(__AVX512F__) && !defined(FEDSILO_GEMM_OPENBLAS)
#define FEDSILO_NN_AVX512 1
#include <immintrin.h>

// GCC 12's avx512fintrin.h initialises its "undefined" vectors from themselves, which -Wall reports
// as (maybe-)uninitialised in every function that inlines a shuffle (GCC bug 105593, fixed in GCC 13).
// Silenced for the two kernel files that include this header; nothing here reads uninitialised data.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cstdint>

namespace fedsilo::simd {

// The first min(rem, 16) lanes.
inline __mmask16 maskFor(std::int64_t rem) {
  return rem >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << static_cast<unsigned>(rem)) - 1u);
}

// A loaded vector kept in a register: GCC otherwise folds the load into every FMA that uses it
// (one load per use instead of one per vector), which makes the tiles load-port bound.
inline __m512 loadInRegister(const float* p) {
  __m512 v = _mm512_loadu_ps(p);
  asm("" : "+v"(v));
  return v;
}
inline __m512 loadInRegister(__mmask16 m, const float* p) {
  __m512 v = _mm512_maskz_loadu_ps(m, p);
  asm("" : "+v"(v));
  return v;
}

// In-register transpose of a 16 x 16 block: r[i] = row i on entry, column i on exit (64 shuffles).
inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
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

}  // namespace fedsilo::simd
#endif
