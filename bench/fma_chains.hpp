// The register-only FMA chains that measure one core's FP32 FMA peak (as bench/fma_peak.c does):
// kChains independent 16-lane chains, more than FMA latency x pipes, so the FMA units never wait.
#pragma once
#ifdef __AVX512F__
#include <immintrin.h>

namespace fedsilo::bench {

constexpr int kFmaChains = 16;

// Runs `iterations` rounds of kFmaChains 16-lane FMAs on `acc` (2 * 16 * kFmaChains flops a round).
inline void runFmaChains(__m512* acc, long iterations) {
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
  }
}

}  // namespace fedsilo::bench
#endif
