/* The machine's FP32 fused multiply-add peak, measured: every thread runs independent chains of
 * register-only FMAs (no memory traffic), enough chains to cover the FMA latency on every pipe, and
 * the best of several timed repetitions counts. bench/compare_torch.sh builds and runs it to state
 * every throughput figure as a fraction of this peak, so that the figures mean the same on any CPU.
 *
 *   gcc -O3 -march=native -fopenmp bench/fma_peak.c -o fma_peak && ./fma_peak [THREADS...]
 *
 * -O3 matters: at -O2 GCC keeps the chains in memory and the figure is a fraction of the real peak.
 * Without arguments it measures 1 thread and every core (omp_get_num_procs()). Output, one line per
 * instruction set and thread count (the widest set is the peak that compare_torch.sh uses):
 *   fma_peak isa=avx512 threads=2 gflops=435.2
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Independent chains per thread: at least latency x pipes (4 x 2 on current x86 cores), and few enough
 * to stay in registers with the two constants: 32 vector registers with AVX-512, 16 with AVX2 alone. */
enum { kChains512 = 16, kChains256 = 12, kRepetitions = 5 };

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifdef __AVX512F__
/* kChains512 independent 16-lane chains; returns their sum so that nothing is optimised away. */
static float chains512(long iterations) {
  __m512 acc[kChains512];
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
#pragma GCC unroll 16
  for (int c = 0; c < kChains512; ++c) acc[c] = _mm512_set1_ps((float)c);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains512; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
  }
  __m512 total = acc[0];
#pragma GCC unroll 16
  for (int c = 1; c < kChains512; ++c) total = _mm512_add_ps(total, acc[c]);
  return _mm512_reduce_add_ps(total);
}
#endif

#ifdef __AVX2__
static float chains256(long iterations) {
  __m256 acc[kChains256];
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
#pragma GCC unroll 16
  for (int c = 0; c < kChains256; ++c) acc[c] = _mm256_set1_ps((float)c);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains256; ++c) acc[c] = _mm256_fmadd_ps(acc[c], scale, shift);
  }
  __m256 total = acc[0];
#pragma GCC unroll 16
  for (int c = 1; c < kChains256; ++c) total = _mm256_add_ps(total, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, total);
  return lanes[0] + lanes[7];
}
#endif

typedef float (*ChainFn)(long);
static volatile float sink;

/* Best GFLOP/s of kRepetitions timed runs of fn on `threads` threads, each thread `iterations` long. */
static double peak(ChainFn fn, int lanes, int chains, int threads, long iterations) {
  double best = 0.0;
  for (int rep = 0; rep <= kRepetitions; ++rep) { /* rep 0 warms the cores up and is not counted */
    float sum = 0.0f;
    const double t0 = seconds();
#pragma omp parallel num_threads(threads) reduction(+ : sum)
    sum += fn(iterations);
    const double t = seconds() - t0;
    sink = sum;
    const double gflops = (double)threads * (double)iterations * chains * lanes * 2.0 / t / 1e9;
    if (rep > 0 && gflops > best) best = gflops;
  }
  return best;
}

int main(int argc, char** argv) {
  int counts[16], n = 0;
  for (int i = 1; i < argc && n < 16; ++i) {
    counts[n] = atoi(argv[i]);
    if (counts[n] < 1) {
      fprintf(stderr, "fma_peak: thread count '%s' is not a positive integer\n", argv[i]);
      return 2;
    }
    ++n;
  }
  if (n == 0) {
    counts[n++] = 1;
    if (omp_get_num_procs() > 1) counts[n++] = omp_get_num_procs();
  }
  const long iterations = 20000000; /* 0.1-0.3 s per run on current cores */
  int measured = 0;
  for (int i = 0; i < n; ++i) {
#ifdef __AVX512F__
    printf("fma_peak isa=avx512 threads=%d gflops=%.1f\n", counts[i],
           peak(chains512, 16, kChains512, counts[i], iterations));
    measured = 1;
#endif
#ifdef __AVX2__
    printf("fma_peak isa=avx2 threads=%d gflops=%.1f\n", counts[i],
           peak(chains256, 8, kChains256, counts[i], iterations));
    measured = 1;
#endif
    fflush(stdout);
  }
  if (!measured) {
    fprintf(stderr, "fma_peak: built without AVX2 or AVX-512 (compile with -march=native on an x86-64 CPU with FMA)\n");
    return 1;
  }
  return 0;
}
