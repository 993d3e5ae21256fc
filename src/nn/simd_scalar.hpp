// "SIMD" traits for the generic kernel set: one float per vector, plain C++. Included only by
// kernels_generic.cpp, which cmake/kernels.cmake compiles for baseline x86-64 (no FMA instruction),
// so this set runs on any x86-64 CPU. Multiply-adds go through fmaf (one rounding, as the
// vector sets' FMA instructions), which is what makes every kernel set give the same bits: the
// kernels fix the order of every sum, and the sets differ only in how many lanes run at once.
#pragma once
#include <cstdint>

namespace fedsilo::simd {
namespace {

struct Scalar {
  static constexpr int kLanes = 1;
  using V = float;
  using M = bool;
  static constexpr int kDenseRows = 1;  // the transposed store needs rows <= lanes
  static constexpr int kWgradRows = 4;    // dense weight gradient: output rows x kWgradVecs vectors of inputs
  static constexpr int kWgradVecs = 4;
  static constexpr int kWgradVecsMax = 4;
  static constexpr int kDgradVecs = 4;
  static constexpr int kDgradSamples = 4;
  static constexpr int kConvVecs = 4;
  static constexpr int kConvRows = 4;
  static constexpr int kGemmCols = 4;      // packed GEMM (nn/gemm_kernels.hpp): columns x 2 vectors of rows

  static M mask(std::int64_t n) { return n > 0; }
  static M full() { return true; }
  static V zero() { return 0.0f; }
  static V load(const float* p) { return *p; }
  static V load(M m, const float* p) { return m ? *p : 0.0f; }
  static void store(float* p, V v) { *p = v; }
  static void store(float* p, M m, V v) {
    if (m) *p = v;
  }
  static V set1(float x) { return x; }
  static V bcast(const float* p) { return *p; }
  static V fma(V a, V b, V c) { return __builtin_fmaf(a, b, c); }
  static V fnma(V a, V b, V c) { return __builtin_fmaf(-a, b, c); }
  static V add(V a, V b) { return a + b; }
  static V max0(V v) { return 0.0f > v ? 0.0f : v; }  // as maxps(0, v): NaN and -0 pass through
  static V selectPositive(V y, V dy) { return y > 0.0f ? dy : 0.0f; }
  static V pin(V v) { return v; }
  static void lanes(float* out, V v) { *out = v; }
  static void transpose(V (&)[1]) {}
};

}  // namespace
}  // namespace fedsilo::simd
