// Convolution benchmarks (bench_main.cpp: the groups Conv2D/ and ConvGemm/), when the tree has Conv2D.
#include "bench_common.hpp"
#if __has_include("nn/conv2d.hpp")
#include <vector>

#include "nn/bf16.hpp"
#include "nn/conv2d.hpp"
#include "nn/kernel_table.hpp"

namespace {

using namespace fedsilo;
using namespace fedsilo::bench;

// Conv2D at the W2 shapes. Args: inC, H (= W), outC, batch, op (0 forward, 1 backward with dx,
// 2 backward without dx: conv1 is the first layer), chunk (im2col chunk cap in values; 0 = default),
// bf16 (1: train.precision = bf16, nn/bf16.hpp; an error where the CPU lacks it).
void BM_Conv2D(benchmark::State& st) {
  const int inC = static_cast<int>(st.range(0)), hw = static_cast<int>(st.range(1)), outC = static_cast<int>(st.range(2));
  const int batch = static_cast<int>(st.range(3)), op = static_cast<int>(st.range(4));
  const bool bf16 = st.range(6) != 0;
  if (bf16 && !bf16Missing().empty()) return st.SkipWithError(bf16Missing().c_str());
  selectBf16(bf16);
  Conv2DT<float> conv(inC, hw, hw, outC, 5, 1, 2);
  selectBf16(false);
  if (st.range(5) > 0) conv.setMaxChunkElems(st.range(5));
  std::size_t np = 0;
  for (const auto& s : conv.paramSpecs()) np += static_cast<std::size_t>(s.size);
  std::vector<float> params = randomFloats(np, 1), grads(np);
  conv.bind(params.data(), grads.data());
  conv.reserve(batch);
  const int inRows = inC * hw * hw, outRows = conv.outputShape().size();
  std::vector<float> x = randomFloats(static_cast<std::size_t>(inRows) * batch, 2, 0.0f, 1.0f);
  std::vector<float> y(static_cast<std::size_t>(outRows) * batch), dy = randomFloats(y.size(), 3), dx(x.size());
  CMapT<float> xm(x.data(), inRows, batch);
  MapT<float> ym(y.data(), outRows, batch);
  conv.forward(xm, ym, true);
  MapT<float> dxm(dx.data(), inRows, batch);
  for (auto _ : st) {
    if (op == 0)
      conv.forward(xm, ym, true);
    else
      conv.backward(xm, CMapT<float>(y.data(), outRows, batch), CMapT<float>(dy.data(), outRows, batch),
                    op == 1 ? &dxm : nullptr);
    benchmark::ClobberMemory();
  }
  const double fwd = 2.0 * outC * inC * 25.0 * hw * hw * batch;
  setFlops(st, op == 0 ? fwd : (op == 1 ? 2.0 * fwd : fwd));
}
// The gather GEMM alone (nn/kernel_table.hpp) on a conv2-like shape: positions x taps x channels
// from L2-resident buffers. Args: positions, taps (channels x 25), out channels.
void BM_ConvGemm(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0)), inC = static_cast<int>(st.range(1)), C = static_cast<int>(st.range(2));
  const int side = 14, pad = 2, wp = side + 2 * pad, plane = wp * wp, K = inC * 25;
  const int samples = (n + side * side - 1) / (side * side);
  std::vector<float> x = randomFloats(static_cast<std::size_t>(samples) * inC * plane, 1);
  std::vector<float> wt = randomFloats(static_cast<std::size_t>(K) * C, 2), z(static_cast<std::size_t>(n) * C);
  std::vector<std::int32_t> rowBase(n), tap(K);
  for (int i = 0; i < n; ++i) {
    const int b = i / (side * side), p = i % (side * side);
    rowBase[i] = b * inC * plane + (p / side) * wp + p % side;
  }
  for (int k = 0; k < K; ++k) tap[k] = (k / 25) * plane + (k % 25 / 5) * wp + k % 5;
  const auto& kc = kernels::active().conv;
  for (auto _ : st) {
    kc.gemm(x.data(), rowBase.data(), n, tap.data(), K, wt.data(), C, C, z.data(), C);
    benchmark::ClobberMemory();
  }
  setFlops(st, 2.0 * n * K * C);
}
BENCHMARK(BM_ConvGemm)->Name("ConvGemm")->ArgNames({"n", "inC", "outC"})->Args({588, 32, 64})->Args({392, 64, 128})->Args({147, 128, 256})->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Conv2D)
    ->Name("Conv2D")
    ->ArgNames({"inC", "hw", "outC", "batch", "op", "chunk", "bf16"})
    ->Args({1, 28, 32, 32, 0, 0, 0})
    ->Args({1, 28, 32, 32, 2, 0, 0})
    ->Args({32, 14, 64, 32, 0, 0, 0})
    ->Args({32, 14, 64, 32, 1, 0, 0})
    ->Args({1, 28, 32, 32, 0, 0, 1})
    ->Args({1, 28, 32, 32, 2, 0, 1})
    ->Args({32, 14, 64, 32, 0, 0, 1})
    ->Args({32, 14, 64, 32, 1, 0, 1})
    ->Args({32, 14, 64, 32, 0, 131072, 0})
    ->Args({32, 14, 64, 32, 1, 131072, 0})
    ->Args({32, 14, 64, 32, 0, 262144, 0})
    ->Args({32, 14, 64, 32, 1, 262144, 0})
    ->Args({32, 14, 64, 32, 0, 524288, 0})
    ->Args({32, 14, 64, 32, 1, 524288, 0})
    ->Args({32, 14, 64, 32, 0, 1048576, 0})
    ->Args({32, 14, 64, 32, 1, 1048576, 0})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
#endif
