// Convolution benchmarks (bench_main.cpp: the groups Conv2D/ and ConvGemm/), when the tree has Conv2D.
#include "bench_common.hpp"
#if __has_include("nn/conv2d.hpp")
#include <vector>

#include "nn/bf16.hpp"
#include "nn/conv2d.hpp"
#include "nn/kernel_table.hpp"
#include "peak_share.hpp"

namespace {

using namespace fedsilo;
using namespace fedsilo::bench;

// The pass of a convolution a benchmark times: forward with ReLU, or backward with or without the input
// gradient (weights and bias always).
enum class ConvPass { Forward, BackwardWithDx, BackwardWithoutDx };

std::size_t paramCount(const Conv2DT<float>& conv) {
  std::size_t np = 0;
  for (const auto& s : conv.paramSpecs()) np += static_cast<std::size_t>(s.size);
  return np;
}

// Times `pass` of `conv` (bound to `params` here) on a batch of random inputs in [0, 1) with `inRows`
// values a sample, after one forward pass that fills the output the backward pass reads.
void timeConvPass(benchmark::State& st, Conv2DT<float>& conv, std::vector<float>& params, int inRows, int batch,
                  ConvPass pass) {
  std::vector<float> grads(params.size());
  conv.bind(params.data(), grads.data());
  conv.reserve(batch);
  const int outRows = conv.outputShape().size();
  std::vector<float> x = randomFloats(static_cast<std::size_t>(inRows) * batch, 2, 0.0f, 1.0f);
  std::vector<float> y(static_cast<std::size_t>(outRows) * batch), dy = randomFloats(y.size(), 3), dx(x.size());
  CMapT<float> xm(x.data(), inRows, batch);
  MapT<float> ym(y.data(), outRows, batch), dxm(dx.data(), inRows, batch);
  conv.forward(xm, ym, true);
  for (auto _ : st) {
    if (pass == ConvPass::Forward)
      conv.forward(xm, ym, true);
    else
      conv.backward(xm, CMapT<float>(y.data(), outRows, batch), CMapT<float>(dy.data(), outRows, batch),
                    pass == ConvPass::BackwardWithDx ? &dxm : nullptr);
    benchmark::ClobberMemory();
  }
}

// Conv2D at the W2 and PFL shapes. Args: inC, H (= W), outC, batch, op (0 forward, 1 backward with dx,
// 2 backward without dx: conv1 is the first layer), chunk (im2col chunk cap in values; 0 = default),
// bf16 (1: train.precision = bf16, nn/bf16.hpp; an error where the CPU lacks it).
void BM_Conv2D(benchmark::State& st) {
  const int inC = static_cast<int>(st.range(0)), hw = static_cast<int>(st.range(1)),
            outC = static_cast<int>(st.range(2));
  const int batch = static_cast<int>(st.range(3)), op = static_cast<int>(st.range(4));
  const bool bf16 = st.range(6) != 0;
  if (bf16 && !bf16Missing().empty()) return st.SkipWithError(bf16Missing().c_str());
  selectBf16(bf16);
  Conv2DT<float> conv(inC, hw, hw, outC, 5, 1, 2);
  selectBf16(false);
  if (st.range(5) > 0) conv.setMaxChunkElems(st.range(5));
  std::vector<float> params = randomFloats(paramCount(conv), 1);
  timeConvPass(st, conv, params, inC * hw * hw, batch,
               op == 0 ? ConvPass::Forward : (op == 1 ? ConvPass::BackwardWithDx : ConvPass::BackwardWithoutDx));
  const double fwd = 2.0 * outC * inC * 25.0 * hw * hw * batch;
  setFlops(st, op == 0 ? fwd : (op == 1 ? 2.0 * fwd : fwd));
}
// The five 3x3, padding-2 convolutions of cnn_playerfl_cifar at its batch of 32 (bench/compare_torch_steps.sh),
// each pass on its own as a share of the FMA peak: Args layer (1-5), op (0 forward + ReLU, 1 weight and
// bias gradient, 2 weight + input gradient: the difference of 2 and 1 is the input gradient).
void BM_CifarConv(benchmark::State& st) {
  struct Shape3 {
    int inC, side, outC;
  };
  static const Shape3 kLayers[] = {{3, 32, 64}, {64, 34, 128}, {128, 18, 256}, {256, 20, 512}, {512, 11, 512}};
  const Shape3 s = kLayers[st.range(0) - 1];
  const int op = static_cast<int>(st.range(1)), batch = 32;
  Conv2DT<float> conv(s.inC, s.side, s.side, s.outC, 3, 1, 2);
  std::vector<float> params = randomFloats(paramCount(conv), 1, -0.05f, 0.05f);
  timeConvPass(st, conv, params, s.inC * s.side * s.side, batch,
               op == 0 ? ConvPass::Forward : (op == 2 ? ConvPass::BackwardWithDx : ConvPass::BackwardWithoutDx));
  const double fwd = 2.0 * s.outC * s.inC * 9.0 * (s.side + 2) * (s.side + 2) * batch;
  setFlopsAndShare(st, op == 2 ? 2.0 * fwd : fwd);
}
BENCHMARK(BM_CifarConv)
    ->Name("CifarConv")
    ->ArgNames({"layer", "op"})
    ->ArgsProduct({{1, 2, 3, 4, 5}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond);

// The gather GEMM kernels alone (nn/kernel_table.hpp) on the convolution shapes of the presets: the
// positions of `samples` images of side x side (5x5 taps, pad 2) against a weight matrix with rows
// `ldw` floats apart (0: outC; ConvDirect pads it, see conv2d_direct.cpp), from L2-resident buffers.
struct GatherGemmOperands {
  int n, K, C, ldw;
  std::vector<float> x, wt, z;
  std::vector<std::int32_t> rowBase, tap;
  GatherGemmOperands(int samples, int side, int inC, int outC, int stride)
      : n(samples * side * side), K(inC * 25), C(outC), ldw(stride > 0 ? stride : outC) {
    const int wp = side + 4, plane = wp * wp;
    x = randomFloats(static_cast<std::size_t>(samples) * inC * plane, 1);
    wt = randomFloats(static_cast<std::size_t>(K) * ldw, 2);
    z = randomFloats(static_cast<std::size_t>(n) * ldw, 3);
    for (int i = 0; i < n; ++i) {
      const int b = i / (side * side), p = i % (side * side);
      rowBase.push_back(b * inC * plane + (p / side) * wp + p % side);
    }
    for (int k = 0; k < K; ++k) tap.push_back((k / 25) * plane + (k % 25 / 5) * wp + k % 5);
  }
};

// Args: samples, side, inC, outC, ldw, op (0 gemm: z = P wt, 1 wgrad: wt = P^T z).
void BM_ConvGemm(benchmark::State& st) {
  GatherGemmOperands g(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)), static_cast<int>(st.range(2)),
                       static_cast<int>(st.range(3)), static_cast<int>(st.range(4)));
  const bool wgrad = st.range(5) != 0;
  const auto& kc = kernels::active().conv;
  for (auto _ : st) {
    if (wgrad)
      kc.wgrad(g.x.data(), g.rowBase.data(), g.n, g.tap.data(), g.K, g.z.data(), g.ldw, g.C, g.wt.data(), g.ldw, false,
               nullptr);
    else
      kc.gemm(g.x.data(), g.rowBase.data(), g.n, g.tap.data(), g.K, g.wt.data(), g.ldw, g.C, g.z.data(), g.ldw, nullptr,
              5);
    benchmark::ClobberMemory();
  }
  setFlops(st, 2.0 * g.n * g.K * g.C);
}
// ConvDirect's chunks at batch 32 (W2) and 128 (PFL): W2 conv2 3 samples of 14x14, 32 -> 64; PFL conv1 1 sample
// of 28x28, 1 -> 64, conv2 1 of 14x14, 64 -> 128, conv3 3 of 7x7, 128 -> 256; the input gradients' GEMMs
// of PFL conv2 (128 -> 64) and conv3 (256 -> 128), each at the plain and the padded weight stride; W2's
// 32-channel products (conv2's input gradient, conv1); PFL conv3 in chunks of 2 and 6 samples.
void ConvGemmShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"samples", "side", "inC", "outC", "ldw", "wgrad"});
  for (long op : {0, 1})
    for (auto s : std::vector<std::vector<long>>{{3, 14, 32, 64, 0},
                                                 {3, 14, 32, 64, 80},
                                                 {1, 28, 1, 64, 0},
                                                 {1, 14, 64, 128, 0},
                                                 {1, 14, 64, 128, 144},
                                                 {3, 7, 128, 256, 0},
                                                 {3, 7, 128, 256, 272},
                                                 {1, 14, 128, 64, 0},
                                                 {3, 7, 256, 128, 0},
                                                 {3, 7, 256, 128, 144},
                                                 {3, 14, 64, 32, 0},
                                                 {1, 28, 1, 32, 0},
                                                 {2, 7, 128, 256, 272},
                                                 {6, 7, 128, 256, 272}})
      b->Args({s[0], s[1], s[2], s[3], s[4], op});
}
BENCHMARK(BM_ConvGemm)->Name("ConvGemm")->Apply(ConvGemmShapes)->Unit(benchmark::kMicrosecond);

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
    // cnn_playerfl's three layers at its batch of 128 (conv1 is a first layer: no input gradient).
    ->Args({1, 28, 64, 128, 0, 0, 0})
    ->Args({1, 28, 64, 128, 2, 0, 0})
    ->Args({64, 14, 128, 128, 0, 0, 0})
    ->Args({64, 14, 128, 128, 1, 0, 0})
    ->Args({128, 7, 256, 128, 0, 0, 0})
    ->Args({128, 7, 256, 128, 1, 0, 0})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
#endif
