// AVX512-BF16 building blocks of the bf16 kernels (kernels_bf16.cpp, kernels_bf16_dense.cpp). Include
// only from translation units compiled with the AVX512-BF16 flags (cmake/kernels.cmake): the
// intrinsics need them, and nothing else may run them on a CPU without the instructions.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace fedsilo::kernels::bf16simd {

// acc + the 16 dot products of the bf16 pairs in a and b (VDPBF16PS), accumulated in fp32.
inline __m512 dot(__m512 acc, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(a), reinterpret_cast<__m512bh>(b));
}
// One packed pair (a 32-bit word) in every lane.
inline __m512i bcast(const std::uint32_t* p) { return _mm512_set1_epi32(static_cast<int>(*p)); }
inline __m512i load(const std::uint32_t* p) { return _mm512_loadu_si512(p); }
// A loaded vector kept in a register (GCC would otherwise fold the load into every use).
inline __m512i pin(__m512i v) {
  asm("" : "+v"(v));
  return v;
}

}  // namespace fedsilo::kernels::bf16simd
