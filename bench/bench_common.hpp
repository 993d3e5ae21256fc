// What the fedsilo_bench files (bench/bench_main.cpp lists their groups) share: plain SGD over a flat
// buffer, the heap-allocation counter, random inputs and the rate counters.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#if __has_include("optim/optimizer.hpp")
#include "optim/optimizer.hpp"
#define FEDSILO_BENCH_OPTIMIZER 1
#else
#include "optim/sgd.hpp"
#endif

namespace fedsilo::bench {

#ifdef FEDSILO_BENCH_OPTIMIZER
// Plain SGD (optionally with momentum) over a whole flat buffer of n parameters.
class PlainSgd {
 public:
  PlainSgd(double lr, double momentum, std::size_t n) : opt_(settings(lr, momentum)), segments_{{0, n, 0}} {
    opt_.prepare(state_, n, 1);
  }
  void step(float* p, const float* g, std::size_t) { opt_.step(p, g, segments_, state_); }

 private:
  static OptimizerSettings settings(double lr, double momentum) {
    OptimizerSettings s;
    s.lr = lr;
    s.momentum = momentum;
    return s;
  }
  Optimizer opt_;
  std::vector<ParamSegment> segments_;
  OptimizerState state_;
};
#else
class PlainSgd {
 public:
  PlainSgd(double lr, double momentum, std::size_t) : sgd_(lr, momentum, 0.0) {}
  void step(float* p, const float* g, std::size_t n) { sgd_.step(p, g, n); }

 private:
  Sgd sgd_;
};
#endif

// Heap allocations between construction and stop(): core/malloc_counter.hpp replaces malloc, so it is
// included in one translation unit only (bench_main.cpp, which defines these two).
void startCountingAllocations();
long stopCountingAllocations();
struct AllocCounter {
  AllocCounter() { startCountingAllocations(); }
  long stop() { return stopCountingAllocations(); }
};

inline std::vector<float> randomFloats(std::size_t n, std::uint64_t seed, float lo = -0.5f, float hi = 0.5f) {
  Rng r(seed, -1, -1, Purpose::Init);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(r.uniform(lo, hi));
  return v;
}

inline void setFlops(benchmark::State& st, double flopsPerIter) {
  st.counters["GFLOP/s"] = benchmark::Counter(flopsPerIter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
inline void setBytes(benchmark::State& st, double bytesPerIter) {
  st.counters["GB/s"] = benchmark::Counter(bytesPerIter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace fedsilo::bench
