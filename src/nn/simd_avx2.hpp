// SIMD traits for the AVX2 + FMA kernel set: 8 float lanes in a ymm register, lane masks as integer
// vectors (maskload/maskstore, which neither read nor fault on masked-off lanes). Included only by
// kernels_avx2.cpp, compiled with -mavx2 -mfma (cmake/kernels.cmake). The register blocking is sized
// for the 16 ymm registers.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace fedsilo::simd {
namespace {

struct Avx2 {
  static constexpr int kLanes = 8;
  using V = __m256;
  using M = __m256i;
  static constexpr int kDenseRows = 6;
  static constexpr int kWgradRows = 4;    // dense weight gradient: output rows x kWgradVecs vectors of inputs
  static constexpr int kWgradVecs = 3;
  static constexpr int kWgradVecsMax = 3;
  static constexpr int kDgradVecs = 2;
  static constexpr int kDgradSamples = 6;
  static constexpr int kConvVecs = 2;
  static constexpr int kConvRows = 6;
  static constexpr int kGemmCols = 6;      // packed GEMM (nn/gemm_kernels.hpp): columns x 2 vectors of rows

  static M mask(std::int64_t n) {
    const int k = n >= 8 ? 8 : (n > 0 ? static_cast<int>(n) : 0);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static M full() { return _mm256_set1_epi32(-1); }
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load(M m, const float* p) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void store(float* p, M m, V v) { _mm256_maskstore_ps(p, m, v); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V max0(V v) { return _mm256_max_ps(_mm256_setzero_ps(), v); }
  static V selectPositive(V y, V dy) { return _mm256_and_ps(_mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_GT_OQ), dy); }
  static V pin(V v) {
    asm("" : "+x"(v));
    return v;
  }
  static void lanes(float* out, V v) { _mm256_storeu_ps(out, v); }
  // In-register transpose of an 8 x 8 block: r[i] = row i on entry, column i on exit.
  static void transpose(V (&r)[8]);
};

inline void Avx2::transpose(V (&r)[8]) {
  V t[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // t[2i]: rows 2i, 2i+1 interleaved for columns 0, 1 (and 4, 5 in the high half); t[2i+1]: columns 2, 3 (6, 7)
  V u[8];
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  // u[4i + j], 128-bit half h: rows 4i..4i+3 of column 4h + j
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
  }
}

}  // namespace
}  // namespace fedsilo::simd
