// The FP32 FMA peak of one core in CPU time (the group FmaPeak/), the same register-only chains as
// bench/fma_peak.c: run it next to a kernel (--benchmark_filter='FmaPeak|ConvGemm') for the kernel's
// share of the peak under the same load, which the wall-clock fma_peak.c cannot give on a shared machine.
#include <immintrin.h>

#include "bench_common.hpp"

namespace {

using namespace fedsilo::bench;

#ifdef __AVX512F__
constexpr int kChains = 16;  // 16 independent 16-lane chains: more than FMA latency x pipes

void BM_FmaPeak(benchmark::State& st) {
  constexpr long kIterations = 1 << 16;
  __m512 acc[kChains];
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (auto _ : st) {
    for (long i = 0; i < kIterations; ++i) {
#pragma GCC unroll 16
      for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
    }
  }
  __m512 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm512_add_ps(total, acc[c]);
  benchmark::DoNotOptimize(total);
  setFlops(st, 2.0 * 16 * kChains * kIterations);
}
BENCHMARK(BM_FmaPeak)->Name("FmaPeak/avx512");
#endif

}  // namespace
