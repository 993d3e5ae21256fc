// The transformer_playerfl layers at the PLayer-FL authors' width (d = 768, 119 tokens, as their
// Sentiment model): every GEMM shape the layers run, through nn/packed_gemm.hpp and, for the ratio, Eigen's GEBP (nn/gemm.hpp) (group TransformerGemm/),
// and the self-attention and feed-forward layers' forward + backward (group TransformerLayer/), as
// GFLOP/s over CPU time, and as `peak_share`, the share of one core's FP32 FMA peak measured in
// the same process (bench/peak_share.hpp), also in CPU time:
//   fedsilo_bench --benchmark_filter=Transformer
#include "bench_common.hpp"
#include "peak_share.hpp"
#include "nn/feed_forward.hpp"
#include "nn/gemm.hpp"
#include "nn/packed_gemm.hpp"
#include "nn/self_attention.hpp"

namespace {

using namespace fedsilo;
using namespace fedsilo::bench;

constexpr int kDim = 768, kTokens = 119, kBatch = 8;  // 952 token columns per batch

// One GEMM C (m x n) = op(A) op(B), k deep, with the layers' operand orders: `forward` products read
// the row-major weight transposed (GemmOp::T, N); `weight gradients` multiply by a transposed
// activation (N, T); `input gradients` are plain (N, N). `impl`: 1 the layers' PackedGemm
// (nn/packed_gemm.hpp), 0 Eigen's GEBP through GemmWorkspace (what the layers ran before), for the ratio.
template <class Workspace>
void runGemm(benchmark::State& st, Workspace& ws) {
  const Index m = st.range(0), n = st.range(1), k = st.range(2);
  const auto kind = static_cast<int>(st.range(3));
  const GemmOp opA = kind == 0 ? GemmOp::T : GemmOp::N, opB = kind == 1 ? GemmOp::T : GemmOp::N;
  const std::vector<float> a = randomFloats(static_cast<std::size_t>(m * k), 1), b = randomFloats(k * n, 2);
  std::vector<float> c(static_cast<std::size_t>(m * n));
  ws.reserve(m, n, k);
  const Index lda = opA == GemmOp::T ? k : m, ldb = opB == GemmOp::T ? n : k;
  for (auto _ : st) {
    ws.run(opA, opB, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), m);
    benchmark::DoNotOptimize(c.data());
  }
  setFlopsAndShare(st, 2.0 * m * n * k);
}

void BM_TransformerGemm(benchmark::State& st) {
  if (st.range(4) == 1) {
    PackedGemm<float> ws;
    runGemm(st, ws);
  } else {
    GemmWorkspace<float> ws;
    runGemm(st, ws);
  }
}

void TransformerGemmShapes(benchmark::internal::Benchmark* b) {
  const long d = kDim, tb = static_cast<long>(kTokens) * kBatch;
  b->ArgNames({"m", "n", "k", "kind", "impl"});
  for (long impl : {1, 0}) b->Args({3 * d, tb, d, 0, impl});      // q, k, v projections
  for (long impl : {1, 0}) b->Args({d, tb, d, 0, impl});          // output projection
  for (long impl : {1, 0}) b->Args({4 * d, tb, d, 0, impl});      // feed-forward up
  for (long impl : {1, 0}) b->Args({d, tb, 4 * d, 0, impl});      // feed-forward down
  for (long impl : {1, 0}) b->Args({d, 3 * d, tb, 1, impl});      // dW_qkv
  for (long impl : {1, 0}) b->Args({d, 4 * d, tb, 1, impl});      // dW_1
  for (long impl : {1, 0}) b->Args({d, tb, 3 * d, 2, impl});      // dx through W_qkv
  for (long impl : {1, 0}) b->Args({4 * d, tb, d, 2, impl});      // dL/dh through W_2
}

template <typename Layer>
void runLayer(benchmark::State& st, Layer& layer, double flops) {
  Index n = 0;
  for (const auto& s : layer.paramSpecs()) n += s.size;
  std::vector<float> params = randomFloats(static_cast<std::size_t>(n), 3, -0.03f, 0.03f), grads(params.size());
  layer.bind(params.data(), grads.data());
  layer.reserve(kBatch);
  const Index rows = static_cast<Index>(kDim) * kTokens;
  const std::vector<float> x = randomFloats(static_cast<std::size_t>(rows * kBatch), 4), dy = randomFloats(x.size(), 5);
  std::vector<float> y(x.size()), dx(x.size());
  CMapT<float> xm(x.data(), rows, kBatch), dym(dy.data(), rows, kBatch);
  MapT<float> ym(y.data(), rows, kBatch), dxm(dx.data(), rows, kBatch);
  for (auto _ : st) {
    layer.forward(xm, ym, true);
    layer.backward(xm, CMapT<float>(y.data(), rows, kBatch), dym, &dxm);
    benchmark::DoNotOptimize(dx.data());
  }
  setFlopsAndShare(st, flops);
}

// FLOPs of forward + backward: every product three times (forward, weight gradient, input gradient).
void BM_TransformerAttention(benchmark::State& st) {
  SelfAttentionT<float> att(kDim, kTokens, nullptr);
  const double d = kDim, T = kTokens, tb = T * kBatch;
  runLayer(st, att, 3 * (2 * 4 * d * d * tb + 2 * 2 * T * T * d * kBatch));
}

void BM_TransformerFeedForward(benchmark::State& st) {
  FeedForwardT<float> ff(kDim, 4 * kDim, kTokens);
  const double d = kDim, tb = static_cast<double>(kTokens) * kBatch;
  runLayer(st, ff, 3 * 2 * 2 * d * 4 * d * tb);
}

}  // namespace

BENCHMARK(BM_TransformerGemm)->Name("TransformerGemm")->Apply(TransformerGemmShapes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TransformerAttention)->Name("TransformerLayer/attention")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TransformerFeedForward)->Name("TransformerLayer/feed_forward")->Unit(benchmark::kMillisecond);
