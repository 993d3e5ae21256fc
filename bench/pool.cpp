// The max pool of the presets (2 x 2, stride 2) on cnn_mcmahan's two shapes at batch 32, forward and
// backward, on the active kernel set (FEDSILO_ISA picks another). Part of fedsilo_bench:
//   build/bench/fedsilo_bench --benchmark_filter=MaxPool --benchmark_repetitions=5
//     (with --benchmark_report_aggregates_only=true for the medians alone)
// Args: channels, side (the input is side x side), op (0 forward, 1 backward).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "nn/pool.hpp"

namespace fedsilo {
namespace {

void BM_MaxPool(benchmark::State& st) {
  const int c = static_cast<int>(st.range(0)), side = static_cast<int>(st.range(1)), batch = 32;
  const bool backward = st.range(2) != 0;
  MaxPool2DT<float> pool(c, side, side);
  pool.reserve(batch);
  const int in = c * side * side, out = pool.outputShape().size();
  std::vector<float> x(static_cast<std::size_t>(in) * batch), y(static_cast<std::size_t>(out) * batch),
      dy(y.size()), dx(x.size());
  Rng rng(1, -1, -1, Purpose::Misc);
  for (auto& v : x) v = static_cast<float>(rng.uniform(-1.0, 1.0));  // ReLU outputs: many zeros, ties
  for (auto& v : x) v = v > 0.0f ? v : 0.0f;
  for (auto& v : dy) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  CMapT<float> xm(x.data(), in, batch), yc(y.data(), out, batch), dym(dy.data(), out, batch);
  MapT<float> ym(y.data(), out, batch), dxm(dx.data(), in, batch);
  pool.forward(xm, ym, true);
  for (auto _ : st) {
    if (backward) {
      pool.backward(xm, yc, dym, &dxm);
      benchmark::DoNotOptimize(dx.data());
    } else {
      pool.forward(xm, ym, true);
      benchmark::DoNotOptimize(y.data());
    }
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * batch * (in + out) * 4);
}
BENCHMARK(BM_MaxPool)
    ->Name("MaxPool")
    ->ArgNames({"c", "side", "op"})
    ->Args({32, 28, 0})
    ->Args({32, 28, 1})
    ->Args({64, 14, 0})
    ->Args({64, 14, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace fedsilo
