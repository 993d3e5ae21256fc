// One core's FP32 FMA peak in GFLOP/s of CPU time, measured once per process with the chains of
// FmaPeak/ (bench/fma_chains.hpp), and the `peak_share` counter: a benchmark's GFLOP/s as a share of
// that peak, both in CPU time and under the same machine load.
#pragma once
#include <algorithm>

#include "bench_common.hpp"
#include "fma_chains.hpp"
#include "thread_clock.hpp"

namespace fedsilo::bench {

#ifdef __AVX512F__
// The chains on a local copy of acc: with the array itself, kept in memory across the clock calls, every
// step was a load, a multiply-add and a store (a third of FmaPeak/avx512's rate).
__attribute__((noinline)) inline void runFmaChainsInRegisters(__m512* acc, long iterations) {
  __m512 local[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) local[c] = acc[c];
  runFmaChains(local, iterations);
  for (int c = 0; c < kFmaChains; ++c) acc[c] = local[c];
}
#endif

// 0 without AVX-512 (no share is printed then).
inline double fmaPeakGflops() {
#ifdef __AVX512F__
  static const double peak = [] {
    constexpr long kIterations = 1 << 16;
    __m512 acc[kFmaChains];
    for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
    double best = 0.0;
    for (int rep = 0; rep < 20; ++rep) {  // the best of 20 short runs: another job's time slice costs one
      const double t0 = threadSeconds();
      runFmaChainsInRegisters(acc, kIterations);
      best = std::max(best, 2.0 * 16 * kFmaChains * kIterations / (threadSeconds() - t0) * 1e-9);
    }
    __m512 total = acc[0];
    for (int c = 1; c < kFmaChains; ++c) total = _mm512_add_ps(total, acc[c]);
    benchmark::DoNotOptimize(total);
    return best;
  }();
  return peak;
#else
  return 0.0;
#endif
}

// GFLOP/s and, with a measured peak, peak_share.
inline void setFlopsAndShare(benchmark::State& st, double flopsPerIter) {
  setFlops(st, flopsPerIter);
  const double peak = fmaPeakGflops();
  if (peak > 0.0)
    st.counters["peak_share"] =
        benchmark::Counter(flopsPerIter * 1e-9 / peak, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace fedsilo::bench
