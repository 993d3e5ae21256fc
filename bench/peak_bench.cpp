// The FP32 FMA peak of one core in CPU time (the group FmaPeak/), the same register-only chains as
// bench/fma_peak.c: run it next to a kernel (--benchmark_filter='FmaPeak|ConvGemm') for the kernel's
// share of the peak under the same load, which the wall-clock fma_peak.c cannot give on a shared machine.
#include "bench_common.hpp"
#include "fma_chains.hpp"

namespace {

using namespace fedsilo::bench;

#ifdef __AVX512F__
void BM_FmaPeak(benchmark::State& st) {
  constexpr long kIterations = 1 << 16;
  __m512 acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (auto _ : st) runFmaChains(acc, kIterations);
  __m512 total = acc[0];
  for (int c = 1; c < kFmaChains; ++c) total = _mm512_add_ps(total, acc[c]);
  benchmark::DoNotOptimize(total);
  setFlops(st, 2.0 * 16 * kFmaChains * kIterations);
}
BENCHMARK(BM_FmaPeak)->Name("FmaPeak/avx512");
#endif

}  // namespace
